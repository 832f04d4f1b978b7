/**
 * The event monitor in real Chromium against the real bridge and a real Core running the scripted agent: a live
 * turn's events in order as they happen (reached from a session's Events action), an ended session's history read
 * from the log after the window reloaded, a tool call paired with its result and the time between, filters and
 * search narrowing the list, the live tail followed again after Core restarted under the open monitor, copy-as-JSON onto the clipboard, and 10,000 events: the time to first paint and the
 * rows in the DOM while scrolling to the end (both printed). Sessions and turns are driven through the host role,
 * as a page's native host would; a subscriber claims the tools and answers each call after ANSWER_MS.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { deskForFile, ORIGIN, open } from "./harness.ts"

const desk = deskForFile()
const OTHER = "https://other.example" as Origin
const ANSWER_MS = 150

const lookup = {
  name: "lookup",
  description: "Finds a word in the page's dictionary.",
  argsSchema: { type: "object" as const, properties: { word: { type: "string" as const } }, required: ["word"] },
  timeoutMs: 30_000,
  annotations: { readOnly: true }
}

interface Driven {
  readonly host: HostClient
  readonly sessionId: SessionId
  readonly seen: Array<SessionEvent>
  /** Sends a turn and resolves once its turn_completed arrived. */
  readonly turn: (text: string, timeoutMs?: number) => Promise<void>
  readonly end: () => Promise<void>
}

const answering = (host: HostClient, origin: Origin, sessionId: SessionId, seen: Array<SessionEvent>) =>
  host["session.subscribe"]({ origin, sessionId, afterSeq: 0, claimTools: true }).pipe(
    Stream.runForEach((event) =>
      Effect.gen(function* () {
        seen.push(event)
        if (event.type !== "tool_call") return
        yield* Effect.sleep(ANSWER_MS)
        yield* host["tool.submit_result"]({
          origin,
          sessionId,
          toolCallId: event.toolCallId,
          outcome: { ok: true, result: { word: "bike", meaning: "a bicycle" } }
        })
      })
    )
  )

/** A scripted session of `origin` with the `lookup` tool, its events collected and its tool calls answered. */
const drive = async (origin: Origin = ORIGIN): Promise<Driven> => {
  const host = await desk().host()
  const input = { provider: "scripted" as const, autoEndOnDisconnect: false, skills: { guidance: "", tools: [lookup] } }
  const { sessionId } = await Effect.runPromise(host["session.create"]({ origin, input }))
  const seen: Array<SessionEvent> = []
  Effect.runFork(answering(host, origin, sessionId, seen))
  const turn = async (text: string, timeoutMs = 20_000) => {
    const { turnId } = await Effect.runPromise(host["session.send_text"]({ origin, sessionId, text }))
    await expect
      .poll(() => seen.some((e) => e.type === "turn_completed" && e.turnId === turnId), { timeout: timeoutMs })
      .toBe(true)
  }
  const end = async () => {
    await Effect.runPromise(host["session.end"]({ origin, sessionId }))
    await expect.poll(() => seen.at(-1)?.type).toBe("ended")
  }
  return { host, sessionId, seen, turn, end }
}

const rowsOf = (page: Page, sessionId?: string) =>
  page.$$eval(sessionId === undefined ? ".ev" : `.ev[data-session="${sessionId}"]`, (rows) =>
    rows.map((row) => ({ seq: Number(row.dataset.seq), type: row.dataset.type ?? "" }))
  )

// In-page code, as text: this project's types have no DOM.
/** Waits for the monitor's `monitor:first-paint` measure and answers its duration. */
const FIRST_PAINT = `new Promise((resolve) => {
  const look = () => {
    const [measure] = performance.getEntriesByName("monitor:first-paint", "measure")
    if (measure === undefined) setTimeout(look, 20)
    else resolve(measure.duration)
  }
  look()
})`

interface Scrolled {
  readonly maxRows: number
  readonly steps: number
  readonly median: number
  readonly slowest: number
  readonly lastSeq: number
}

/** Scrolls the list from the top to the end, three screens a step, one frame each: rows in the DOM and frame times. */
const SCROLL_TO_END = `(async () => {
  const list = document.querySelector(".vlist")
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
  list.scrollTop = 0
  await frame()
  let maxRows = 0
  const frames = []
  while (list.scrollTop + list.clientHeight < list.scrollHeight - 1) {
    const started = performance.now()
    list.scrollTop += list.clientHeight * 3
    await frame()
    frames.push(performance.now() - started)
    maxRows = Math.max(maxRows, document.querySelectorAll(".vlist-row").length)
  }
  await frame()
  const seqs = [...document.querySelectorAll(".ev")].map((row) => Number(row.dataset.seq))
  const sorted = [...frames].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0
  return { maxRows, steps: frames.length, median, slowest: sorted.at(-1) ?? 0, lastSeq: Math.max(...seqs) }
})()`

