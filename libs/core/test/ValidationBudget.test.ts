// Tool-call argument validation under a budget, in-process on the real clock (the budget is wall time in a worker):
// a page's hostile argsSchema and the agent's call against it fail TOOL_ARGS_INVALID naming the limit, while
// another session's call is served meanwhile, because the check runs in a worker, not on Core's event loop.
// Before ToolRouter/Validation, the slow-regex call held the loop ~9 s and the other call waited that long.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Skills } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Sessions } from "../src/Sessions.ts"
import { ToolRouter } from "../src/ToolRouter.ts"
import { collect, machinery, makeFakeAgent, ORIGIN, OTHER_ORIGIN, tempHome } from "./support/InProcessCore.ts"

/**
 * 29 characters re2js accepts whose program is large: linear in the input, ~31 µs a character on this machine
 * (30,000 in 0.94 s, 60,000 in 1.7 s; 9 s on an earlier one), so the calls below give it 90,000, well past the 1 s
 * budget on a fast machine too: at 30,000 the check finished inside it and was a plain mismatch, no limit named.
 */
export const SLOW_PATTERN = "(?:\\pL|\\pN|\\pP|\\pS){1,900}\\pZ"

/** A 32×32 nested oneOf of patterns as an array's items: every item is tried against 1,024 members. */
export const bombItems = {
  oneOf: Array.from({ length: 32 }, (_, i) => ({
    oneOf: Array.from({ length: 32 }, (_, j) => ({ type: "string", pattern: `^x${i}_${j}$` }))
  }))
}

const skillsOf = (name: string, argsSchema: unknown): Skills =>
  ({ guidance: "", tools: [{ name, description: name, argsSchema, timeoutMs: 60_000 }] }) as Skills

const hostile = skillsOf("hostile", {
  type: "object",
  properties: { list: { type: "array", items: bombItems }, text: { type: "string", pattern: SLOW_PATTERN } }
})
const echo = skillsOf("echo", { type: "object", properties: { text: { type: "string", pattern: "^[a-z]+$" } } })

const detailsOf = (exit: Exit.Exit<unknown, PedelecError>) => {
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  return reason?._tag === "Fail" ? { code: reason.error.code, ...reason.error.details } : { code: "none" }
}

/** The agent's call, as pedelec-cli makes it. */
const callIn = (sessionId: SessionId, name: string, args: Schema.Json) =>
  Effect.gen(function* () {
    const session = yield* (yield* Sessions).live(sessionId)
    return yield* (yield* ToolRouter).call(session, name, args)
  })

const withSessions = <A, E>(
  body: (ids: { hostile: SessionId; echo: SessionId }) => Effect.Effect<A, E, Sessions | ToolRouter | Scope.Scope>
) =>
  Effect.gen(function* () {
    const home = yield* tempHome
    const agent = yield* makeFakeAgent
    return yield* Effect.gen(function* () {
      const sessions = yield* Sessions
      const a = yield* sessions.create(ORIGIN, { provider: "scripted", skills: hostile })
      const b = yield* sessions.create(OTHER_ORIGIN, { provider: "scripted", skills: echo })
      return yield* body({ hostile: a.sessionId, echo: b.sessionId })
    }).pipe(Effect.provide(machinery(home, agent)))
  })

/**
 * One ordinary call first: the first check that needs a worker starts the pool (each worker takes 250–400 ms to
 * start on a loaded machine), as in a Core that has served a call before.
 */
const warmUp = (sessionId: SessionId) =>
  Effect.gen(function* () {
    const first = yield* Effect.forkChild(callIn(sessionId, "echo", { text: "warm" }), { startImmediately: true })
    yield* Effect.sleep(1_500)
    yield* Fiber.interrupt(first)
  })

/**
 * Starts the hostile call, and 20 ms later the other session's call; times the other from then to its `tool_call`
 * event. A check on the event loop would hold the other's start until it finished.
 */
const otherCallWaits = (ids: { hostile: SessionId; echo: SessionId }, hostileArgs: Schema.Json) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    yield* sessions.sendText(OTHER_ORIGIN, ids.echo, "use the tool")
    const offered = yield* collect(
      sessions.subscribe(OTHER_ORIGIN, ids.echo, 0, true),
      (event: SessionEvent) => event.type === "tool_call" && JSON.stringify(event.args) === '{"text":"hello"}'
    )
    yield* warmUp(ids.echo)
    const started = performance.now()
    const bomb = yield* Effect.forkChild(Effect.andThen(Effect.yieldNow, callIn(ids.hostile, "hostile", hostileArgs)))
    const other = yield* Effect.forkChild(Effect.andThen(Effect.sleep(20), callIn(ids.echo, "echo", { text: "hello" })))
    const events = yield* Fiber.join(offered)
    const waitedMs = performance.now() - started - 20
    const last = events.at(-1)
    assert.deepStrictEqual(last?.type === "tool_call" ? last.args : undefined, { text: "hello" })
    // Served: the page has it. Answering it is the queue's business, pinned in Sessions.test.ts.
    yield* Fiber.interrupt(other)
    const refused = yield* Effect.exit(Fiber.join(bomb))
    return { waitedMs, refused: detailsOf(refused), bombMs: performance.now() - started }
  })

/**
 * On the loop, the other call waited behind the hostile one (10,610 ms for the slow regex); off it, 40–120 ms on a
 * quiet machine. The bound sits far below the first and far above the second, so a loaded CI box does not fail it.
 */
const SERVED_WITHIN_MS = 1_000

describe("tool-call validation budget", () => {
  it.live(
    "a slow-regex call fails TOOL_ARGS_INVALID (limit time) while another session's call is offered at once",
    () =>
      withSessions((ids) =>
        Effect.gen(function* () {
          const result = yield* otherCallWaits(ids, { text: "é".repeat(90_000) })
          process.stdout.write(
            `slow regex: the other call waited ${result.waitedMs.toFixed(1)} ms; refused after ~${result.bombMs.toFixed(0)} ms\n`
          )
          assert.isBelow(result.waitedMs, SERVED_WITHIN_MS)
          assert.strictEqual(result.refused.code, "TOOL_ARGS_INVALID")
          assert.strictEqual((result.refused as { limit?: string }).limit, "time")
        })
      ),
    30_000
  )

  it.live(
    "the 32×32 oneOf bomb (12,000 items, 48 KB) fails TOOL_ARGS_INVALID (limit work); the other call is served",
    () =>
      withSessions((ids) =>
        Effect.gen(function* () {
          const list = Array.from({ length: 12_000 }, (_, k) => `x${k % 32}_${k % 31}`)
          const result = yield* otherCallWaits(ids, { list })
          process.stdout.write(
            `oneOf bomb: the other call waited ${result.waitedMs.toFixed(1)} ms; refused after ~${result.bombMs.toFixed(0)} ms\n`
          )
          assert.isBelow(result.waitedMs, SERVED_WITHIN_MS)
          assert.strictEqual(result.refused.code, "TOOL_ARGS_INVALID")
          // The work budget stops it; on a loaded machine the 1 s time budget may come first. Either is a refusal.
          assert.oneOf((result.refused as { limit?: string }).limit, ["work", "time"])
        })
      ),
    30_000
  )
})
