import { assert, describe, it } from "@effect/vitest"
import { ClaudeTurnDecoder } from "../../src/claude/ClaudeEvents.ts"
import { decoding } from "../support.ts"

const { decode, fixture, lines } = decoding("claude", () => new ClaudeTurnDecoder())

const SESSION = "46762d75-d34a-4d21-ba10-566715232bbb"
const clean = { skipped: 0, ignored: 0 }

describe("ClaudeEvents on real claude 2.1.197 output", () => {
  it("a text turn: session id, the two deltas, the message, usage and the completion", () => {
    const { events, counts } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "delta", text: "hello from th" },
      { type: "delta", text: "e fake model" },
      { type: "message", text: "hello from the fake model" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "completed", text: "hello from the fake model" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a resumed tool turn: the same session id, the Bash call and its end as tool activity, then the answer", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "tool_activity", name: "Bash", detail: `pedelec-cli --thread-id t1 tool-call page_title '{"tab":1}'` },
      { type: "tool_activity", name: "Bash", detail: "finished" },
      { type: "delta", text: "do" },
      { type: "delta", text: "ne" },
      { type: "message", text: "done" },
      { type: "usage", inputTokens: 200, outputTokens: 20 },
      { type: "completed", text: "done" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 400 turn is an error even though its result says subtype success; the synthetic message is not chat", () => {
    const { events, counts } = fixture("http-400.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "3cf6505f-28f7-4d5a-9531-b5d3e1b761d0" },
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "API Error: 400 scripted failure (FAIL_HTTP)",
        details: { provider: "claude", subtype: "success", apiErrorStatus: 400 }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 401 turn asks for authentication", () => {
    const { events } = fixture("http-401.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_AUTH_REQUIRED",
      message: "Invalid API key · Fix external API key",
      details: { provider: "claude", subtype: "success", apiErrorStatus: 401 }
    })
  })

  it("a resume claude cannot find (another folder) fails with claude's own words", () => {
    const { events, counts } = fixture("resume-missing.jsonl")
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: `No conversation found with session ID: ${SESSION}`,
        details: { provider: "claude", subtype: "error_during_execution", apiErrorStatus: null }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })
})

describe("ClaudeEvents on hand-made lines", () => {
  const assistant = (content: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
    type: "assistant",
    message: { role: "assistant", content },
    parent_tool_use_id: null,
    session_id: SESSION,
    ...extra
  })

  it("a turn stopped by an interrupt: the acknowledgement is known, the refused command is activity, then an error", () => {
    const { events, counts } = fixture("interrupted-turn.jsonl")
    assert.deepStrictEqual(
      events.map((event) => event.type),
      ["session", "tool_activity", "tool_activity", "usage", "error"]
    )
    const [, started, stopped, , error] = events
    assert.deepStrictEqual(started, { type: "tool_activity", name: "Bash", detail: "sleep 30" })
    assert.match(stopped?.type === "tool_activity" ? (stopped.detail ?? "") : "", /^failed: The user doesn't want/)
    // WarmProcess drops this error for a turn it interrupted; any other stop is a failure.
    assert.strictEqual(error?.type === "error" && error.details?.subtype, "error_during_execution")
    assert.deepStrictEqual(counts, clean)
  })

  it("thinking blocks and thinking deltas never become chat", () => {
    const { events, counts } = lines(
      {
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }
      },
      assistant([
        { type: "thinking", thinking: "secret plan", signature: "x" },
        { type: "text", text: "answer" }
      ]),
      assistant([{ type: "redacted_thinking", data: "…" }])
    )
    assert.deepStrictEqual(events, [{ type: "message", text: "answer" }])
    assert.deepStrictEqual(counts, clean)
  })

  it("a subagent's text is not the conversation's chat, but its tool use is activity", () => {
    const sub = { parent_tool_use_id: "toolu_parent" }
    const { events } = lines(
      {
        type: "stream_event",
        event: { type: "content_block_delta", delta: { type: "text_delta", text: "x" } },
        ...sub
      },
      assistant(
        [
          { type: "text", text: "inner" },
          { type: "tool_use", id: "t2", name: "Read", input: { file_path: "a.txt" } }
        ],
        sub
      )
    )
    assert.deepStrictEqual(events, [{ type: "tool_activity", name: "Read", detail: "a.txt" }])
  })

  it("a denied command is tool activity that says why", () => {
    const { events } = lines(
      assistant([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "curl example.com" } }]),
      {
        type: "user",
        message: {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "This command requires approval", is_error: true }
          ]
        }
      }
    )
    assert.deepStrictEqual(events, [
      { type: "tool_activity", name: "Bash", detail: "curl example.com" },
      { type: "tool_activity", name: "Bash", detail: "failed: This command requires approval" }
    ])
  })

  it("'Please run /login' without a status is an authentication error", () => {
    const { events } = lines({
      type: "result",
      subtype: "success",
      is_error: true,
      result: "Not logged in · Please run /login"
    })
    assert.strictEqual(events[0]?.type === "error" && events[0].code, "PROVIDER_AUTH_REQUIRED")
  })

  it("unknown line types are ignored and counted; unreadable lines are skipped and counted; the rest still decode", () => {
    const decoded = decode([
      { _tag: "Text", text: "not json" },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ type: "rate_limit_event", info: {} }) },
      { _tag: "Text", text: JSON.stringify({ type: "system", subtype: "init" }) },
      { _tag: "Text", text: JSON.stringify({ type: "system", subtype: "status", status: "requesting" }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "ok" }) }
    ])
    assert.deepStrictEqual(decoded.events, [{ type: "completed", text: "ok" }])
    assert.deepStrictEqual(decoded.counts, { skipped: 3, ignored: 1 })
  })
})
