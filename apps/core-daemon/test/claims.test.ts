// What the agent reads first and how a pending call survives its page: the runtime rules and tool index reach a
// fresh provider session only, and a call whose page left is offered again to the page that claims the tools next.
import { readFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import { script } from "@pedelec/providers/scripted/Script"
import {
  chatOf,
  cliLineOf,
  collectEvents,
  completionOf,
  coreForFile,
  hostClient,
  isType,
  ORIGIN,
  openSession,
  type ToolCall
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const core = coreForFile()

const lookup = {
  name: "lookup",
  description: "Finds a word in the page's dictionary.",
  argsSchema: { type: "object" as const, properties: { word: { type: "string" as const } }, required: ["word"] },
  timeoutMs: 45_000,
  annotations: { readOnly: true }
}

describe("the prompt a provider session starts with", () => {
  it.live(
    "a fresh provider session gets the rules, the guidance and the tool index; a resumed one the text alone",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const { sessionId, events } = yield* openSession(client, {
          skills: { guidance: "Answer in one word.", tools: [lookup] }
        })
        // Without a script the scripted agent echoes the start of what it was given.
        const first = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: "first question" })
        yield* events.next(completionOf(first.turnId))
        const [echoed] = chatOf(events, first.turnId)
        assert.match(echoed ?? "", /^echo: # Pedelec runtime rules/)
        const second = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: "second question" })
        yield* events.next(completionOf(second.turnId))
        assert.deepStrictEqual(chatOf(events, second.turnId), ["echo: second question"])

        const specFile = yield* Effect.promise(() =>
          readFile(path.join(core.home, "workspaces", sessionId, ".pedelec-runtime", "skills", "lookup.json"), "utf8")
        )
        assert.deepInclude(JSON.parse(specFile), { name: "lookup", timeoutMs: 45_000 })
      }).pipe(Effect.scoped)
  )
})

describe("a pending call and the page that claims the tools", () => {
  it.live("a call whose page left is offered again to the next claiming page, and answered once", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const tools = { skills: { guidance: "", tools: [lookup] } }
      const { sessionId } = yield* Effect.scoped(openSession(client, tools, { claimTools: false }))
      // The first page claims the tools, sees the call, and goes away without answering.
      const first = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* collectEvents(
            client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true })
          )
          const { turnId } = yield* client["session.send_text"]({
            origin: ORIGIN,
            sessionId,
            text: script('call lookup {"word":"pedal"}')
          })
          const call = yield* events.next(isType("tool_call"))
          return { turnId, call, lastSeq: events.seen.at(-1)?.seq ?? 0 }
        })
      )
      // The second page resumes from where the first stopped and claims the tools: the call comes to it again.
      const events = yield* collectEvents(
        client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: first.lastSeq, claimTools: true })
      )
      const offered: ToolCall = yield* events.next(isType("tool_call"))
      assert.strictEqual(offered.toolCallId, first.call.toolCallId)
      assert.isAbove(offered.seq, first.lastSeq)
      const answer = { origin: ORIGIN, sessionId, toolCallId: offered.toolCallId }
      const accepted = yield* client["tool.submit_result"]({
        ...answer,
        outcome: { ok: true, result: "a bicycle part" }
      })
      const repeated = yield* client["tool.submit_result"]({ ...answer, outcome: { ok: true, result: "again" } })
      assert.deepStrictEqual([accepted.accepted, repeated.accepted], [true, false])
      const completed = yield* events.next(completionOf(first.turnId))
      assert.strictEqual(completed.reason, "completed")
      const line = cliLineOf(events, first.turnId, "lookup")
      assert.deepStrictEqual([line.exit, line.output.result], [0, "a bicycle part"])
      const results = events.seen.filter((event: SessionEvent) => event.type === "tool_result")
      assert.lengthOf(results, 1, "one result for the call, whoever was offered it")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a claim moves to the newest claimant: the call is offered to it, and the old claimant's answer is refused",
    () =>
      Effect.gen(function* () {
        const [firstPage, secondPage] = [yield* hostClient(core.info), yield* hostClient(core.info)]
        const tools = { skills: { guidance: "", tools: [lookup] } }
        const { sessionId } = yield* Effect.scoped(openSession(firstPage, tools, { claimTools: false }))
        const subscribe = (client: typeof firstPage, claimant: string) =>
          collectEvents(
            client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true, claimant })
          )
        const first = yield* subscribe(firstPage, "a".repeat(32))
        const { turnId } = yield* firstPage["session.send_text"]({
          origin: ORIGIN,
          sessionId,
          text: script('call lookup {"word":"pedal"}')
        })
        const call = yield* first.next(isType("tool_call"))
        assert.strictEqual(call.claimant, "a".repeat(32))
        // A second page (its own connection) claims while the call is pending: it is offered the call, by name.
        const second = yield* subscribe(secondPage, "b".repeat(32))
        const offered = yield* second.next(
          (event): event is ToolCall => isType("tool_call")(event) && event.claimant === "b".repeat(32)
        )
        assert.strictEqual(offered.toolCallId, call.toolCallId)
        const answer = { origin: ORIGIN, sessionId, toolCallId: call.toolCallId }
        const stale = yield* Effect.flip(
          firstPage["tool.submit_result"]({ ...answer, outcome: { ok: true, result: "x" } })
        )
        assert.strictEqual((stale as { code?: string }).code, "TOOL_NOT_CLAIMED")
        const accepted = yield* secondPage["tool.submit_result"]({ ...answer, outcome: { ok: true, result: "a part" } })
        assert.isTrue(accepted.accepted)
        const completed = yield* second.next(completionOf(turnId))
        assert.strictEqual(completed.reason, "completed")
        assert.deepStrictEqual(cliLineOf(second, turnId, "lookup").output.result, "a part")
      }).pipe(Effect.scoped)
  )
})
