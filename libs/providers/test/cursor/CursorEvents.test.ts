import { assert, describe, it } from "@effect/vitest"
import { CursorTurnDecoder } from "../../src/cursor/CursorEvents.ts"
import { decoding } from "../support.ts"

const { decode, fixture, lines } = decoding("cursor", () => new CursorTurnDecoder())

const SESSION = "7b1c5a2e-4f3d-4e6a-9c1b-2d8e0f3a5b61"
const clean = { skipped: 0, ignored: 0 }
const assistant = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "assistant",
  message: { role: "assistant", content: [{ type: "text", text }] },
  session_id: SESSION,
  ...extra
})
const success = (result: string) => ({ type: "result", subtype: "success", is_error: false, result })

describe("CursorEvents on the hand-written fixtures", () => {
  it("a plain text turn: session id, the message (thinking is not chat), usage with cached input, completion", () => {
    const { events, counts } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "message", text: "Hello from Cursor." },
      { type: "usage", inputTokens: 1500, outputTokens: 8 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("with partial output: the deltas stream, the whole repeat closes them as one message", () => {
    const { events, counts } = fixture("delta-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "delta", text: "Hel" },
      { type: "delta", text: "lo from " },
      { type: "delta", text: "Cursor." },
      { type: "message", text: "Hello from Cursor." },
      { type: "usage", inputTokens: 1500, outputTokens: 8 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a tool turn: each model call's message once, the pedelec-cli call and the failed read as tool activity", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "a3f09d4c-8b2e-4c71-b6d5-0e9f1a2b3c4d" },
      { type: "delta", text: "Checking" },
      { type: "delta", text: " the page title." },
      { type: "message", text: "Checking the page title." },
      { type: "tool_activity", name: "shell", detail: `pedelec-cli tool-call page_title '{"tab":1}'` },
      { type: "tool_activity", name: "shell", detail: "finished" },
      { type: "tool_activity", name: "read", detail: "/tmp/ws/notes.txt" },
      { type: "tool_activity", name: "read", detail: "failed: File not found: /tmp/ws/notes.txt" },
      { type: "delta", text: "The title" },
      { type: "delta", text: " is Example." },
      { type: "message", text: "The title is Example." },
      { type: "usage", inputTokens: 7448, outputTokens: 61 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a resumed turn reports the session id it resumed", () => {
    const { events } = fixture("resumed-turn.jsonl")
    assert.deepStrictEqual(events[0], { type: "session", providerSessionId: SESSION })
    assert.deepStrictEqual(events.at(-3), { type: "message", text: "You asked me to say hello." })
    assert.deepStrictEqual(events.at(-1), { type: "completed" })
  })

  it("a failing result is an error with cursor's own words, not an answer", () => {
    const { events, counts } = fixture("error-result.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "Model gpt-9 is not available. Run `cursor-agent models` to list the models you can use.",
        details: { provider: "cursor", subtype: "error" }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })
})

describe("CursorEvents on hand-made lines", () => {
  it("thinking and the echoed prompt never become chat", () => {
    const { events, counts } = lines(
      { type: "thinking", subtype: "delta", text: "secret plan", timestamp_ms: 1 },
      { type: "thinking", subtype: "completed", timestamp_ms: 2 },
      { type: "user", message: { role: "user", content: [{ type: "text", text: "the prompt" }] } },
      assistant("answer")
    )
    assert.deepStrictEqual(events, [{ type: "message", text: "answer" }])
    assert.deepStrictEqual(counts, clean)
  })

  it("the turn's last message repeated after it was said is not said twice", () => {
    const { events } = lines(assistant("done", { model_call_id: "m-0", timestamp_ms: 5 }), assistant("done"))
    assert.deepStrictEqual(events, [{ type: "message", text: "done" }])
  })

  it("the result is the chat only when nothing else was said", () => {
    assert.deepStrictEqual(lines(success("only here")).events, [
      { type: "message", text: "only here" },
      { type: "completed" }
    ])
    assert.deepStrictEqual(lines(assistant("streamed", { timestamp_ms: 1 }), success("streamed")).events, [
      { type: "delta", text: "streamed" },
      { type: "completed" }
    ])
  })

  it("a rejected command, a failing shell command and an unnamed tool are activity that says what happened", () => {
    const call = (subtype: string, toolCall: Record<string, unknown>) => ({
      type: "tool_call",
      subtype,
      call_id: "c1",
      tool_call: toolCall
    })
    const { events, counts } = lines(
      call("completed", {
        shellToolCall: { args: { command: "curl example.com" }, result: { rejected: { reason: "Not allowed" } } }
      }),
      call("completed", { shellToolCall: { args: { command: "false" }, result: { success: { exitCode: 1 } } } }),
      call("started", { toolCallId: "c1" })
    )
    assert.deepStrictEqual(events, [
      { type: "tool_activity", name: "shell", detail: "failed: Not allowed" },
      { type: "tool_activity", name: "shell", detail: "failed: exit code 1" },
      { type: "tool_activity", name: "tool" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a failing result that names the login is an authentication error", () => {
    const { events } = lines({
      type: "result",
      subtype: "error",
      is_error: true,
      result: "Authentication required. Run 'agent login' first."
    })
    assert.strictEqual(events[0]?.type === "error" && events[0].code, "PROVIDER_AUTH_REQUIRED")
  })

  it("unknown line types are ignored and counted; unreadable lines are skipped and counted; the rest still decode", () => {
    const decoded = decode([
      { _tag: "Text", text: "not json" },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ type: "connection", subtype: "reconnecting" }) },
      { _tag: "Text", text: JSON.stringify({ type: "system", subtype: "init" }) },
      { _tag: "Text", text: JSON.stringify({ type: "assistant", message: "not blocks" }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify(success("ok")) }
    ])
    assert.deepStrictEqual(decoded.events, [{ type: "message", text: "ok" }, { type: "completed" }])
    assert.deepStrictEqual(decoded.counts, { skipped: 4, ignored: 1 })
  })
})
