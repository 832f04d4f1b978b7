/**
 * A destructive tool's call waits on the user's yes in a window the extension draws (issue 16.1), through the
 * worker's real services over a fake browser: the page does not get the call until Allow, Core is told the call
 * waits on the user, Allow once asks again next time, Allow for this session does not, Deny (or closing the window)
 * answers Core TOOL_DENIED_BY_USER on the page's own connection and the page never sees the call, and a refusal
 * Core did not take is sent again when Core offers the call again, without a new window; a tool the page did not
 * mark passes straight on.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { Confirmations } from "../src/confirm/Confirmations.ts"
import { UiRequests } from "../src/ui/UiRequests.ts"
import { type FakeChromeApi, type FakeWorkerPort, waitUntil } from "./FakeChromeApi.ts"
import {
  A,
  connect,
  hostRequests,
  lastHostRequest,
  posted,
  request,
  responseTo,
  run,
  SESSION,
  sessionInfo
} from "./PagePort.ts"

const argsSchema = { type: "object" as const }
const skills = {
  guidance: "",
  tools: [
    { name: "erase", description: "Erases the draft.", argsSchema, annotations: { destructive: true, title: "Erase" } },
    { name: "read", description: "Reads the draft.", argsSchema }
  ]
}
const call = (toolCallId: string, tool: string, seq: number) => ({
  type: "tool_call",
  sessionId: SESSION,
  seq,
  at: 5,
  turnId: "turn-0001",
  toolCallId,
  tool,
  args: { confirm: "yes please" },
  timeoutMs: 60_000
})

const pageGot = (page: FakeWorkerPort, toolCallId: string) =>
  posted(page).some(
    (m) => m.kind === "event" && (m.event as { toolCallId?: string } | undefined)?.toolCallId === toolCallId
  )

/** An approved session subscribed with its tools claimed, as the SDK opens one. */
const subscribed = (fake: FakeChromeApi) =>
  Effect.gen(function* () {
    const page = yield* connect(fake, A)
    page.emit(request("c1", "session.create", { input: { skills } }))
    yield* waitUntil(() => fake.popups.length === 1, "the approval window")
    yield* TestClock.adjust("1 second")
    const ticket = fake.lastPopup().get("ticket")
    yield* UiRequests.use((ui) => ui.handle({ kind: "approval.decide", ticket, approve: true }, "/approval.html"))
    yield* waitUntil(() => fake.nativePorts.length === 1, "the native link")
    const native = fake.nativePorts[0]!
    const create = yield* lastHostRequest(native, "session.create")
    native.emit({ kind: "response", id: create.id, ok: true, result: sessionInfo(SESSION, A) })
    yield* responseTo(page, "c1")
    page.emit(request("sub", "session.subscribe", { sessionId: SESSION, afterSeq: 0 }))
    const subscription = yield* lastHostRequest(native, "session.subscribe")
    return { page, native, subscription: subscription.id }
  })

const answer = (ticket: string, decision: "once" | "session" | "deny") =>
  UiRequests.use((ui) => ui.handle({ kind: "confirm.decide", ticket, decision }, "/confirm.html"))

const confirmTicket = (fake: FakeChromeApi, windows: number) =>
  Effect.gen(function* () {
    yield* waitUntil(() => fake.popups.length === windows, `confirmation window #${windows - 1}`)
    const popup = fake.popups.at(-1)!
    assert.match(popup.path, /^confirm\.html\?ticket=/)
    return { ticket: fake.lastPopup().get("ticket")!, windowId: popup.windowId }
  })

