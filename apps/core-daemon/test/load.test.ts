// Load on a real Core: N sessions × M tool calls at once, each call a real pedelec-cli process started by the
// scripted agent, against one session alone. Every call must succeed (a busy Core slows down, it never refuses a
// caller), every event arrives once and in seq order, and the figures are printed: a call's p50/p99 as the agent
// timed it, at 1 and at N sessions, Core's CPU time (from /proc/<pid>/stat) and its peak of open files.
// PEDELEC_LOAD_SESSIONS / PEDELEC_LOAD_CALLS scale it (the default fits the suite's budget on 2 cores; issue 14's
// 50 × 20 is `PEDELEC_LOAD_SESSIONS=50 PEDELEC_LOAD_CALLS=20`). Asserting only success, not speed: speed is the
// bench's business, these numbers are for the reader.
import { readdir, readFile } from "node:fs/promises"
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import {
  chatOf,
  cliLinesOf,
  coreForFile,
  hostClient,
  isType,
  ORIGIN,
  openSession,
  runTurnAnswering
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

const SESSIONS = Number(process.env.PEDELEC_LOAD_SESSIONS ?? 25)
const CALLS = Number(process.env.PEDELEC_LOAD_CALLS ?? 10)
/** Linux's USER_HZ: /proc's CPU times are in these ticks. */
const TICKS_PER_SECOND = 100

const core = coreForFile()

const tools: ToolsManifest = [
  {
    name: "add",
    description: "Adds two integers.",
    argsSchema: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] }
  }
]
const skills = { guidance: "", tools }
const sum = (call: { readonly args: unknown }) => {
  const { a, b } = call.args as { a: number; b: number }
  return { ok: true as const, result: a + b }
}
const oneToN = (n: number) => Array.from({ length: n }, (_, index) => index + 1)
const seqsOf = (events: ReadonlyArray<SessionEvent>) => events.map((event) => event.seq)

/** Core's user + system CPU seconds so far. */
const cpuSeconds = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

const openFiles = (pid: number) =>
  readdir(`/proc/${pid}/fd`).then(
    (fds) => fds.length,
    () => 0
  )

