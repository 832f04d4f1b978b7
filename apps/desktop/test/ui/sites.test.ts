/**
 * Sites in real Chromium against the real bridge and a real Core: a site with a live session is listed, full access
 * is turned on only after the confirm step (seen in settings.json) and off again, a typed origin is added, and a bad
 * one is refused at its field with nothing written.
 */
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
})
