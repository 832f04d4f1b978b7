/**
 * SIGKILL of the browser-side links at random points of turns with tool calls, through the real chain: Debian's
 * Chromium with the built extension, the e2e test page on the real SDK, the native host the browser starts and a
 * real Core with the scripted agent. 20 trials each of killing the native host serving the page's port, and the
 * extension renderer that runs the service worker. A seeded delay after Core accepted the turn picks the point.
 * Nothing but the product recovers: the SDK's reconnect and resubscribe from its last seq. After each trial: the
 * turn completed exactly once, each tool call ran once on the page and reached the agent, seqs strictly increase,
 * what the page saw is Core's log of the session, no process with the session's PEDELEC_THREAD_ID is left, no native
 * host outlives its port, and `run/` holds nothing but Core's own files. One browser, page and Core for the file.
 */
import { chainForFile, cliLines } from "@pedelec/chain/Harness"
import { script } from "@pedelec/providers/scripted/Script"
import { casesOf, faultSeed } from "@pedelec/test-kit/faults/Hostile"
import fc from "fast-check"
import type { Page } from "playwright-core"
import { describe, expect, test } from "vitest"
import {
  coreLog,
  endPageSession,
  extensionRenderers,
  nativeHosts,
  openPageSession,
  type PageView,
  pageProblems,
  pageView,
  sigkill,
  startAcceptedTurn,
  turnCompletedYet
} from "./support/BrowserTurns.ts"
import { record, type Tally, tallier, type Verdict } from "./support/Probe.ts"
import { orphansOf, staleRunFiles } from "./support/Turns.ts"

const TRIALS = 20
const seed = faultSeed()
const TURN = script('call add {"a":1,"b":2}', "delta one", 'call add {"a":3,"b":4}', "say done")
/** How long a turn may take to end after the kill: the SDK's backoff tops out well below it. */
const COMPLETION_WAIT_MS = 12_000

type Target = "native host" | "extension service worker"

const chain = chainForFile({ https: false })
let shared: { readonly page: Page; readonly browserPid: number } | undefined
/** Trials whose kill landed before the page saw the turn's completion (a kill after it probes less). */
let midTurn = 0

/** The file's one page, and Chromium's main process (the parent of the native host the page's port started). */
const pageAndBrowser = async () => {
  if (shared !== undefined) return shared
  const page = await chain().openPage(chain().origins.http)
  const sessionId = await openPageSession(chain(), page, 0)
  await endPageSession(page, sessionId)
  const [host] = await nativeHosts(chain().home)
  if (host === undefined) throw new Error("the page's session started no native host")
  shared = { page, browserPid: host.ppid }
  return shared
}

/** The target's processes, found before the delay so that the kill lands at its point, not after a /proc scan. */
const victimsOf = (target: Target, browserPid: number) =>
  target === "native host" ? nativeHosts(chain().home) : extensionRenderers(browserPid)

/** The turn's own outcome: completed once, each call run once on the page and answered ok to the agent. */
const turnProblems = (view: PageView): Array<string> => {
  const { outcome, seen, calls } = view
  if (outcome === undefined) return [`no completion: sendText unsettled ${COMPLETION_WAIT_MS / 1000} s after the kill`]
  if (!("result" in outcome)) return [`turn failed: ${outcome.failure?.code} ${outcome.failure?.message ?? ""}`]
  const { turnId, reason, text } = outcome.result
  const problems: Array<string> = []
  if (reason !== "completed" || text !== "done") problems.push(`turn ${reason}: "${text}"`)
  const chats = seen.filter((item) => item.kind === "chat" && item.turnId === turnId).map((item) => item.text)
  const lines = cliLines(chats, "add")
  if (lines.length !== 2 || lines.some((line) => line.exit !== 0 || !line.output.ok)) {
    problems.push(`tool call: the agent got ${JSON.stringify(lines).slice(0, 160)}`)
  }
  const runs = Object.values(calls)
  if (runs.some((count) => count !== 1)) problems.push(`tool call: handler runs ${runs.join(",")}`)
  return problems
}

