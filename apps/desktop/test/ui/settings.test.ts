/**
 * Settings in real Chromium against the real bridge and a real Core: a bad value is shown at its field and nothing
 * is written (the bridge refuses it too, if sent anyway), a good one lands in settings.json, the API key goes to
 * secrets.json and is never shown back, an unreachable Ollama and a wrong key are told apart (Core's own probe
 * against test-kit's Ollama, behind a key check), the model picker is filled from the server, and leaving with
 * unsaved changes asks first.
 */
import { readFile } from "node:fs/promises"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { LOOPBACK } from "@pedelec/contracts/link/DesktopLink"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deskForFile, open } from "./harness.ts"

const desk = deskForFile()
const KEY = "right-key"

/** test-kit's Ollama, behind a bearer-key check as a hosted Ollama would be. */
const keyed = async (upstream: ModelServer) => {
  const server = http.createServer(async (request, response) => {
    if (request.headers.authorization !== `Bearer ${KEY}`) {
      response.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}')
      return
    }
    const answer = await fetch(`${upstream.url}${request.url}`)
    response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

let ollama: ModelServer
let guarded: Awaited<ReturnType<typeof keyed>>
beforeAll(async () => {
  ollama = await startModelServer({ ollamaModels: ["llama3.2", "qwen3:8b"] })
  guarded = await keyed(ollama)
})
afterAll(async () => {
  guarded.server.close()
  await ollama.close()
})

describe("Settings", () => {
  it("shows a bad value at its field, refuses to save it, and leaves settings.json as it was", async () => {
    const { page } = desk()
    await open(desk(), "Settings")
    const before = await desk().settingsFile()
    await page.locator("#ollama-url").fill("not a url")
    await page.locator("#ollama-timeout").fill("0.5")
    await expect.poll(() => page.locator("#ollama-url-error").textContent()).toContain("http(s) URL")
    // What is wrong, then what to do.
    expect(await page.locator("#ollama-url-error").textContent()).toContain("e.g. http://127.0.0.1:11434")
    await expect.poll(() => page.locator("#ollama-timeout-error").isVisible()).toBe(true)
    await expect.poll(() => page.getByRole("button", { name: "Save" }).isDisabled()).toBe(true)
    await desk().shot("settings-invalid")
    // The same value sent to the bridge directly: refused by its decode, nothing forwarded.
    const response = await fetch(`http://127.0.0.1:${desk().loopback.port}${LOOPBACK.call}`, {
      method: "POST",
      headers: { [LOOPBACK.tokenHeader]: desk().loopback.token, "content-type": "application/json" },
      body: JSON.stringify({
        method: "desktop.settings.set",
        params: { settings: { ollama: { baseUrl: "not a url" } } }
      })
    })
    const answer = (await response.json()) as { ok: boolean; error: { code: string } }
    expect(answer.ok).toBe(false)
    expect(answer.error.code).toBe("INVALID_INPUT")
    expect(await desk().settingsFile()).toBe(before)
  })

  it("saves effort, a model and the timeout to settings.json, and the API key only to secrets.json", async () => {
    const { page } = desk()
    await open(desk(), "Settings")
    await page.locator("#model-scripted").fill("scripted-large")
    await page.getByText("high", { exact: true }).click()
    await page.locator("#ollama-timeout").fill("120")
    await page.locator("#ollama-key").fill("sk-secret-1")
    await expect.poll(() => page.getByText("You have unsaved changes.").isVisible()).toBe(true)
    await desk().shot("settings-unsaved")
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.locator(".save-bar").count()).toBe(0)
    const stored = JSON.parse(await desk().settingsFile())
    expect(stored.defaultEffortLevel).toBe("high")
    expect(stored.defaultModels.scripted).toBe("scripted-large")
    expect(stored.ollama.timeoutMs).toBe(120_000)
    expect(await desk().settingsFile()).not.toContain("sk-secret-1")
    expect(await readFile(pathsForHome(desk().home).secretsFile, "utf8")).toContain("sk-secret-1")
    expect(await page.locator("#ollama-key").inputValue()).toBe("")
    expect(await page.locator("#ollama-key").getAttribute("placeholder")).toContain("stored")
    expect(await page.content()).not.toContain("sk-secret-1")
    await desk().shot("settings-saved")
  })

  it("says an Ollama that cannot be reached is OLLAMA_UNAVAILABLE, with what to do", async () => {
    const { page } = desk()
    await open(desk(), "Settings")
    await page.locator("#ollama-url").fill("http://127.0.0.1:9")
    await page.getByRole("button", { name: "Check connection" }).click()
    const note = page.locator(".check-row .error-note")
    await expect.poll(() => note.textContent()).toContain("OLLAMA_UNAVAILABLE:")
    await expect.poll(() => note.textContent()).toContain("Start Ollama")
    await desk().shot("settings-ollama-unreachable")
  })

  it("says a wrong key is OLLAMA_AUTH_FAILED, and with the right one fills the model picker from the server", async () => {
    const { page } = desk()
    await open(desk(), "Settings")
    await page.locator("#ollama-url").fill(guarded.url)
    await page.locator("#ollama-key").fill("wrong-key")
    await page.getByRole("button", { name: "Check connection" }).click()
    await expect.poll(() => page.locator(".check-row .error-note").textContent()).toContain("OLLAMA_AUTH_FAILED:")
    await desk().shot("settings-ollama-wrong-key")
    await page.locator("#ollama-key").fill(KEY)
    await page.getByRole("button", { name: "Check connection" }).click()
    await expect.poll(() => page.locator(".check-ok").textContent()).toContain("2 models")
    await page.locator("select#ollama-model").selectOption("qwen3:8b")
    await desk().shot("settings-ollama-models")
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(async () => JSON.parse(await desk().settingsFile()).ollama.defaultModel).toBe("qwen3:8b")
  })

  it("asks before leaving with unsaved changes", async () => {
    const { page } = desk()
    await open(desk(), "Settings")
    await page.locator("#model-scripted").fill("unsaved-model")
    await page.getByRole("button", { name: "Providers", exact: true }).click()
    await expect.poll(() => page.getByRole("alertdialog").textContent()).toContain("Discard unsaved changes?")
    await desk().shot("settings-leave")
    await page.getByRole("button", { name: "Keep editing" }).click()
    expect(await page.locator("#model-scripted").inputValue()).toBe("unsaved-model")
    await page.getByRole("button", { name: "Providers", exact: true }).click()
    await page.getByRole("alertdialog").getByRole("button", { name: "Discard" }).click()
    await page.locator('[data-screen="providers"]').waitFor()
    expect(await desk().settingsFile()).not.toContain("unsaved-model")
  })
})
