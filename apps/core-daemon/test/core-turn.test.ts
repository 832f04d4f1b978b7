import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import { script } from "@pedelec/providers/scripted/Script"
import { collectEvents, coreForFile, hostClient, isType, ORIGIN } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const core = coreForFile()

const tools = [
  {
    name: "add",
    description: "Adds two integers.",
    argsSchema: {
      type: "object" as const,
      properties: { a: { type: "integer" as const }, b: { type: "integer" as const } },
      required: ["a", "b"],
      additionalProperties: false as const
    }
  },
  {
    name: "echo",
    description: "Echoes text back.",
    argsSchema: { type: "object" as const, properties: { text: { type: "string" as const } }, required: ["text"] }
  }
]

describe("a turn through a real Core, a real scripted agent and the real pedelec-cli", () => {
  it.live(
    "a turn with two tool calls answered by the client completes with one completion",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const session = yield* client["session.create"]({
          origin: ORIGIN,
          input: { provider: "scripted", skills: { guidance: "Be brief.", tools } }
        })
        const events = yield* collectEvents(
          client["session.subscribe"]({ origin: ORIGIN, sessionId: session.sessionId, afterSeq: 0, claimTools: true })
        )
        const text = script("say starting", 'call add {"a":2,"b":3}', 'call echo {"text":"hi"}', "say done")
        const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId: session.sessionId, text })
        for (const expected of [
          { tool: "add", result: 5 },
          { tool: "echo", result: "hi" }
        ]) {
          const call = yield* events.next(isType("tool_call"))
          assert.strictEqual(call.tool, expected.tool)
          assert.strictEqual(call.turnId, turnId)
          const args = call.args as Record<string, unknown>
          const result = call.tool === "add" ? (args.a as number) + (args.b as number) : args.text
          const { accepted } = yield* client["tool.submit_result"]({
            origin: ORIGIN,
            sessionId: session.sessionId,
            toolCallId: call.toolCallId,
            outcome: { ok: true, result: result as number }
          })
          assert.isTrue(accepted)
          assert.deepStrictEqual(result, expected.result)
        }
        const completed = yield* events.next(isType("turn_completed"))
        assert.strictEqual(completed.reason, "completed")
        assert.strictEqual(completed.turnId, turnId)
        assert.strictEqual(completed.text, "done")
        const seen: ReadonlyArray<SessionEvent> = events.seen
        const beforeCompletion = seen[seen.indexOf(completed) - 1]
        assert.deepInclude(beforeCompletion, { type: "status_changed", status: "idle" }, "idle before the completion")
        assert.deepStrictEqual(
          seen.map((event) => event.seq),
          seen.map((_, index) => index + 1),
          "every event once, in seq order"
        )
        const chats = seen.filter(isType("chat")).map((event) => event.text)
        assert.include(chats.join("\n"), '"result":5')
        assert.include(chats.join("\n"), '"result":"hi"')
        assert.strictEqual(seen.filter(isType("turn_completed")).length, 1)
        const statuses = seen.filter(isType("status_changed")).map((event) => event.status)
        assert.deepStrictEqual(statuses, [
          "running",
          "waiting_tool_result",
          "running",
          "waiting_tool_result",
          "running",
          "idle"
        ])
        yield* client["session.end"]({ origin: ORIGIN, sessionId: session.sessionId })
      }).pipe(Effect.scoped),
    60_000
  )
})