const summaryOf = (events: ReadonlyArray<SessionEvent>) => events.map((e) => ({ seq: e.seq, type: e.type }))

describe("Event monitor", () => {
  it("shows a live turn's events in order as they happen, from a session's Events action", async () => {
    const { page } = desk()
    const session = await drive()
    await open(desk(), "Sessions")
    await page.locator(`tr[data-session="${session.sessionId}"]`).getByRole("button", { name: "Events" }).click()
    await page.locator('[data-screen="monitor"][data-state="ready"]').waitFor()
    expect(await page.locator("#mon-session").inputValue()).toBe(session.sessionId)
    const turn = session.turn(script("delta Hello", "sleep 600", "delta  world", "say Hello world"))
    // As it happens: the first delta is on screen while the turn still runs.
    await page.locator('.ev[data-type="chat_delta"]').first().waitFor({ timeout: 5_000 })
    expect(await page.locator('.ev[data-type="turn_completed"]').count()).toBe(0)
    await turn
    // The idle status comes before the completion: wait for the host to see the completion before comparing.
    await expect.poll(() => session.seen.at(-1)?.type).toBe("turn_completed")
    await expect.poll(async () => (await rowsOf(page)).length).toBe(session.seen.length)
    const rows = await rowsOf(page)
    expect(rows).toEqual(summaryOf(session.seen))
    // Text before a sleep is flushed as a chat; `say` streams one delta then its chat.
    expect(rows.map((r) => r.type)).toEqual([
      "status_changed",
      "chat_delta",
      "chat",
      "chat_delta",
      "chat",
      "chat_delta",
      "chat",
      "status_changed",
      "turn_completed"
    ])
    await desk().shot("monitor-live")
    await session.end()
  })

  it("reads an ended session's history from the log, after the window reloaded", async () => {
    const { page } = desk()
    await open(desk(), "Monitor")
    const session = await drive(OTHER)
    await session.turn(script("say from the other site", "say and a second line"))
    await session.end()
    await page.locator(`.ev[data-session="${session.sessionId}"][data-type="ended"]`).waitFor()
    // A fresh window: Core lists no such live session, so what it shows can only come from the log.
    await open(desk(), "Monitor")
    await page.locator("#mon-session").selectOption(session.sessionId)
    expect(await page.locator("#mon-session option:checked").textContent()).toContain("(ended)")
    await expect.poll(async () => (await rowsOf(page)).length).toBe(session.seen.length)
    expect(await rowsOf(page)).toEqual(summaryOf(session.seen))
    await desk().shot("monitor-history")
  })

  it("follows the live tail again after Core restarted under it, without a reload", async () => {
    const { page } = desk()
    await open(desk(), "Monitor")
    const before = await drive()
    await before.turn(script("say before the restart"))
    await page.locator(`.ev[data-session="${before.sessionId}"][data-type="turn_completed"]`).waitFor()
    await desk().stopCore()
    const banner = page.locator('.banner[data-state="reconnecting"]')
    await banner.waitFor({ timeout: 5_000 })
    await desk().shot("monitor-reconnecting")
    await desk().startCore()
    await banner.waitFor({ state: "detached", timeout: 10_000 })
    // A session of the new Core: its events reach the same open monitor, in order, as they happen.
    const after = await drive()
    const turn = after.turn(script("say after the restart", "sleep 400", "say and once more"))
    await page.locator(`.ev[data-session="${after.sessionId}"]`).first().waitFor({ timeout: 5_000 })
    await turn
    await expect.poll(() => after.seen.at(-1)?.type).toBe("turn_completed")
    await expect.poll(async () => (await rowsOf(page, after.sessionId)).length).toBe(after.seen.length)
    expect(await rowsOf(page, after.sessionId)).toEqual(summaryOf(after.seen))
    await after.end()
  })

  it("pairs a tool call with its result and shows how long it took", async () => {
    const { page } = desk()
    const session = await drive()
    await open(desk(), "Monitor")
    await page.locator("#mon-session").selectOption(session.sessionId)
    await session.turn(script('call lookup {"word":"bike"}'))
    const call = session.seen.find((e) => e.type === "tool_call")
    const result = session.seen.find((e) => e.type === "tool_result")
    expect(call !== undefined && result !== undefined).toBe(true)
    const row = page.locator(`.ev[data-type="tool_call"][data-session="${session.sessionId}"]`)
    await expect.poll(() => row.locator(".ev-took").textContent()).toMatch(/^\d+ ms$/)
    const took = Number(await row.locator(".ev-took").getAttribute("data-duration"))
    expect(took).toBe(result!.at - call!.at)
    expect(took).toBeGreaterThanOrEqual(ANSWER_MS)
    await row.click()
    const detail = page.locator(".mon-detail")
    expect(await detail.locator(".mon-pair").textContent()).toContain(`#${result!.seq} tool_result`)
    await desk().shot("monitor-tool-pair")
    await detail.getByRole("button", { name: `#${result!.seq} tool_result`, exact: false }).click()
    await expect.poll(() => detail.getAttribute("data-detail")).toBe(`${session.sessionId}:${result!.seq}`)
    await session.end()
  })

  it("narrows the list by type, session, origin and text", async () => {
    const { page } = desk()
    const mine = await drive()
    const theirs = await drive(OTHER)
    await mine.turn(script("delta streaming ", "say a plain answer"))
    await theirs.turn(script("say the zebra-needle answer"))
    await open(desk(), "Monitor")
    await page.locator('[data-screen="monitor"][data-state="ready"]').waitFor()
    const count = () => page.locator(".mon-count").getAttribute("data-shown").then(Number)
    const total = Number(await page.locator(".mon-count").getAttribute("data-total"))
    await page.getByRole("button", { name: "chat_delta", exact: true }).click()
    await expect.poll(() => page.locator('.ev[data-type="chat_delta"]').count()).toBe(0)
    expect(await count()).toBeLessThan(total)
    await page.locator("#mon-session").selectOption(mine.sessionId)
    await expect.poll(async () => (await rowsOf(page)).every((r) => r.type !== "chat_delta")).toBe(true)
    expect(await rowsOf(page)).toEqual(summaryOf(mine.seen.filter((e) => e.type !== "chat_delta")))
    await page.locator("#mon-session").selectOption("all")
    await page.locator("#mon-origin").selectOption(OTHER)
    await expect.poll(async () => (await page.locator(".ev").all()).length).toBeGreaterThan(0)
    const sessions = await page.$$eval(".ev", (rows) => [...new Set(rows.map((r) => r.dataset.session))])
    expect(sessions.every((id) => id !== mine.sessionId)).toBe(true)
    await page.locator("#mon-origin").selectOption("all")
    await page.locator("#mon-search").fill("zebra-needle")
    await expect.poll(async () => (await rowsOf(page)).map((r) => r.type)).toEqual(["chat", "turn_completed"])
    expect(page.locator(".mon-count")).toBeDefined()
    expect(await page.locator(".mon-count").textContent()).toMatch(/^2 of [\d,]+ events$/)
    await desk().shot("monitor-filtered")
    await page.locator("#mon-search").fill("no event says this")
    await page.locator(".state.empty").getByRole("button", { name: "Clear filters" }).click()
    await expect.poll(count).toBe(total)
    await mine.end()
    await theirs.end()
  })

  it("copies an event as JSON onto the clipboard", async () => {
    const { page } = desk()
    const session = await drive()
    await session.turn(script("say copy me"))
    await open(desk(), "Monitor")
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(page.url()).origin })
    await page.locator("#mon-session").selectOption(session.sessionId)
    const chat = session.seen.find((e) => e.type === "chat")!
    const row = page.locator(`.ev[data-session="${session.sessionId}"][data-seq="${chat.seq}"]`)
    await row.click()
    await row.getByRole("button", { name: "Copy" }).click()
    await expect.poll(() => row.getByRole("button").textContent()).toBe("Copied")
    const copied = await page.evaluate<string>("navigator.clipboard.readText()")
    expect(JSON.parse(copied)).toEqual(chat)
    await desk().shot("monitor-copied")
    await session.end()
  })

  it("shows 10,000 events quickly and keeps the DOM small while scrolling to the end", async () => {
    const { page } = desk()
    const session = await drive()
    // A delta and a chat each: consecutive deltas would be coalesced into far fewer events.
    const says = Array.from({ length: 5_000 }, (_, i) => `say word-${i}`)
    await session.turn(script(...says), 120_000)
    const completed = session.seen.find((e) => e.type === "turn_completed")
    expect(completed?.type === "turn_completed" ? [completed.reason, completed.error?.code] : []).toEqual([
      "completed",
      undefined
    ])
    expect(session.seen.length).toBeGreaterThanOrEqual(10_000)
    await open(desk(), "Monitor")
    await page.locator("#mon-session").selectOption(session.sessionId)
    const firstPaint = await page.evaluate<number>(FIRST_PAINT)
    await expect
      .poll(() => page.locator(".mon-count").getAttribute("data-shown").then(Number))
      .toBe(session.seen.length)
    const scrolled = await page.evaluate<Scrolled>(SCROLL_TO_END)
    // biome-ignore lint/suspicious/noConsole: the figures the issue asks for, printed in the run's output.
    console.log(
      `monitor with ${session.seen.length} events: first paint ${firstPaint.toFixed(0)} ms; ` +
        `at most ${scrolled.maxRows} DOM rows over ${scrolled.steps} scroll steps to the end; ` +
        `frame after a step: median ${scrolled.median.toFixed(1)} ms, slowest ${scrolled.slowest.toFixed(1)} ms`
    )
    expect(scrolled.maxRows).toBeLessThan(100)
    expect(scrolled.lastSeq).toBe(session.seen.at(-1)!.seq)
    await desk().shot("monitor-10000")
    await session.end()
  })
})
