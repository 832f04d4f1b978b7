/**
 * About/Health in real Chromium against the real bridge and a real Core: every part's version, PEDELEC_HOME and
 * where the logs are; the native host of a detected browser missing → Register → registered (the manifest written
 * where that browser reads it, pointing at the launcher); a stale manifest (another install's launcher) → Repair →
 * registered; the self-test's hops run from here against the real parts: with no browser registered the native host
 * hop fails saying to register (the others pass), and once one is registered every hop passes with its latency, the
 * host started from the manifest as Chrome would. The browsers are a temp user home's (harness.ts).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import type { Page } from "playwright-core"
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
    expect(await page.locator('[data-part="self-test"] .command code').textContent()).toBe("npm start -- --self-test")
    await desk().shot("health-no-browser")
  })

  it("runs the self-test with no browser registered: the native host hop fails saying what to do", async () => {
    const { page } = desk()
    await open(desk(), "About")
    const hops = await runSelfTest(page)
    expect(hops).toHaveLength(4)
    const host = page.locator('tr[data-hop="Native host answers"]')
    expect(await host.getAttribute("class")).toContain("failed")
    expect(await host.textContent()).toContain("NATIVE_HOST_UNAVAILABLE")
    expect(await host.locator(".todo").textContent()).toBe(
      "Register the native host for your browser above, then run the self-test again."
    )
    for (const name of ["Core answers", "Providers found", "pedelec-cli reaches Core"]) {
      expect(await page.locator(`tr[data-hop="${name}"]`).getAttribute("class")).toContain("passed")
    }
    await page.locator('[data-part="self-test"]').scrollIntoViewIfNeeded()
    await desk().shot("health-self-test-failed")
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

  it("runs the self-test with the native host registered: every hop passes with its latency", async () => {
    const { page } = desk()
    await open(desk(), "About")
    await expect.poll(() => page.locator('tr[data-browser="chromium"] .badge').textContent()).toBe("Registered")
    const hops = await runSelfTest(page)
    expect(hops.map((hop) => hop.name)).toEqual(NAMES)
    for (const hop of hops) {
      expect(hop.passed, `${hop.name}: ${hop.detail}`).toBe(true)
      expect(hop.ms).toBeGreaterThan(0)
      expect(hop.latency).toMatch(/^\d+\.\d ms$/)
    }
    expect(hops[1]?.detail).toContain("chromium's launcher relayed session.list to Core")
    expect(hops[1]?.detail).toContain("exited 0")
    expect(hops[2]?.detail).toMatch(/^\d+ of \d+ ready: .*scripted/)
    expect(await page.locator('[data-part="self-test"] .summary').textContent()).toMatch(/^All 4 hops passed in/)
    await page.locator('[data-part="self-test"]').scrollIntoViewIfNeeded()
    await desk().shot("health-self-test")
  })
})

const NAMES = ["Core answers", "Native host answers", "Providers found", "pedelec-cli reaches Core"]

/** Presses Run self-test, waits for the table of hops, and reads each row as the user sees it. */
const runSelfTest = async (page: Page) => {
  const part = page.locator('[data-part="self-test"]')
  await part.getByRole("button", { name: "Run self-test" }).click()
  await part.locator(".summary").waitFor({ timeout: 30_000 })
  const rows = await part.locator("tr.hop").all()
  return Promise.all(
    rows.map(async (row) => {
      const latency = (await row.locator("td.ms").textContent()) ?? ""
      return {
        name: (await row.getAttribute("data-hop")) ?? "",
        passed: ((await row.getAttribute("class")) ?? "").includes("passed"),
        ms: Number.parseFloat(latency),
        latency,
        detail: (await row.locator("td.wrap").textContent()) ?? ""
      }
    })
  )
}
