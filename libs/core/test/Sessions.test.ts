// Core's session machinery in-process on TestClock (test/support/InProcessCore.ts): turns, the tool queue, timers,
// leases, cancel and end, failures and a restart, each pinned here before the built-daemon suites prove the process.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId, ToolCallId } from "@pedelec/contracts/Ids"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Skills } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type { CoreConfigShape } from "../src/CoreConfig.ts"
import { SessionStore } from "../src/SessionStore.ts"
import { Sessions } from "../src/Sessions.ts"
import { ToolRouter } from "../src/ToolRouter.ts"
import {
  collect,
  type FakeAgent,
  machinery,
  makeFakeAgent,
  ORIGIN,
  OTHER_ORIGIN,
  ofType,
  tempHome
} from "./support/InProcessCore.ts"

const TOOL_TIMEOUT_MS = 5_000

const skills: Skills = {
  guidance: "test tools",
  tools: [
    {
      name: "echo",
      description: "Echoes its text.",
      argsSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      timeoutMs: TOOL_TIMEOUT_MS
    }
  ]
}

type Deps = Sessions | ToolRouter | SessionStore

const withCore = <A, E>(
  body: (agent: FakeAgent, home: string) => Effect.Effect<A, E, Deps | Scope.Scope>,
  config: Partial<CoreConfigShape> = {}
) =>
  Effect.gen(function* () {
    const home = yield* tempHome
    const agent = yield* makeFakeAgent
    return yield* body(agent, home).pipe(Effect.provide(machinery(home, agent, config)))
  })

const created = (input: { autoEndOnDisconnect?: boolean } = {}) =>
  Effect.flatMap(Sessions, (sessions) => sessions.create(ORIGIN, { provider: "scripted", skills, ...input }))

/** The agent's tool call, in the background, as pedelec-cli would make it. */
const agentCalls = (sessionId: SessionId, args: { text: string }) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const tools = yield* ToolRouter
    const session = yield* sessions.live(sessionId)
    return yield* Effect.forkChild(tools.call(session, "echo", args), { startImmediately: true })
  })

const submit = (sessionId: SessionId, toolCallId: ToolCallId, text: string) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const session = yield* sessions.access(ORIGIN, sessionId)
    return yield* (yield* ToolRouter).submit(session, toolCallId, { ok: true, result: { text } })
  })

const status = (sessionId: SessionId) =>
  Effect.map(
    Effect.flatMap(Sessions, (sessions) => sessions.resume(ORIGIN, sessionId)),
    (info) => info.status
  )

/** Subscribes (claiming the tools) in the background until an event matches. */
const watch = (sessionId: SessionId, until: (event: SessionEvent) => boolean, afterSeq = 0, claimTools = true) =>
  Effect.flatMap(Sessions, (sessions) => collect(sessions.subscribe(ORIGIN, sessionId, afterSeq, claimTools), until))

const completion = (event: SessionEvent) => event.type === "turn_completed"

/** Lets fibers woken by the last step run (real file I/O included) before the test looks. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 30)))

/** Waits (in real time, up to 5 s) until `check` holds: the steps after a timer fires do real file I/O. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>): Effect.Effect<void, E, R> =>
  Effect.gen(function* () {
    for (let i = 0; i < 250; i++) {
      if (yield* check) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
    assert.fail("the condition did not hold within 5 s")
  })

/** Moves the test clock in steps, letting the fibers each step wakes run (a watchdog loop re-arms every tick). */
const advance = (ms: number, stepMs = 500) =>
  Effect.gen(function* () {
    for (let done = 0; done < ms; done += stepMs) {
      yield* TestClock.adjust(Math.min(stepMs, ms - done))
      yield* settle
    }
  })

/** A page that holds the session and claims its tools until the test ends. */
const claimant = (sessionId: SessionId) =>
  Effect.flatMap(Sessions, (sessions) =>
    Effect.forkChild(Stream.runDrain(sessions.subscribe(ORIGIN, sessionId, 0, true)), { startImmediately: true })
  )

/** The id of the call the session's queue has offered (the head). */
const offeredId = (session: {
  readonly tools: { readonly queue: ReadonlyArray<{ readonly toolCallId: ToolCallId }> }
}) => session.tools.queue[0]?.toolCallId as ToolCallId

