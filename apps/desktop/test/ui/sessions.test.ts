/**
 * Sessions in real Chromium against the real bridge and a real Core: the empty state, a session a page creates
 * (through the host role, as its native host would) shows up with its origin, provider and status, one the page
 * ends disappears from the open window within 1 s, and End here ends it in Core.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { deskForFile, ORIGIN, open } from "./harness.ts"

const desk = deskForFile()

const createSession = async () => {
  const host = await desk().host()
  const session = await Effect.runPromise(host["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } }))
  return { host, sessionId: session.sessionId }
}

describe("Sessions", () => {
  it("says so when no session runs", async () => {
    const { page } = desk()
    await open(desk(), "Sessions")
    await expect.poll(() => page.locator(".state.empty").textContent()).toContain("No live sessions")
    await desk().shot("sessions-empty")
  })

  it("shows a page's session live, and drops it within 1 s of the page ending it", async () => {
    const { page } = desk()
    await open(desk(), "Sessions")
    const { host, sessionId } = await createSession()
    const row = page.locator(`tr[data-session="${sessionId}"]`)
    await row.waitFor({ timeout: 5_000 })
    expect(await row.locator("td.origin").textContent()).toBe(ORIGIN)
    expect(await row.textContent()).toContain("scripted")
    await createSession()
    await expect.poll(() => page.locator("tr[data-session]").count()).toBe(2)
    await desk().shot("sessions-live")
    const ended = Date.now()
    await Effect.runPromise(host["session.end"]({ origin: ORIGIN, sessionId }))
    await row.waitFor({ state: "detached", timeout: 1_000 })
    expect(Date.now() - ended).toBeLessThan(1_000)
  })

  it("ends a session with End, in Core too", async () => {
    const { page } = desk()
    await open(desk(), "Sessions")
    const { host, sessionId } = await createSession()
    const row = page.locator(`tr[data-session="${sessionId}"]`)
    await row.getByRole("button", { name: "End" }).click()
    await row.waitFor({ state: "detached", timeout: 2_000 })
    const live = await Effect.runPromise(host["session.list"]({}))
    expect(live.map((session) => session.sessionId)).not.toContain(sessionId)
  })
})
