/**
 * 50 sessions × 20 tool calls at once on a real Core, each call a real pedelec-cli run by the scripted agent and
 * answered by the test, after the same turn in one session alone. Expected: every call succeeds (a busy Core slows
 * down, it never refuses a legitimate caller), every session's events arrive once and in seq order, one completion
 * each. Figures: a call's p50/p99 as the agent timed it, at 1 and at 50 sessions, and Core's RSS idle and busy
 * (peak VmRSS sampled from /proc every 200 ms). apps/core-daemon/test/load.test.ts is the smaller default run of
 * the same load; this is the full size, as a row of the table.
 */
import { readFile } from "node:fs/promises"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import {
  chatOf,
  cliLinesOf,
  hostClient,
  ORIGIN,
  openSession,
  removeHome,
  runTurnAnswering,
  startCore,
  stopCore
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import { expect, test } from "vitest"
import { record } from "./support/Probe.ts"

const SESSIONS = 50
const CALLS = 20
const tools: ToolsManifest = [{ name: "add", description: "Adds.", argsSchema: { type: "object", properties: {} } }]
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

const rssMiB = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN

const callMillis = (lines: ReadonlyArray<string>) =>
  lines.flatMap((line) => {
    const match = / \((\d+(?:\.\d+)?) ms\)$/.exec(line)
    return match === null ? [] : [Number(match[1])]
  })

/** What is wrong with one session's run: failed calls, events not once and in order, not one completion. */
const problemsOf = (seen: ReadonlyArray<SessionEvent>, failed: number) => {
  const problems: Array<string> = []
  if (failed > 0) problems.push(`${failed} calls failed`)
  if (seen.some((event, i) => event.seq !== i + 1)) problems.push("events not once and in seq order")
  if (seen.filter((event) => event.type === "turn_completed").length !== 1) problems.push("not one completion")
  return problems
}

/** `sessions` sessions at once, one turn of CALLS calls each; returns per-call timings and per-session problems. */
const load = (client: HostClient, sessions: number) =>
  Effect.forEach(
    oneToN(sessions),
    () =>
      Effect.gen(function* () {
        const { sessionId, events } = yield* openSession(client, { skills: { guidance: "", tools } })
        const text = script(...oneToN(CALLS).map(() => "call add {}"), "say done")
        const done = yield* runTurnAnswering(client, events, sessionId, text, () => ({ ok: true, result: 1 }), 300_000)
        yield* Effect.sleep(200)
        yield* client["session.end"]({ origin: ORIGIN, sessionId }).pipe(Effect.ignore)
        const lines = cliLinesOf(events, done.turnId, "add")
        const seen = events.seen.filter((event) => event.seq <= done.seq)
        return {
          millis: callMillis(chatOf(events, done.turnId)),
          problems: problemsOf(seen, lines.filter((l) => l.exit !== 0).length + CALLS - lines.length)
        }
      }).pipe(
        Effect.scoped,
        Effect.catchCause((cause) =>
          Effect.succeed({ millis: [], problems: [`session failed: ${String(cause).slice(0, 200)}`] })
        )
      ),
    { concurrency: "unbounded" }
  )

const figuresOf = (runs: ReadonlyArray<{ readonly millis: ReadonlyArray<number> }>) => {
  const millis = runs.flatMap((run) => run.millis).sort((a, b) => a - b)
  return { p50: percentile(millis, 50), p99: percentile(millis, 99), calls: millis.length }
}

test(`${SESSIONS} sessions × ${CALLS} tool calls at once: every call answered, every event once and in order`, async () => {
  const core = await startCore()
  try {
    const idle = await rssMiB(core.info.pid)
    let busy = idle
    const sampler = setInterval(() => void rssMiB(core.info.pid).then((rss) => (busy = Math.max(busy, rss))), 200)
    const run = (sessions: number) =>
      Effect.runPromise(Effect.scoped(Effect.flatMap(hostClient(core.info), (c) => load(c, sessions))))
    const alone = await run(1)
    const started = performance.now()
    const loaded = await run(SESSIONS)
    const wallS = (performance.now() - started) / 1000
    clearInterval(sampler)
    const one = figuresOf(alone)
    const many = figuresOf(loaded)
    const problems = [...alone, ...loaded].flatMap((r) => r.problems)
    const answered = many.calls
    const row = await record(
      {
        probe: `load: ${SESSIONS} sessions × ${CALLS} calls`,
        trials: SESSIONS * CALLS,
        expected: "every call ok, events once and in order",
        observed: `${answered} of ${SESSIONS * CALLS} answered; ${problems.length} sessions with problems`,
        pass: problems.length === 0 && answered === SESSIONS * CALLS,
        figures: {
          p50At1Ms: one.p50,
          p99At1Ms: one.p99,
          [`p50At${SESSIONS}Ms`]: many.p50,
          [`p99At${SESSIONS}Ms`]: many.p99,
          rssIdleMiB: idle,
          rssBusyMiB: busy,
          wallS
        }
      },
      problems.slice(0, 5)
    )
    expect(problems.slice(0, 5)).toEqual([])
    expect(row.pass).toBe(true)
  } finally {
    await stopCore(core)
    await removeHome(core.home)
  }
}, 600_000)
