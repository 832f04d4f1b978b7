/**
 * The loopback transport and the bridge's refusals, against a real Core: no token or a wrong one is 403 with a coded
 * body, a foreign Host is refused, a message that is not a DesktopLink request is INVALID_INPUT and reaches nothing;
 * and Core stopped under the open window shows the reconnecting banner over the last screen (never a blank window),
 * then recovers by itself once a Core runs for the home again, a new one with a new launch secret.
 */
import { LOOPBACK } from "@pedelec/contracts/link/DesktopLink"
import { describe, expect, it } from "vitest"
import { deskForFile, open } from "./harness.ts"

const desk = deskForFile()

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`http://127.0.0.1:${desk().loopback.port}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

const status = { method: "desktop.status", params: {} }

describe("the loopback transport", () => {
  it("refuses a call or a stream without the run's token, 403 with UNAUTHORIZED", async () => {
    for (const headers of [{}, { [LOOPBACK.tokenHeader]: "x".repeat(desk().loopback.token.length) }]) {
      for (const path of [LOOPBACK.call, LOOPBACK.watch]) {
        const response = await post(path, status, headers)
        expect(response.status).toBe(403)
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED")
      }
    }
    const token = { [LOOPBACK.tokenHeader]: desk().loopback.token }
    const ok = (await (await post(LOOPBACK.call, status, token)).json()) as { ok: boolean; result: { pid: number } }
    expect(ok.ok).toBe(true)
    expect(ok.result.pid).toBe(desk().core().info.pid)
  })

  it("answers what is not a desktop request INVALID_INPUT, and an unknown method too", async () => {
    const token = { [LOOPBACK.tokenHeader]: desk().loopback.token }
    for (const body of [
      "garbage",
      { method: "desktop.nope", params: {} },
      { method: "desktop.session.end", params: { sessionId: 7 } }
    ]) {
      const answer = (await (await post(LOOPBACK.call, body, token)).json()) as { ok: boolean; error: { code: string } }
      expect(answer.ok).toBe(false)
      expect(answer.error.code).toBe("INVALID_INPUT")
    }
  })

  it("shows reconnecting while Core is gone, and recovers when a Core runs again", async () => {
    const { page } = desk()
    await open(desk(), "About")
    const pid = desk().core().info.pid
    await expect.poll(() => page.locator("dd", { hasText: `pid ${pid}` }).count()).toBe(1)
    await desk().stopCore()
    await page.getByRole("button", { name: "Sessions", exact: true }).click()
    const banner = page.locator('.banner[data-state="reconnecting"]')
    await banner.waitFor({ timeout: 5_000 })
    expect(await banner.textContent()).toContain("CORE_RUNTIME_UNAVAILABLE")
    expect(await page.locator('[data-screen="sessions"]').count()).toBe(1)
    await desk().shot("reconnecting")
    await desk().startCore()
    await banner.waitFor({ state: "detached", timeout: 10_000 })
    await page.getByRole("button", { name: "About", exact: true }).click()
    const next = desk().core().info.pid
    await expect.poll(() => page.locator("dd", { hasText: `pid ${next}` }).count()).toBe(1)
    await desk().shot("about")
  })
})
