// A call whose page waits on a person (`tool.awaiting_user`, issue 16.2), in-process on TestClock: the timeout is
// paused until the page answers, up to the 30-minute ceiling; the stall clock does not end the turn meanwhile; only
// the claim's connection can pause a call.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { ToolCallId } from "@pedelec/contracts/Ids"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { Sessions } from "../src/Sessions.ts"
import { ToolRouter } from "../src/ToolRouter.ts"
import { collect, type FakeAgent, machinery, makeFakeAgent, ORIGIN, ofType, tempHome } from "./support/InProcessCore.ts"

const TIMEOUT_MS = 5_000
const STALL_MS = 2_000
/** The connection of the page that claims the tools; any other is a tab without the claim. */
const PAGE = 1

const withCore = <A, E>(body: (agent: FakeAgent) => Effect.Effect<A, E, Sessions | ToolRouter | Scope.Scope>) =>
  Effect.gen(function* () {
    const home = yield* tempHome
    const agent = yield* makeFakeAgent
    return yield* body(agent).pipe(Effect.provide(machinery(home, agent, { stallTimeoutMs: STALL_MS })))
  })

/** A session with a page claiming its tools (connection PAGE), a turn running, and the agent's call offered. */
const offeredCall = Effect.gen(function* () {
  const sessions = yield* Sessions
  const tools = yield* ToolRouter
  const { sessionId } = yield* sessions.create(ORIGIN, {
    provider: "scripted",
    skills: {
      guidance: "",
      tools: [{ name: "ask", description: "Asks the user.", argsSchema: { type: "object" }, timeoutMs: TIMEOUT_MS }]
    }
  })
  const claim = sessions.subscribe(ORIGIN, sessionId, 0, true, { connection: PAGE })
  yield* Effect.forkChild(Stream.runDrain(claim), { startImmediately: true })
  const watch = (type: SessionEvent["type"]) =>
    collect(sessions.subscribe(ORIGIN, sessionId, 0, false), (event) => event.type === type)
  const offered = yield* watch("tool_call")
  const done = yield* watch("turn_completed")
  yield* sessions.sendText(ORIGIN, sessionId, "ask the user")
  const session = yield* sessions.live(sessionId)
  const call = yield* Effect.forkChild(tools.call(session, "ask", {}), { startImmediately: true })
  const [offer] = ofType("tool_call")(yield* Fiber.join(offered))
  return { sessionId, session, call, done, toolCallId: offer?.toolCallId as ToolCallId }
})

const failureOf = (exit: Exit.Exit<unknown, PedelecError>) =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" ? exit.cause.reasons[0].error : undefined

/** Lets fibers woken by the last step run (the turn's steps do real file I/O) before the test looks. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 30)))

const turnErrors = (events: ReadonlyArray<SessionEvent>) => ofType("error")(events).map((e) => e.error.code)

describe("a call waiting on the user", () => {
  it.effect("has no timeout and no stall until the page answers, long after its own timeout", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const tools = yield* ToolRouter
        const { session, call, done, toolCallId } = yield* offeredCall
        yield* tools.awaitingUser(session, toolCallId, PAGE)
        // Twenty minutes: 240 timeouts and 600 stall timeouts, in steps the stall watchdog sees.
        for (let minute = 0; minute < 20; minute++) {
          yield* TestClock.adjust(60_000)
          yield* settle
        }
        assert.isUndefined(call.pollUnsafe())
        assert.isUndefined(done.pollUnsafe())
        // Progress while paused does not bring a short timeout back.
        yield* tools.progress(session, toolCallId, PAGE)
        yield* TestClock.adjust(TIMEOUT_MS * 2)
        assert.isUndefined(call.pollUnsafe())
        assert.isTrue(yield* tools.submit(session, toolCallId, { ok: true, result: "yes" }, PAGE))
        assert.deepStrictEqual(yield* Fiber.join(call), { ok: true, result: "yes" })
        yield* agent.say({ type: "completed", text: "done" })
        const events = yield* Fiber.join(done)
        assert.deepStrictEqual(turnErrors(events), [])
        assert.strictEqual(ofType("turn_completed")(events)[0]?.reason, "completed")
      })
    )
  )

  it.effect("ends TOOL_TIMEOUT at the ceiling, 30 minutes from the offer, saying it waited on the user", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const tools = yield* ToolRouter
        const { session, call, toolCallId } = yield* offeredCall
        yield* TestClock.adjust(TIMEOUT_MS - 1_000)
        yield* tools.awaitingUser(session, toolCallId, PAGE)
        yield* TestClock.adjust(TOOL_LIMITS.awaitingUserCeilingMs - TIMEOUT_MS)
        assert.isUndefined(call.pollUnsafe())
        yield* TestClock.adjust(1_000)
        const error = failureOf(yield* Fiber.await(call))
        assert.strictEqual(error?.code, "TOOL_TIMEOUT")
        assert.deepInclude(error?.details, { timeoutMs: TOOL_LIMITS.awaitingUserCeilingMs, waitedOnUser: true })
        yield* agent.say({ type: "completed", text: "done" })
      })
    )
  )

  it.effect("is paused only by the claim's connection: another tab's word leaves the timeout running", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const tools = yield* ToolRouter
        const { sessionId, session, call, toolCallId } = yield* offeredCall
        yield* tools.awaitingUser(session, toolCallId, PAGE + 1)
        yield* TestClock.adjust(TIMEOUT_MS)
        const error = failureOf(yield* Fiber.await(call))
        assert.strictEqual(error?.code, "TOOL_TIMEOUT")
        assert.deepStrictEqual(error?.details, { tool: "ask", timeoutMs: TIMEOUT_MS })
        // A call already gone cannot be paused; nothing fails.
        yield* tools.awaitingUser(yield* sessions.live(sessionId), toolCallId, PAGE)
        yield* agent.say({ type: "completed", text: "done" })
        assert.strictEqual(session.tools.queue.length, 0)
      })
    )
  )
})
