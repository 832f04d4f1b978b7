/**
 * About/Health in real Chromium against the real bridge and a real Core: every part's version, PEDELEC_HOME and
 * where the logs are; the native host of a detected browser missing → Register → registered (the manifest written
 * where that browser reads it, pointing at the launcher); a stale manifest (another install's launcher) → Repair →
 * registered; and the self-test's command to copy. The browsers are a temp user home's (harness.ts).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { describe, expect, it } from "vitest"
import { deskForFile, open } from "./harness.ts"

const desk = deskForFile()
const chromiumDir = () => path.join(desk().nativeHost.homedir, ".config/chromium")
const manifestFile = () => path.join(chromiumDir(), "NativeMessagingHosts/com.pedelec.host.json")

describe("About / Health", () => {
  it("shows every part's version, the home, the logs, no browser yet, and the self-test to copy", async () => {
    const { page } = desk()
    await open(desk(), "About")
    const screen = page.locator('[data-screen="about"]')
    await expect.poll(() => screen.textContent()).toContain("Protocol")
    expect(await screen.textContent()).toContain(desk().home)
    expect(await screen.textContent()).toContain(path.join(desk().home, "logs"))
    const part = page.locator('[data-part="native-host"]')
    await expect.poll(() => part.locator(".state.empty").textContent()).toContain("No browser found")
    expect(await page.locator('[data-part="self-test"] code').textContent()).toBe("npm start -- --self-test")
    await desk().shot("health-no-browser")
  })

  it("registers a detected browser's missing native host, and repairs a stale one", async () => {
    const { page } = desk()
    await mkdir(chromiumDir(), { recursive: true })
    await open(desk(), "About")
    const row = page.locator('tr[data-browser="chromium"]')
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Missing")
    await desk().shot("health-missing")
    await row.getByRole("button", { name: "Register" }).click()
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Registered")
    const manifest = JSON.parse(await readFile(manifestFile(), "utf8"))
    expect(manifest.path).toBe(path.join(desk().nativeHost.launcherDir, "pedelec-native-host"))
    await desk().shot("health-registered")
    await writeFile(manifestFile(), JSON.stringify({ ...manifest, path: "/opt/old-pedelec/pedelec-native-host" }))
    await page.getByRole("button", { name: "Check again" }).click()
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Stale")
    expect(await row.locator(".reason").textContent()).toContain("/opt/old-pedelec/pedelec-native-host")
    await desk().shot("health-stale")
    await row.getByRole("button", { name: "Repair" }).click()
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Registered")
    expect(JSON.parse(await readFile(manifestFile(), "utf8")).path).toBe(manifest.path)
  })
})