/** Samples Core's open files every 100 ms until interrupted; `peak` is the highest count seen. */
const watchOpenFiles = (pid: number) =>
  Effect.gen(function* () {
    const state = { peak: 0 }
    const fiber = yield* Effect.forkScoped(
      Effect.forever(
        Effect.promise(() => openFiles(pid)).pipe(
          Effect.tap((count) =>
            Effect.sync(() => {
              state.peak = Math.max(state.peak, count)
            })
          ),
          Effect.andThen(Effect.sleep(100))
        )
      )
    )
    return { state, stop: Fiber.interrupt(fiber) }
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN

/** The agent's own timing of each call, "tool add exit 0: {…} (123.45 ms)". */
const callMillis = (lines: ReadonlyArray<string>) =>
  lines.flatMap((line) => {
    const match = / \((\d+(?:\.\d+)?) ms\)$/.exec(line)
    return match === null ? [] : [Number(match[1])]
  })

/** `sessions` sessions at once, each one turn of `calls` tool calls answered by the test, then ended. */
const runLoad = (client: HostClient, sessions: number, calls: number) =>
  Effect.gen(function* () {
    const runs = yield* Effect.forEach(
      oneToN(sessions),
      (i) =>
        Effect.gen(function* () {
          const { sessionId, events } = yield* openSession(client, { skills })
          const text = script(...oneToN(calls).map((j) => `call add {"a":${i},"b":${j}}`), `say done ${i}`)
          const completed = yield* runTurnAnswering(client, events, sessionId, text, sum, 300_000)
          return { i, sessionId, events, completed }
        }),
      { concurrency: "unbounded" }
    )
    yield* Effect.forEach(runs, ({ sessionId }) => client["session.end"]({ origin: ORIGIN, sessionId }), {
      concurrency: "unbounded"
    })
    return runs
  })

type Run = Effect.Success<ReturnType<typeof runLoad>>[number]

/** What every session must show: its calls all answered, in its own agent, its events once and in order. */
const checkRun = ({ i, sessionId, events, completed }: Run, calls: number) => {
  const seen = events.seen
  const failed = cliLinesOf(events, completed.turnId, "add").filter((line) => line.exit !== 0)
  assert.deepStrictEqual(failed.map((line) => `exit ${line.exit}: ${line.raw}`).slice(0, 3), [], `session ${i}`)
  assert.strictEqual(completed.reason, "completed")
  assert.strictEqual(completed.text, `done ${i}`)
  assert.deepStrictEqual(seqsOf(seen), oneToN(seen.length), `session ${i}: every event once, in seq order`)
  assert.isTrue(seen.every((event) => event.sessionId === sessionId))
  assert.lengthOf(seen.filter(isType("turn_completed")), 1)
  assert.lengthOf(new Set(seen.filter(isType("tool_call")).map((call) => call.toolCallId)), calls)
  assert.lengthOf(seen.filter(isType("tool_result")), calls)
  const answers = cliLinesOf(events, completed.turnId, "add").map((line) => line.output.result)
  assert.deepStrictEqual(
    answers,
    oneToN(calls).map((j) => i + j),
    `session ${i}: each answer reached its own agent`
  )
}

/** Runs the load, measuring around it, and prints one line of figures. */
const measured = (client: HostClient, sessions: number, calls: number) =>
  Effect.gen(function* () {
    const pid = core.info.pid
    const files = yield* watchOpenFiles(pid)
    const cpuBefore = yield* Effect.promise(() => cpuSeconds(pid))
    const started = performance.now()
    const runs = yield* runLoad(client, sessions, calls)
    const wall = (performance.now() - started) / 1000
    const cpu = (yield* Effect.promise(() => cpuSeconds(pid))) - cpuBefore
    yield* files.stop
    const lines = runs.flatMap(({ events, completed }) => chatOf(events, completed.turnId))
    const failed = runs
      .flatMap(({ events, completed }) => cliLinesOf(events, completed.turnId, "add"))
      .filter((line) => line.exit !== 0)
    const failures = failed.length
    const millis = callMillis(lines).sort((a, b) => a - b)
    const figures = {
      sessions,
      calls,
      failures,
      p50: percentile(millis, 50),
      p99: percentile(millis, 99),
      wall,
      cpu,
      peakOpenFiles: files.state.peak
    }
    process.stdout.write(
      `[load] ${sessions} × ${calls}: ${failures} of ${sessions * calls} calls failed; call p50 ${figures.p50.toFixed(0)} ms, ` +
        `p99 ${figures.p99.toFixed(0)} ms; Core CPU ${cpu.toFixed(1)} s in ${wall.toFixed(1)} s; ` +
        `peak open files ${files.state.peak}` +
        (failed[0] === undefined ? "" : `; first failure: exit ${failed[0].exit} ${failed[0].raw}`) +
        "\n"
    )
    return { runs, figures }
  })

describe("load on a real Core", () => {
  it.live(
    `1 session × ${CALLS} tool calls, then ${SESSIONS} sessions × ${CALLS} at once: every call succeeds, every event once and in order`,
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const alone = yield* measured(client, 1, CALLS)
        for (const run of alone.runs) checkRun(run, CALLS)
        const loaded = yield* measured(client, SESSIONS, CALLS)
        assert.strictEqual(loaded.figures.failures, 0, "no tool call failed")
        for (const run of loaded.runs) checkRun(run, CALLS)
      }).pipe(Effect.scoped),
    // The default 25 × 10 takes about a minute on 2 cores; a larger run gets time in proportion.
    Math.max(150_000, SESSIONS * CALLS * 600)
  )
})