const liveIds = Effect.flatMap(Sessions, (sessions) =>
  Effect.map(sessions.list(ORIGIN), (infos) => infos.map((info) => info.sessionId))
)

const codeOf = (exit: Exit.Exit<unknown, PedelecError>) =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" ? exit.cause.reasons[0].error.code : "none"

describe("Sessions in-process", () => {
  it.effect("a turn completes exactly once, and the status is idle (and said so) before its completion", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        const seen = yield* watch(sessionId, completion)
        yield* settle
        const { turnId } = yield* sessions.sendText(ORIGIN, sessionId, "hello")
        yield* agent.say(
          { type: "delta", text: "Hel" },
          { type: "delta", text: "lo" },
          { type: "completed", text: "Hello" }
        )
        const events = yield* Fiber.join(seen)
        yield* settle
        const completions = ofType("turn_completed")(events)
        assert.strictEqual(completions.length, 1)
        assert.deepStrictEqual([completions[0]?.turnId, completions[0]?.reason], [turnId, "completed"])
        // Deltas that queue up together are coalesced; their text is the same, in order.
        assert.strictEqual(
          ofType("chat_delta")(events)
            .map((e) => e.delta)
            .join(""),
          "Hello"
        )
        assert.strictEqual(yield* status(sessionId), "idle")
        // The idle status comes before the completion: a page that looks once it hears the completion sees idle.
        assert.deepStrictEqual(
          ofType("status_changed")(events).map((e) => e.status),
          ["running", "idle"]
        )
        assert.deepStrictEqual(
          events.slice(-2).map((e) => e.type),
          ["status_changed", "turn_completed"]
        )
        assert.include(agent.sent[0]?.prompt ?? "", "hello")
      })
    )
  )

  it.effect("a burst of deltas is coalesced into fewer events: same text, same order, seqs without a hole", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        const seen = yield* watch(sessionId, completion)
        yield* settle
        yield* sessions.sendText(ORIGIN, sessionId, "stream")
        const parts = Array.from({ length: 300 }, (_, i) => `part-${i} `)
        yield* agent.say(
          ...parts.map((text) => ({ type: "delta" as const, text })),
          { type: "message", text: "after" },
          { type: "delta", text: "tail" },
          { type: "completed", text: "done" }
        )
        const events = yield* Fiber.join(seen)
        const deltas = ofType("chat_delta")(events).map((e) => e.delta)
        assert.isBelow(deltas.length, 300)
        // The message between them is a boundary: nothing is merged across it.
        assert.deepStrictEqual(deltas.slice(-1), ["tail"])
        assert.strictEqual(deltas.slice(0, -1).join(""), parts.join(""))
        assert.deepStrictEqual(
          events.map((e) => e.seq),
          events.map((_, i) => events[0]!.seq + i)
        )
      })
    )
  )

  it.effect("a second send while a turn runs is SESSION_BUSY; the busy turn is unaffected", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        yield* sessions.sendText(ORIGIN, sessionId, "one")
        const busy = yield* Effect.exit(sessions.sendText(ORIGIN, sessionId, "two"))
        assert.strictEqual(codeOf(busy), "SESSION_BUSY")
        const seen = yield* watch(sessionId, completion)
        yield* agent.say({ type: "completed", text: "done" })
        assert.strictEqual(ofType("turn_completed")(yield* Fiber.join(seen)).length, 1)
      })
    )
  )

  it.effect("an offered call's waiting status and its tool_call reach the page in one chunk, the status first", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        yield* sessions.sendText(ORIGIN, sessionId, "use a tool")
        const chunks: Array<ReadonlyArray<string>> = []
        const page = yield* sessions.subscribe(ORIGIN, sessionId, 0, true).pipe(
          Stream.runForEachArray((chunk) => Effect.sync(() => void chunks.push(chunk.map((e) => e.type)))),
          Effect.forkChild({ startImmediately: true })
        )
        yield* settle
        const call = yield* agentCalls(sessionId, { text: "one" })
        yield* eventually(Effect.sync(() => chunks.some((chunk) => chunk.includes("tool_call"))))
        // Published together, they leave Core as one write to the page's host instead of two, a hop apart.
        assert.deepStrictEqual(
          chunks.find((chunk) => chunk.includes("tool_call")),
          ["status_changed", "tool_call"]
        )
        const session = yield* sessions.live(sessionId)
        assert.isTrue(yield* submit(sessionId, offeredId(session), "done"))
        yield* Fiber.join(call)
        yield* Fiber.interrupt(page)
        yield* agent.say({ type: "completed", text: "ok" })
      })
    )
  )

  it.effect("the tool queue offers calls one at a time in order, and refuses the 17th", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        yield* sessions.sendText(ORIGIN, sessionId, "use tools")
        const offered = yield* watch(sessionId, (e) => e.type === "tool_call")
        const calls = []
        for (let i = 0; i < 16; i++) calls.push(yield* agentCalls(sessionId, { text: `t${i}` }))
        const overflow = yield* Effect.exit(
          Effect.flatMap(agentCalls(sessionId, { text: "t16" }), (fiber) => Fiber.join(fiber))
        )
        assert.strictEqual(codeOf(overflow), "TOOL_QUEUE_FULL")
        let next = ofType("tool_call")(yield* Fiber.join(offered))
        for (let i = 0; i < 16; i++) {
          const call = next[0]
          assert.deepStrictEqual(call?.args, { text: `t${i}` })
          // Not a claim: a claim offers the pending call again.
          const following = yield* watch(sessionId, (e) => e.type === "tool_call", call?.seq, false)
          assert.isTrue(yield* submit(sessionId, call?.toolCallId as ToolCallId, `r${i}`))
          const line = yield* Fiber.join(calls[i] as Fiber.Fiber<unknown, PedelecError>)
          assert.include(JSON.stringify(line), `r${i}`)
          if (i < 15) next = ofType("tool_call")(yield* Fiber.join(following))
          else yield* Fiber.interrupt(following)
        }
        assert.strictEqual(yield* status(sessionId), "running")
        yield* agent.say({ type: "completed", text: "ok" })
      })
    )
  )

  it.effect("a call times out; progress restarts its clock, but never past ten timeouts", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const tools = yield* ToolRouter
        const { sessionId } = yield* created()
        yield* claimant(sessionId)
        yield* sessions.sendText(ORIGIN, sessionId, "slow tool")
        const offered = yield* watch(sessionId, (e) => e.type === "tool_call")
        const first = yield* agentCalls(sessionId, { text: "a" })
        const [call] = ofType("tool_call")(yield* Fiber.join(offered))
        const session = yield* sessions.live(sessionId)
        // Nine progress reports just inside each timeout keep it alive well past one timeout...
        for (let i = 0; i < 9; i++) {
          yield* TestClock.adjust(TOOL_TIMEOUT_MS - 100)
          yield* tools.progress(session, call?.toolCallId as ToolCallId)
        }
        assert.isUndefined(first.pollUnsafe())
        // ...but the ceiling (ten timeouts from the offer) holds however often it reports.
        for (let i = 0; i < 3; i++) {
          yield* TestClock.adjust(TOOL_TIMEOUT_MS - 100)
          yield* tools.progress(session, call?.toolCallId as ToolCallId)
        }
        yield* TestClock.adjust(TOOL_TIMEOUT_MS)
        assert.strictEqual(codeOf(yield* Fiber.await(first)), "TOOL_TIMEOUT")
        const second = yield* agentCalls(sessionId, { text: "b" })
        yield* settle
        yield* TestClock.adjust(TOOL_TIMEOUT_MS)
        assert.strictEqual(codeOf(yield* Fiber.await(second)), "TOOL_TIMEOUT")
        yield* agent.say({ type: "completed", text: "ok" })
      })
    )
  )

  it.effect("a call no page claims fails TOOL_OWNER_GONE after the grace; a claim in time keeps it", () =>
    withCore(
      () =>
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const { sessionId } = yield* created({ autoEndOnDisconnect: false })
          yield* sessions.sendText(ORIGIN, sessionId, "tools")
          const orphan = yield* agentCalls(sessionId, { text: "nobody" })
          yield* settle
          yield* TestClock.adjust(2_999)
          assert.isUndefined(orphan.pollUnsafe())
          yield* TestClock.adjust(1)
          assert.strictEqual(codeOf(yield* Fiber.await(orphan)), "TOOL_OWNER_GONE")
          const kept = yield* agentCalls(sessionId, { text: "claimed" })
          yield* settle
          yield* TestClock.adjust(2_000)
          const offered = yield* watch(
            sessionId,
            (e) => e.type === "tool_call" && JSON.stringify(e.args) === JSON.stringify({ text: "claimed" })
          )
          const calls = ofType("tool_call")(yield* Fiber.join(offered))
          yield* TestClock.adjust(2_000)
          assert.isUndefined(kept.pollUnsafe())
          const last = calls.at(-1)
          assert.isTrue(yield* submit(sessionId, last?.toolCallId as ToolCallId, "answered"))
          assert.isTrue(Exit.isSuccess(yield* Fiber.await(kept)))
        }),
      { ownerGraceMs: 3_000, leaseMs: 60_000 }
    )
  )

  it.effect("a session nobody holds ends after the lease; a subscriber holds it; without auto-end it stays", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const abandoned = yield* created()
        const held = yield* created()
        const kept = yield* created({ autoEndOnDisconnect: false })
        const subscriber = yield* claimant(held.sessionId)
        yield* settle
        yield* TestClock.adjust(10_000)
        yield* eventually(Effect.map(liveIds, (ids) => !ids.includes(abandoned.sessionId)))
        assert.includeMembers(yield* liveIds, [held.sessionId, kept.sessionId])
        assert.strictEqual(codeOf(yield* Effect.exit(sessions.resume(ORIGIN, abandoned.sessionId))), "SESSION_ENDED")
        yield* Fiber.interrupt(subscriber)
        yield* TestClock.adjust(9_999)
        yield* settle
        assert.include(yield* liveIds, held.sessionId)
        yield* TestClock.adjust(1)
        yield* eventually(Effect.map(liveIds, (ids) => ids.length === 1))
        assert.deepStrictEqual(yield* liveIds, [kept.sessionId])
        const store = yield* SessionStore
        yield* eventually(Effect.map(store.load(held.sessionId), (record) => record.state === "ended"))
        assert.strictEqual(agent.running(), 0)
      })
    )
  )

  it.effect("cancel during a tool call: the call fails TOOL_CANCELLED, the turn is cancelled, the next one works", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        yield* sessions.sendText(ORIGIN, sessionId, "tool")
        const offered = yield* watch(sessionId, (e) => e.type === "tool_call")
        const pending = yield* agentCalls(sessionId, { text: "wait" })
        yield* Fiber.join(offered)
        assert.strictEqual(yield* status(sessionId), "waiting_tool_result")
        const done = yield* watch(sessionId, completion)
        assert.deepStrictEqual(yield* sessions.cancel(ORIGIN, sessionId), { cancelled: true })
        assert.strictEqual(codeOf(yield* Fiber.await(pending)), "TOOL_CANCELLED")
        const events = yield* Fiber.join(done)
        assert.strictEqual(ofType("turn_completed")(events).at(-1)?.reason, "cancelled")
        assert.deepStrictEqual(
          ofType("tool_call_cancelled")(events).map((e) => e.reason),
          ["TOOL_CANCELLED"]
        )
        assert.strictEqual(yield* status(sessionId), "idle")
        assert.deepStrictEqual(yield* sessions.cancel(ORIGIN, sessionId), { cancelled: false })
        const next = yield* watch(sessionId, (e) => completion(e) && e.seq > events.at(-1)!.seq)
        yield* sessions.sendText(ORIGIN, sessionId, "again")
        yield* agent.say({ type: "completed", text: "fine" })
        assert.strictEqual(ofType("turn_completed")(yield* Fiber.join(next)).at(-1)?.reason, "completed")
      })
    )
  )

  it.effect("a failed turn publishes its error, completes as failed and leaves the session idle", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        const seen = yield* watch(sessionId, completion)
        yield* settle
        yield* sessions.sendText(ORIGIN, sessionId, "fail")
        yield* agent.say({ type: "error", code: "PROVIDER_FAILED", message: "model said no", details: {} })
        const events = yield* Fiber.join(seen)
        yield* settle
        assert.strictEqual(ofType("error")(events)[0]?.error.code, "PROVIDER_FAILED")
        assert.strictEqual(ofType("turn_completed")(events)[0]?.reason, "failed")
        assert.strictEqual(yield* status(sessionId), "idle")
      })
    )
  )

  it.effect("a silent provider stalls; a call with the page stops the stall clock", () =>
    withCore(
      (agent) =>
        Effect.gen(function* () {
          const sessions = yield* Sessions
          const { sessionId } = yield* created()
          yield* sessions.sendText(ORIGIN, sessionId, "think")
          const offered = yield* watch(sessionId, (e) => e.type === "tool_call")
          const call = yield* agentCalls(sessionId, { text: "long" })
          const [offer] = ofType("tool_call")(yield* Fiber.join(offered))
          const done = yield* watch(sessionId, completion)
          // Longer than the stall timeout, all of it waiting on the page: no stall.
          for (let i = 0; i < 6; i++) {
            yield* TestClock.adjust(900)
            yield* (yield* ToolRouter).progress(yield* sessions.live(sessionId), offer?.toolCallId as ToolCallId)
          }
          assert.isUndefined(done.pollUnsafe())
          yield* submit(sessionId, offer?.toolCallId as ToolCallId, "back")
          yield* Fiber.join(call)
          yield* advance(2_600)
          const events = yield* Fiber.join(done)
          assert.strictEqual(ofType("error")(events)[0]?.error.code, "PROVIDER_STALLED")
          assert.strictEqual(agent.sent.length, 1)
        }),
      { stallTimeoutMs: 2_000 }
    )
  )

  it.effect("a claim moves to the newest claimant: the call is offered to it alone, only it may answer", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const tools = yield* ToolRouter
        const { sessionId } = yield* created()
        const tab = (connection: number, claimant: string) =>
          Effect.forkChild(Stream.runDrain(sessions.subscribe(ORIGIN, sessionId, 0, true, { connection, claimant })), {
            startImmediately: true
          })
        const seen = yield* watch(sessionId, completion, 0, false)
        yield* tab(1, "tab-one-claim")
        yield* sessions.sendText(ORIGIN, sessionId, "tool")
        const call = yield* agentCalls(sessionId, { text: "a" })
        yield* settle
        const second = yield* tab(2, "tab-two-claim")
        yield* settle
        const session = yield* sessions.live(sessionId)
        const answer = (connection: number) =>
          Effect.exit(tools.submit(session, offeredId(session), { ok: true, result: { connection } }, connection))
        // The tab that lost the claim and a tab that never claimed are refused; the newest claimant answers.
        assert.strictEqual(codeOf(yield* answer(1)), "TOOL_NOT_CLAIMED")
        assert.strictEqual(codeOf(yield* answer(3)), "TOOL_NOT_CLAIMED")
        assert.deepStrictEqual(yield* answer(2), Exit.succeed(true))
        assert.include(JSON.stringify(yield* Fiber.join(call)), '"connection":2')
        // The newest claimant leaves: the claim goes back to the tab still there.
        yield* Fiber.interrupt(second)
        const next = yield* agentCalls(sessionId, { text: "b" })
        yield* settle
        yield* agent.say({ type: "completed", text: "ok" })
        yield* Fiber.interrupt(next)
        const offers = ofType("tool_call")(yield* Fiber.join(seen)).map((e) => [e.args, e.claimant])
        assert.deepStrictEqual(offers, [
          [{ text: "a" }, "tab-one-claim"],
          [{ text: "a" }, "tab-two-claim"],
          [{ text: "b" }, "tab-one-claim"]
        ])
      })
    )
  )

  it.effect("end with a call pending ends at once: the call hears SESSION_ENDED before the turn is stopped", () =>
    withCore(() =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created()
        yield* claimant(sessionId)
        yield* sessions.sendText(ORIGIN, sessionId, "tool")
        const rest = yield* watch(sessionId, (e) => e.type === "ended", 0, false)
        const pending = yield* agentCalls(sessionId, { text: "wait" })
        yield* settle
        // No clock moves: nothing of the end may wait on a timer (a grace, a timeout).
        yield* sessions.end(ORIGIN, sessionId)
        assert.strictEqual(codeOf(yield* Fiber.await(pending)), "SESSION_ENDED")
        const types = (yield* Fiber.join(rest)).map((e) => e.type)
        assert.isBelow(types.indexOf("tool_call_cancelled"), types.indexOf("turn_completed"))
        assert.strictEqual(types.at(-1), "ended")
      })
    )
  )

  it.effect("end during a tool call: the call hears SESSION_ENDED, the process and the workspace are gone", () =>
    withCore((agent) =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const info = yield* created()
        yield* sessions.sendText(ORIGIN, info.sessionId, "tool")
        const offered = yield* watch(info.sessionId, (e) => e.type === "tool_call")
        const pending = yield* agentCalls(info.sessionId, { text: "wait" })
        yield* Fiber.join(offered)
        assert.strictEqual(agent.running(), 1)
        const rest = yield* watch(info.sessionId, (e) => e.type === "ended")
        yield* sessions.end(ORIGIN, info.sessionId)
        assert.strictEqual(codeOf(yield* Fiber.await(pending)), "SESSION_ENDED")
        const events = yield* Fiber.join(rest)
        assert.deepStrictEqual(
          events
            .filter((e) => e.type === "tool_call_cancelled" || e.type === "turn_completed" || e.type === "ended")
            .map((e) => e.type),
          ["tool_call_cancelled", "turn_completed", "ended"]
        )
        assert.strictEqual(agent.running(), 0)
        assert.strictEqual((yield* (yield* SessionStore).load(info.sessionId)).state, "ended")
        const exists = yield* Effect.promise(() => import("node:fs").then((fs) => fs.existsSync(info.workspace.path)))
        assert.isFalse(exists)
        // Ending again is fine (idempotent); another origin may not end it or see it.
        yield* sessions.end(ORIGIN, info.sessionId)
        assert.strictEqual(codeOf(yield* Effect.exit(sessions.end(OTHER_ORIGIN, info.sessionId))), "SESSION_ENDED")
      })
    )
  )

  it.effect("another origin is refused; revoking an origin ends its sessions only", () =>
    withCore(() =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const mine = yield* created()
        const theirs = yield* sessions.create(OTHER_ORIGIN, { provider: "scripted" })
        assert.strictEqual(
          codeOf(yield* Effect.exit(sessions.resume(OTHER_ORIGIN, mine.sessionId))),
          "SESSION_ACCESS_DENIED"
        )
        assert.deepStrictEqual(yield* sessions.revokeOrigin(ORIGIN), { ended: 1 })
        assert.deepStrictEqual(
          (yield* sessions.list(undefined)).map((info) => info.sessionId),
          [theirs.sessionId]
        )
      })
    )
  )

  it.effect("a restart replays by seq, and completes a turn the crashed Core left open as failed", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const agent = yield* makeFakeAgent
      // The first Core is never shut down cleanly: its scope stays open until the test ends, like a SIGKILL.
      const first = yield* Layer.build(machinery(home, agent))
      const { sessionId, before } = yield* Effect.gen(function* () {
        const sessions = yield* Sessions
        const { sessionId } = yield* created({ autoEndOnDisconnect: false })
        const seen = yield* watch(sessionId, completion)
        yield* settle
        yield* sessions.sendText(ORIGIN, sessionId, "one")
        yield* agent.say({ type: "delta", text: "a" }, { type: "completed", text: "a" })
        const before = yield* Fiber.join(seen)
        yield* sessions.sendText(ORIGIN, sessionId, "left open")
        yield* settle
        return { sessionId, before }
      }).pipe(Effect.provide(first))
      const second = yield* Layer.build(machinery(home, yield* makeFakeAgent))
      yield* Effect.gen(function* () {
        const sessions = yield* Sessions
        const resumed = yield* sessions.resume(ORIGIN, sessionId)
        assert.strictEqual(resumed.status, "idle")
        const replay = yield* collect(sessions.subscribe(ORIGIN, sessionId, 2, true), (e) => e.seq >= resumed.lastSeq)
        const events = yield* Fiber.join(replay)
        const seqs = events.map((e) => e.seq)
        assert.deepStrictEqual(
          seqs,
          Array.from({ length: resumed.lastSeq - 2 }, (_, i) => i + 3)
        )
        assert.deepStrictEqual(
          events.slice(0, before.length - 2).map((e) => e.type),
          before.slice(2).map((e) => e.type)
        )
        const failed = ofType("turn_completed")(events).at(-1)
        assert.strictEqual(failed?.reason, "failed")
        assert.strictEqual(failed?.error?.code, "INTERNAL_ERROR")
      }).pipe(Effect.provide(second))
    })
  )
})
