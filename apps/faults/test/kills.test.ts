/**
 * SIGKILL at random points of turns with tool calls, on a real Core with the scripted agent: 20 trials each of
 * killing the agent, a pedelec-cli in the middle of its tool call, and Core itself (then restarted on the same home,
 * the session resumed). A seeded delay picks the point. After each trial: the turn completed exactly once, seqs
 * strictly increase, the session's log as Core replays it equals what the subscriber saw, no process with the
 * session's PEDELEC_THREAD_ID is left, and `run/` holds nothing but a live Core's own files.
 */
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import {
  collectEvents,
  completionOf,
  hostClient,
  isType,
  killSessionProcesses,
  ORIGIN,
  openSession,
  type RunningCore,
  removeHome,
  sessionProcesses,
  startCore,
  stopCore
} from "@pedelec/test-kit/core/Harness"
import { casesOf, faultSeed } from "@pedelec/test-kit/faults/Hostile"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, test } from "vitest"
import { record, tallier, type Verdict } from "./support/Probe.ts"
import { eventProblems, orphansOf, replayed, staleRunFiles } from "./support/Turns.ts"

const TRIALS = 20
const seed = faultSeed()
const tools: ToolsManifest = [{ name: "add", description: "Adds.", argsSchema: { type: "object", properties: {} } }]
const TURN = script("call add {}", "delta one", "call add {}", "say done")

type Target = "agent" | "pedelec-cli" | "Core"

const kill = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Gone already: the point fell after it exited.
  }
}

/** SIGKILLs the target's process of this session (pedelec-cli: while its call waits for the answer). */
const killTarget = async (target: Target, core: RunningCore, sessionId: string) => {
  if (target === "Core") return kill(core.info.pid)
  const found = await sessionProcesses(sessionId)
  const wanted = found.filter((p) =>
    p.argv.some((arg) => (target === "agent" ? /scripted-agent/ : /pedelec-cli/).test(arg))
  )
  for (const { pid } of wanted) kill(pid)
}

/** One trial: a turn whose calls are answered after `answerMs`, the target killed `killMs` after the turn started. */
const trial = (client: HostClient, core: RunningCore, target: Target, killMs: number, answerMs: number) =>
  Effect.gen(function* () {
    const { sessionId, events } = yield* openSession(client, { skills: { guidance: "", tools } })
    const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: TURN })
    yield* Effect.forkScoped(
      Effect.forever(
        events.next(isType("tool_call"), 30_000).pipe(
          Effect.delay(answerMs),
          Effect.flatMap((call) =>
            client["tool.submit_result"]({
              origin: ORIGIN,
              sessionId,
              toolCallId: call.toolCallId,
              outcome: { ok: true, result: 3 }
            })
          ),
          Effect.ignore
        )
      )
    )
    yield* Effect.sleep(killMs)
    yield* Effect.promise(() => killTarget(target, core, sessionId))
    return { sessionId, turnId, events }
  })

/** Resolves once `seen` holds the turn's completion; rejects after 30 s. */
const completed = async (seen: ReadonlyArray<{ readonly type: string; readonly turnId?: unknown }>, turnId: string) => {
  for (let waited = 0; waited < 30_000; waited += 50) {
    if (seen.some((event) => event.type === "turn_completed" && event.turnId === turnId)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`turn ${turnId}: no completion within 30 s`)
}

const afterKill = (client: HostClient, run: Effect.Success<ReturnType<typeof trial>>) =>
  Effect.gen(function* () {
    // Polled on `seen`: the answering fiber takes from the same queue, so `next` could miss the completion.
    yield* Effect.promise(() => completed(run.events.seen, run.turnId))
    const seen = [...run.events.seen]
    const log = yield* replayed(client, run.sessionId, seen.at(-1)!.seq)
    yield* client["session.end"]({ origin: ORIGIN, sessionId: run.sessionId }).pipe(Effect.ignore)
    return { seen, log }
  })

const verdictOf = async (problems: Array<string>, sessionId: string, home: string): Promise<Verdict> => {
  const orphans = await orphansOf(sessionId)
  if (orphans > 0) {
    problems.push(`${orphans} orphan processes`)
    await killSessionProcesses(sessionId)
  }
  const stale = await staleRunFiles(home)
  if (stale.length > 0) problems.push(`stale in run/: ${stale.join(", ")}`)
  return problems.length === 0
    ? { outcome: "clean", ok: true }
    : { outcome: problems[0]!.split(":")[0]!, ok: false, note: problems.join("; ").slice(0, 300) }
}

/** Agent and pedelec-cli kills share one Core: neither may take it down. */
const killsOnOneCore = (target: "agent" | "pedelec-cli", points: ReadonlyArray<readonly [number, number]>) =>
  Effect.gen(function* () {
    const core = yield* Effect.acquireRelease(
      Effect.promise(() => startCore()),
      (started) => Effect.promise(() => stopCore(started).then(() => removeHome(started.home)))
    )
    const client = yield* hostClient(core.info)
    const { add, tally } = tallier()
    for (const [i, [killMs, answerMs]] of points.entries()) {
      const verdict = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* trial(client, core, target, killMs, answerMs)
          const { seen, log } = yield* afterKill(client, run)
          return yield* Effect.promise(() => verdictOf(eventProblems(seen, log), run.sessionId, core.home))
        })
      ).pipe(
        Effect.catchCause((cause) =>
          Effect.succeed<Verdict>({ outcome: "trial failed", ok: false, note: String(cause).slice(0, 300) })
        )
      )
      add(i, verdict)
    }
    return tally()
  }).pipe(Effect.scoped)