describe("confirmation of destructive tool calls", () => {
  it.effect("holds the call until the user answers, and answers Core itself on Deny", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription } = yield* subscribed(fake)
        native.emit({ kind: "event", subscription, event: call("call-0001", "erase", 1) })
        const first = yield* confirmTicket(fake, 2)
        const waiting = yield* lastHostRequest(native, "tool.awaiting_user")
        assert.deepStrictEqual(waiting.params, { sessionId: SESSION, toolCallId: "call-0001" })
        assert.isFalse(pageGot(page, "call-0001"), "the page does not see the call before the user allows it")
        assert.isTrue((yield* answer(first.ticket, "once")).ok)
        yield* waitUntil(() => pageGot(page, "call-0001"), "the allowed call reaching the page")
        assert.include(fake.closedWindows, first.windowId)

        native.emit({ kind: "event", subscription, event: call("call-0002", "erase", 2) })
        const second = yield* confirmTicket(fake, 3)
        assert.isTrue((yield* answer(second.ticket, "session")).ok)
        yield* waitUntil(() => pageGot(page, "call-0002"), "the second call")
        native.emit({ kind: "event", subscription, event: call("call-0003", "erase", 3) })
        yield* waitUntil(() => pageGot(page, "call-0003"), "a call allowed for the session passing at once")
        native.emit({ kind: "event", subscription, event: call("call-0004", "read", 4) })
        yield* waitUntil(() => pageGot(page, "call-0004"), "an unmarked tool passing at once")
        assert.strictEqual(fake.popups.length, 3, "no window for either")
        assert.isFalse((yield* answer(second.ticket, "once")).ok, "an answered ticket answers nothing")
      })
    )
  )

  it.effect("Deny and a closed window refuse the call with TOOL_DENIED_BY_USER, and the page never sees it", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription } = yield* subscribed(fake)
        native.emit({ kind: "event", subscription, event: call("call-0001", "erase", 1) })
        const denied = yield* confirmTicket(fake, 2)
        assert.isTrue((yield* answer(denied.ticket, "deny")).ok)
        const submitted = yield* lastHostRequest(native, "tool.submit_result")
        const params = submitted.params as { toolCallId: string; outcome: { ok: boolean; error: { code: string } } }
        assert.strictEqual(params.toolCallId, "call-0001")
        assert.deepStrictEqual([params.outcome.ok, params.outcome.error.code], [false, "TOOL_DENIED_BY_USER"])

        native.emit({ kind: "event", subscription, event: call("call-0002", "erase", 2) })
        const closed = yield* confirmTicket(fake, 3)
        yield* Confirmations.use((confirmations) => confirmations.windowClosed(closed.windowId))
        yield* waitUntil(
          () => hostRequests(native).filter((r) => r.method === "tool.submit_result").length === 2,
          "the closed window's refusal"
        )
        assert.isFalse(pageGot(page, "call-0001") || pageGot(page, "call-0002"), "the page saw a refused call")
      })
    )
  )

  it.effect("a refusal Core did not take is sent again when the call is offered again, without asking again", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription } = yield* subscribed(fake)
        const submits = () => hostRequests(native).filter((r) => r.method === "tool.submit_result")
        native.emit({ kind: "event", subscription, event: call("call-0001", "erase", 1) })
        const denied = yield* confirmTicket(fake, 2)
        assert.isTrue((yield* answer(denied.ticket, "deny")).ok)
        yield* waitUntil(() => submits().length === 1, "the refusal")
        assert.include(fake.closedWindows, denied.windowId, "the window closes at once")
        const lost = { code: "NATIVE_CONNECTION_CLOSED", message: "gone", retryable: true, source: "extension" }
        native.emit({ kind: "response", id: submits()[0]!.id, ok: false, error: lost })
        // Core, never having heard the answer, offers the call again (as after a reconnect).
        native.emit({ kind: "event", subscription, event: call("call-0001", "erase", 1) })
        yield* waitUntil(() => submits().length === 2, "the refusal sent again")
        const again = submits()[1]!.params as { toolCallId: string; outcome: { error: { code: string } } }
        assert.deepStrictEqual([again.toolCallId, again.outcome.error.code], ["call-0001", "TOOL_DENIED_BY_USER"])
        assert.strictEqual(fake.popups.length, 2, "no new window")
        native.emit({ kind: "response", id: submits()[1]!.id, ok: true, result: { accepted: true } })
        assert.isFalse(pageGot(page, "call-0001"), "the page saw the refused call")
      })
    )
  )
})
