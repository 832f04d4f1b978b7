import { assert, describe, it } from "@effect/vitest"
import { AntigravityTurnDecoder } from "../../src/antigravity/AntigravityEvents.ts"
import { decoding } from "../support.ts"

const { decode, fixture, lines } = decoding("antigravity", () => new AntigravityTurnDecoder())

const CONVERSATION = "3f2b8c1d-6e4a-4b7f-9a2c-5d1e8f0b7a64"
const clean = { skipped: 0, ignored: 0 }
const step = (fields: Record<string, unknown>) => ({ event: "step_update", step_update: fields })

describe("AntigravityEvents on the hand-written fixtures", () => {
  it("a text turn: conversation id, the deltas, the final response as the message, usage, completion", () => {
    const { events, counts } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: CONVERSATION },
      { type: "delta", text: "Hello from" },
      { type: "delta", text: " Antigravity.\n" },
      { type: "message", text: "Hello from Antigravity.\n" },
      { type: "usage", inputTokens: 9234, outputTokens: 33 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a tool turn: the pedelec-cli command announced once and finished, the failed read with its reason", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "9c4e7a10-2b3d-4f5e-8a6b-7c8d9e0f1a2b" },
      { type: "tool_activity", name: "run_command", detail: `pedelec-cli tool-call page_title '{"tab":1}'` },
      { type: "tool_activity", name: "run_command", detail: "finished" },
      { type: "tool_activity", name: "view_file", detail: "/tmp/ws/notes.txt" },
      { type: "tool_activity", name: "view_file", detail: "failed: file not found: /tmp/ws/notes.txt" },
      { type: "delta", text: "The title " },
      { type: "delta", text: "is Example." },
      { type: "message", text: "The title is Example." },
      { type: "usage", inputTokens: 1400, outputTokens: 100 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a resumed turn reports the conversation it continued", () => {
    const { events } = fixture("resumed-turn.jsonl")
    assert.deepStrictEqual(events[0], { type: "session", providerSessionId: CONVERSATION })
    assert.deepStrictEqual(events.at(-1), { type: "completed" })
  })

  it("a quota refusal is an error with agy's own words", () => {
    const { events, counts } = fixture("error-result.jsonl")
    assert.deepStrictEqual(events.slice(1), [
      { type: "usage", inputTokens: 100, outputTokens: 0 },
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h54m14s.",
        details: { provider: "antigravity", status: "ERROR" }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a refused sign-in asks for authentication", () => {
    const { events } = fixture("auth-failure.jsonl")
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_AUTH_REQUIRED",
        message: "authentication failed or timed out",
        details: { provider: "antigravity", status: "ERROR" }
      }
    ])
  })
})

describe("AntigravityEvents on hand-made lines", () => {
  it("steps other than answers and tools are known and unused; an answer step without text says nothing", () => {
    const { events, counts } = lines(
      step({ step_type: "user_input", state: "DONE" }),
      step({ step_type: "checkpoint", state: "DONE" }),
      step({ step_type: "system_message", state: "DONE" }),
      step({ step_type: "agent_response", state: "DONE", usage: { thinking_tokens: 80 } })
    )
    assert.deepStrictEqual(events, [])
    assert.deepStrictEqual(counts, clean)
  })

  it("a failed turn keeps its answer, then reports the error", () => {
    const { events } = lines({
      event: "result",
      result: { status: "ERROR", response: "Partly done.", error: "Find command timed out." }
    })
    assert.deepStrictEqual(
      events.map((event) => event.type),
      ["message", "error"]
    )
  })

  it("a tool step without tool_info still names the tool", () => {
    const { events } = lines(step({ step_type: "tool", state: "ACTIVE", tool_name: "search_web" }))
    assert.deepStrictEqual(events, [{ type: "tool_activity", name: "search_web" }])
  })

  it("unknown events are ignored and counted; unreadable lines (agy's plain notices) are skipped and counted", () => {
    const decoded = decode([
      { _tag: "Text", text: "⚠ fetching model catalog" },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ event: "heartbeat" }) },
      { _tag: "Text", text: JSON.stringify({ event: "init" }) },
      { _tag: "Text", text: JSON.stringify({ type: "result" }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify({ event: "result", result: { status: "SUCCESS", response: "ok" } }) }
    ])
    assert.deepStrictEqual(decoded.events, [{ type: "message", text: "ok" }, { type: "completed" }])
    assert.deepStrictEqual(decoded.counts, { skipped: 4, ignored: 1 })
  })
})