/** Core kills: each trial on its own home, Core restarted after the kill and the session resumed from seq 0. */
const coreKill = (killMs: number, answerMs: number) =>
  Effect.gen(function* () {
    const first = yield* Effect.promise(() => startCore())
    const home = first.home
    yield* Effect.addFinalizer(() => Effect.promise(() => removeHome(home)))
    const before = yield* Effect.scoped(
      Effect.gen(function* () {
        const client = yield* hostClient(first.info)
        const run = yield* trial(client, first, "Core", killMs, answerMs)
        yield* Effect.promise(() => stopCore(first, "SIGKILL"))
        return { sessionId: run.sessionId, turnId: run.turnId, seen: [...run.events.seen] }
      })
    )
    const second = yield* Effect.acquireRelease(
      Effect.promise(() => startCore({ home })),
      (started) => Effect.promise(() => stopCore(started))
    )
    const client = yield* hostClient(second.info)
    yield* client["session.resume"]({ origin: ORIGIN, sessionId: before.sessionId })
    const after = yield* openReplay(client, before.sessionId, before.turnId)
    const problems = eventProblems(after, after)
    const prefix = after.slice(0, before.seen.length)
    if (JSON.stringify(prefix) !== JSON.stringify(before.seen))
      problems.push("log: what the subscriber saw before the kill is not its prefix")
    const verdict = yield* Effect.promise(() => verdictOf(problems, before.sessionId, home))
    yield* client["session.end"]({ origin: ORIGIN, sessionId: before.sessionId }).pipe(Effect.ignore)
    return verdict
  }).pipe(Effect.scoped)

/** The session from seq 0 on a restarted Core, until the interrupted turn's completion. */
const openReplay = (client: HostClient, sessionId: Parameters<typeof replayed>[1], turnId: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const events = yield* collectEvents(
        client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true })
      )
      yield* events.next(completionOf(turnId), 30_000)
      return [...events.seen]
    })
  )

const points = casesOf(fc.tuple(fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 0, max: 600 })), seed, TRIALS)

const row = async (target: Target, tally: ReturnType<ReturnType<typeof tallier>["tally"]>) => {
  const written = await record(
    {
      probe: `SIGKILL: ${target} mid-turn`,
      trials: tally.trials,
      expected: `≥ ${TRIALS}, each: 1 completion/turn, seq ↑, log = seen, 0 orphans, run/ clean`,
      observed: Object.entries(tally.outcomes)
        .map(([name, count]) => `${name} ${count}`)
        .join(", "),
      pass: tally.bad === 0 && tally.trials >= TRIALS,
      seed
    },
    tally.offenders
  )
  expect(tally.offenders).toEqual([])
  expect(written.pass).toBe(true)
}

describe(`SIGKILL at random points of turns with tool calls, ${TRIALS} trials each (seed ${seed})`, () => {
  test.each(["agent", "pedelec-cli"] as const)(
    "the %s",
    async (target) => {
      await row(target, await Effect.runPromise(killsOnOneCore(target, points)))
    },
    300_000
  )

  test("Core", async () => {
    const { add, tally } = tallier()
    for (const [i, [killMs, answerMs]] of points.entries()) {
      const verdict = await Effect.runPromise(
        coreKill(killMs, answerMs).pipe(
          Effect.catchCause((cause) =>
            Effect.succeed<Verdict>({ outcome: "trial failed", ok: false, note: String(cause).slice(0, 300) })
          )
        )
      )
      add(i, verdict)
    }
    await row("Core", tally())
  }, 400_000)
})
