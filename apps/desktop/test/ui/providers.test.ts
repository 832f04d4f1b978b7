/**
 * Providers in real Chromium against the real bridge and a real Core: every provider Core knows is listed with its
 * status and where it was found, a missing one with Core's install command as a copyable chip, Rescan asks Core again, and the default
 * provider chosen here lands in settings.json.
 */
import { describe, expect, it } from "vitest"
import { deskForFile, open } from "./harness.ts"

const desk = deskForFile()

describe("Providers", () => {
  it("lists every provider with its status, and a missing one with its install command to copy", async () => {
    const { page } = desk()
    await open(desk(), "Providers")
    const cards = page.locator("li.provider")
    await expect.poll(() => cards.count()).toBeGreaterThanOrEqual(7)
    const scripted = page.locator('li.provider[data-provider="scripted"]')
    await expect.poll(() => scripted.locator(".badge.ok").textContent()).toBe("Ready")
    // Where the copy sessions start was found, as an absolute path to copy.
    const location = scripted.locator('[data-part="location"] span')
    expect(await location.textContent()).toMatch(/^\/.*scripted/)
    expect(await scripted.locator("dt", { hasText: "Path" }).count()).toBe(1)
    const codex = page.locator('li.provider[data-provider="codex"]')
    if ((await codex.locator(".badge.bad").count()) === 1) {
      const install = codex.locator(".command", { hasText: "npm install -g @openai/codex" })
      await expect.poll(() => install.getByRole("button", { name: "Copy" }).count()).toBe(1)
    }
    await desk().shot("providers")
  })

  it("rescans, and stores the default provider chosen here in settings.json", async () => {
    const { page } = desk()
    await open(desk(), "Providers")
    await page.getByRole("button", { name: "Rescan" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Rescan" }).isEnabled()).toBe(true)
    await page.locator("#default-provider").selectOption("scripted")
    await expect.poll(async () => JSON.parse((await desk().settingsFile()) || "{}").defaultProvider).toBe("scripted")
    await expect
      .poll(() => page.locator('li.provider[data-provider="scripted"] .badge.info').textContent())
      .toBe("Default")
    await desk().shot("providers-default")
  })
})