/** Hosts the browser no longer holds: reparented away from Chromium, or more than the page's one port needs. */
const hostOrphans = async (browserPid: number, graceMs = 5_000): Promise<number> => {
  const deadline = Date.now() + graceMs
  while (true) {
    const hosts = await nativeHosts(chain().home)
    const orphans = hosts.filter((host) => host.ppid !== browserPid).length + Math.max(0, hosts.length - 1)
    if (orphans === 0 || Date.now() > deadline) return orphans
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const afterTrial = async (problems: Array<string>, sessionId: string, browserPid: number): Promise<Verdict> => {
  const [orphans, hosts] = await Promise.all([orphansOf(sessionId), hostOrphans(browserPid)])
  if (orphans > 0) problems.push(`orphans: ${orphans} processes of the session`)
  if (hosts > 0) problems.push(`orphans: ${hosts} native hosts`)
  const stale = await staleRunFiles(chain().home)
  if (stale.length > 0) problems.push(`stale in run/: ${stale.join(", ")}`)
  return problems.length === 0
    ? { outcome: "clean", ok: true }
    : { outcome: problems[0]!.split(":")[0]!, ok: false, note: problems.join("; ").slice(0, 300) }
}

const trial = async (target: Target, killMs: number, answerMs: number): Promise<Verdict> => {
  const { page, browserPid } = await pageAndBrowser()
  const sessionId = await openPageSession(chain(), page, answerMs)
  // The processes serving the page do not change once its session is open; the scan runs while the turn starts.
  const [victims] = await Promise.all([victimsOf(target, browserPid), startAcceptedTurn(page, sessionId, TURN)])
  await new Promise((resolve) => setTimeout(resolve, killMs))
  for (const { pid } of victims) sigkill(pid)
  if (!(await turnCompletedYet(page, sessionId))) midTurn++
  const view = await pageView(page, sessionId, COMPLETION_WAIT_MS)
  const lastSeq = Math.max(0, ...view.seen.filter((item) => item.source === "core").map((item) => item.seq))
  const log = await coreLog(chain().home, chain().origins.http, sessionId, lastSeq)
  await endPageSession(page, sessionId)
  const problems = [...turnProblems(view), ...pageProblems(view.seen, log)]
  if (victims.length === 0) problems.push(`no ${target} to kill`)
  return afterTrial(problems, sessionId, browserPid)
}

const points = casesOf(fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 250 })), seed, TRIALS)

const row = async (target: Target, tally: Tally, startedAt: number) => {
  const written = await record(
    {
      probe: `SIGKILL: ${target} mid-turn`,
      trials: tally.trials,
      expected: `≥ ${TRIALS}, each: 1 completion/turn, calls once, seq ↑, log = seen, 0 orphans, run/ clean`,
      observed: Object.entries(tally.outcomes)
        .map(([name, count]) => `${name} ${count}`)
        .join(", "),
      pass: tally.bad === 0 && tally.trials >= TRIALS,
      seed,
      figures: { killed_mid_turn: midTurn, wall_s: (Date.now() - startedAt) / 1000 }
    },
    tally.offenders
  )
  expect(tally.offenders).toEqual([])
  expect(written.pass).toBe(true)
}

describe(`SIGKILL in the browser chain at random points of turns with tool calls, ${TRIALS} trials each (seed ${seed})`, () => {
  test.each(["native host", "extension service worker"] as const)(
    "the %s",
    async (target) => {
      const startedAt = Date.now()
      const { add, tally } = tallier()
      midTurn = 0
      for (const [i, [killMs, answerMs]] of points.entries()) {
        const verdict = await trial(target, killMs, answerMs).catch(
          (error: unknown): Verdict => ({ outcome: "trial failed", ok: false, note: String(error).slice(0, 300) })
        )
        add(i, verdict)
      }
      await row(target, tally(), startedAt)
    },
    300_000
  )
})
