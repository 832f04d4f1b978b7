/**
 * Effort profiles in real Chromium against the real bridge and a real Core: a token outside the adapter's allow-list
 * is refused at its field with Core's reason and nothing is written (Save stays off); an allowed one is previewed and
 * lands in settings.json's effortProfiles; reset to defaults takes the level out of settings again.
 */
import { describe, expect, it } from "vitest"
import { deskForFile, open } from "./harness.ts"

const desk = deskForFile()

const openProvider = async (name: string) => {
  const { page } = desk()
  await open(desk(), "Effort")
  await page.getByRole("tab", { name, exact: false }).first().click()
  await page.locator('[data-level="high"]').waitFor()
}

describe("Effort profiles", () => {
  it("refuses a token outside the allow-list at its field, with Core's reason, and writes nothing", async () => {
    const { page } = desk()
    const before = await desk().settingsFile()
    await openProvider("Claude")
    await page.locator("#argv-high").fill("--effort=high --dangerously-skip-permissions")
    const error = page.locator("#argv-high-error")
    await expect.poll(() => error.textContent()).toContain("EFFORT_LEVEL_INVALID")
    await expect.poll(() => error.textContent()).toContain('"--dangerously-skip-permissions" is not allowed')
    expect(await error.textContent()).toContain("Remove it, or use only arguments matching the patterns above.")
    await expect.poll(() => page.getByRole("button", { name: "Save" }).isDisabled()).toBe(true)
    await desk().shot("effort-refused")
    expect(await desk().settingsFile()).toBe(before)
  })

  it("previews an allowed profile, saves it to settings.json, and resets it to the default", async () => {
    const { page } = desk()
    await openProvider("Claude")
    const high = page.locator('[data-level="high"]')
    await page.locator("#argv-high").fill("--effort=low")
    await page.locator("#model-high").fill("claude-opus-4")
    await expect
      .poll(() => high.locator(".preview-line").first().textContent())
      .toBe("--model claude-opus-4 --effort=low")
    await desk().shot("effort-custom")
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.locator(".save-bar").count()).toBe(0)
    const stored = JSON.parse(await desk().settingsFile())
    expect(stored.effortProfiles.claude.high).toEqual({ argv: ["--effort=low"], env: {}, model: "claude-opus-4" })
    await high.getByRole("button", { name: "Reset to default" }).click()
    await expect.poll(() => page.locator("#argv-high").inputValue()).toBe("--effort=high")
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(async () => JSON.parse(await desk().settingsFile()).effortProfiles.claude).toBeUndefined()
    await desk().shot("effort-reset")
  })

  it("says so for a provider without an effort knob", async () => {
    const { page } = desk()
    await open(desk(), "Effort")
    await page.getByRole("tab", { name: "Gemini" }).click()
    await expect.poll(() => page.locator('[data-no-knob="gemini"] h2').textContent()).toContain("has no effort setting")
    expect(await page.locator("#argv-high").count()).toBe(0)
    await desk().shot("effort-no-knob")
  })
})
