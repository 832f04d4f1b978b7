/**
 * Sites in real Chromium against the real bridge and a real Core: a site with a live session is listed, full access
 * is turned on only after the confirm step (seen in settings.json) and off again, a typed origin is added, and a bad
 * one is refused at its field with nothing written. A site's policy is edited in its dialog (a bad limit refused at
 * its field, as is one allowing no provider), saved to Core (site-policies.json, and what the host role, the
 * extension's, reads) and enforced. A save Core refuses (its file cannot be written) keeps the dialog open with Core's
 * coded error and what to do, nothing changed, and goes through once the disk takes it.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import type { Origin } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { deskForFile, ORIGIN, open } from "./harness.ts"

const desk = deskForFile()
const fullAccess = async () => JSON.parse((await desk().settingsFile()) || "{}").fullAccessOrigins ?? []

describe("Sites", () => {
  it("says so when no site has full access or a session, and refuses a bad origin at its field", async () => {
    const { page } = desk()
    await open(desk(), "Sites")
    await expect.poll(() => page.locator(".state.empty").textContent()).toContain("No site has full access")
    const before = await desk().settingsFile()
    await page.locator("#new-origin").fill("example.com/path")
    await page.getByRole("button", { name: "Add", exact: true }).click()
    await expect.poll(() => page.locator("#new-origin-error").textContent()).toContain("Not an origin")
    expect(await page.locator("tr[data-origin]").count()).toBe(0)
    await desk().shot("sites-bad-origin")
    expect(await desk().settingsFile()).toBe(before)
  })

  it("lists a site with a live session, turns full access on after the confirm and off again", async () => {
    const { page } = desk()
    const host = await desk().host()
    await Effect.runPromise(host["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } }))
    await open(desk(), "Sites")
    const row = page.locator(`tr[data-origin="${ORIGIN}"]`)
    await expect.poll(() => row.locator("td").nth(1).textContent()).toBe("1")
    await row.getByRole("button", { name: "Allow full access…" }).click()
    const dialog = page.getByRole("alertdialog")
    await expect.poll(() => dialog.textContent()).toContain("without their CLI's sandbox")
    await desk().shot("sites-confirm")
    await dialog.getByRole("button", { name: "Cancel" }).click()
    expect(await fullAccess()).toEqual([])
    await row.getByRole("button", { name: "Allow full access…" }).click()
    await dialog.getByRole("button", { name: "Give full access" }).click()
    await expect.poll(fullAccess).toEqual([ORIGIN])
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Full access")
    await desk().shot("sites-full-access")
    await row.getByRole("button", { name: "Turn off full access" }).click()
    await expect.poll(fullAccess).toEqual([])
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Sandboxed")
  })

  it("adds a typed origin, forgiving a trailing slash, and gives it full access", async () => {
    const { page } = desk()
    await open(desk(), "Sites")
    await page.locator("#new-origin").fill("https://tools.example.com/")
    await page.locator("#new-origin").press("Enter")
    const row = page.locator('tr[data-origin="https://tools.example.com"]')
    await row.waitFor()
    await row.getByRole("button", { name: "Allow full access…" }).click()
    await page.getByRole("alertdialog").getByRole("button", { name: "Give full access" }).click()
    await expect.poll(fullAccess).toContain("https://tools.example.com")
    await desk().shot("sites-added")
  })

  it("edits a site's policy: a bad limit at its field, then saved to Core, which enforces it", async () => {
    const { page } = desk()
    const policies = async () =>
      JSON.parse(await readFile(path.join(desk().home, "site-policies.json"), "utf8").catch(() => "{}"))
    await open(desk(), "Sites")
    await page.locator("#new-origin").fill("https://policy.example.com")
    await page.locator("#new-origin").press("Enter")
    const row = page.locator('tr[data-origin="https://policy.example.com"]')
    await expect.poll(() => row.locator(".policy-summary").textContent()).toContain("Any provider")
    await row.getByRole("button", { name: "Edit policy…" }).click()
    const dialog = page.getByRole("dialog")
    await dialog.locator("input[name=any-provider]").setChecked(false)
    await dialog.getByRole("button", { name: "Save policy" }).click()
    await expect.poll(() => page.locator("#policy-providers-error").textContent()).toContain("at least one provider")
    await desk().shot("sites-policy-no-provider")
    await dialog.locator('input[name=provider][value="scripted"]').setChecked(true)
    await dialog.locator("input[name=paths]").setChecked(false)
    await dialog.locator("#policy-max").fill("0")
    await dialog.getByRole("button", { name: "Save policy" }).click()
    await expect.poll(() => page.locator("#policy-max-error").textContent()).toContain("from 1 to 1000")
    await desk().shot("sites-policy-invalid")
    expect(await policies()).toEqual({})
    await dialog.locator("#policy-max").fill("2")
    await dialog.getByRole("button", { name: "Save policy" }).click()
    const saved = { allowedProviders: ["scripted"], allowWorkspacePaths: false, maxLiveSessions: 2 }
    await expect.poll(policies).toEqual({ "https://policy.example.com": saved })
    await expect.poll(() => dialog.count()).toBe(0)
    await expect.poll(() => row.locator(".policy-summary").textContent()).toContain("at most 2 live sessions")
    await desk().shot("sites-policy")
    const host = await desk().host()
    const origin = "https://policy.example.com" as Origin
    expect(await Effect.runPromise(host["origin.get_policy"]({ origin }))).toEqual(saved)
    const refused = await Effect.runPromise(
      Effect.flip(host["session.create"]({ origin, input: { provider: "ollama" } }))
    )
    expect("code" in refused ? refused.code : refused).toBe("POLICY_PROVIDER_NOT_ALLOWED")
  })

  it("keeps the dialog open with Core's error when Core cannot save the policy, and saves once it can", async () => {
    const { page } = desk()
    const file = path.join(desk().home, "site-policies.json")
    const before = await readFile(file, "utf8").catch(() => "")
    await open(desk(), "Sites")
    await page.locator("#new-origin").fill("https://refused.example.com")
    await page.locator("#new-origin").press("Enter")
    const row = page.locator('tr[data-origin="https://refused.example.com"]')
    await row.getByRole("button", { name: "Edit policy…" }).click()
    const dialog = page.getByRole("dialog")
    await dialog.locator("input[name=paths]").setChecked(false)
    // A directory where Core keeps the file: its read and its atomic rename over it both fail.
    await rm(file, { force: true })
    await mkdir(file)
    try {
      await dialog.getByRole("button", { name: "Save policy" }).click()
      const note = dialog.locator(".error-note")
      await expect.poll(() => note.textContent()).toContain("STORAGE_UNAVAILABLE")
      expect(await note.textContent()).toContain("a folder is where a file should be")
      expect(await note.locator(".todo").textContent()).toBe("Nothing was changed. Try again.")
      expect(await dialog.count()).toBe(1)
      expect(await dialog.getByRole("button", { name: "Save policy" }).isEnabled()).toBe(true)
      await desk().shot("sites-policy-refused")
    } finally {
      await rm(file, { recursive: true, force: true })
    }
    if (before !== "") await writeFile(file, before)
    await dialog.getByRole("button", { name: "Save policy" }).click()
    await expect.poll(() => dialog.count()).toBe(0)
    const saved = JSON.parse(await readFile(file, "utf8"))["https://refused.example.com"]
    expect(saved).toEqual({ allowWorkspacePaths: false })
  })
})
