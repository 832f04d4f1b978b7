import { assert, describe, it } from "@effect/vitest"
import { GeminiTurnDecoder } from "../../src/gemini/GeminiEvents.ts"
import { decoding } from "../support.ts"

const { decode, fixture, lines } = decoding("gemini", () => new GeminiTurnDecoder())

const TOOL_SESSION = "d2c3acec-c934-4129-ac78-522b25fe3904"
const clean = { skipped: 0, ignored: 0 }
const COMMAND = `pedelec-cli --thread-id t1 tool-call page_title '{"tab":1}'`

describe("GeminiEvents on real gemini 0.61.0 output", () => {
  it("a text turn: the deltas, the message they make, usage, then the session id with the completion", () => {
    const { events, counts } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "delta", text: "hello fro" },
      { type: "delta", text: "m the scri" },
      { type: "delta", text: "pted model" },
      { type: "message", text: "hello from the scripted model" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "session", providerSessionId: "73b43ed7-c089-41e5-97cd-a0324767f95f" },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a tool turn: the shell call that ran the stub pedelec-cli (PEDELEC_* reached it), its end, then the answer", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    const parts = [
      "tool said: <untrusted_context>\nOutput: STUB pedelec-cli args: --thread-id t1 too",
      `l-call page_title {"tab":1}\nTHREAD=t1 CAP=cap-secret-123 HOME_P=/tmp/gem/phome\n{`,
      `"ok":true,"result":"Example Page"}\nProcess Group PGID: 24438\n</untrusted_context>`
    ]
    assert.deepStrictEqual(events, [
      { type: "tool_activity", name: "run_shell_command", detail: COMMAND },
      { type: "tool_activity", name: "run_shell_command", detail: "finished" },
      ...parts.map((text) => ({ type: "delta" as const, text })),
      { type: "message", text: parts.join("") },
      { type: "usage", inputTokens: 200, outputTokens: 20 },
      { type: "session", providerSessionId: TOOL_SESSION },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("the resumed turn keeps the session id", () => {
    const { events, counts } = fixture("resumed-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "delta", text: "re" },
      { type: "delta", text: "su" },
      { type: "delta", text: "med" },
      { type: "message", text: "resumed" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "session", providerSessionId: TOOL_SESSION },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 400 turn fails with gemini's text and the status, and reports no session (gemini keeps none)", () => {
    const { events, counts } = fixture("http-400.jsonl")
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: `[API Error: {"error":{"code":400,"message":"scripted failure (FAIL_HTTP 400)","status":"INVALID_ARGUMENT"}}]`,
        details: { provider: "gemini", errorType: "unknown", apiErrorStatus: 400 }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 401 turn asks for authentication", () => {
    const { events } = fixture("http-401.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_AUTH_REQUIRED",
      message: `[API Error: {"error":{"code":401,"message":"scripted failure (FAIL_HTTP 401)","status":"UNAUTHENTICATED"}}]`,
      details: { provider: "gemini", errorType: "unknown", apiErrorStatus: 401 }
    })
  })
})

describe("GeminiEvents on hand-made lines", () => {
  const delta = (content: string) => ({ type: "message", role: "assistant", content, delta: true })

  it("a whole assistant message replaces the deltas before it; the echoed prompt is not chat", () => {
    const { events, counts } = lines(
      { type: "message", role: "user", content: "do it" },
      delta("par"),
      { type: "message", role: "assistant", content: "partial, then whole" },
      { type: "result", status: "success" }
    )
    assert.deepStrictEqual(events, [
      { type: "delta", text: "par" },
      { type: "message", text: "partial, then whole" },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("text before a tool call is its own message; a denied command is tool activity that says why", () => {
    const { events } = lines(
      delta("Let me look."),
      { type: "tool_use", tool_name: "run_shell_command", tool_id: "c1", parameters: { command: "curl x" } },
      {
        type: "tool_result",
        tool_id: "c1",
        status: "error",
        output: "Tool execution denied by policy.",
        error: { type: "policy_violation", message: "Tool execution denied by policy." }
      },
      { type: "tool_use", tool_name: "read_file", tool_id: "c2", parameters: { file_path: "a.txt" } }
    )
    assert.deepStrictEqual(events, [
      { type: "delta", text: "Let me look." },
      { type: "message", text: "Let me look." },
      { type: "tool_activity", name: "run_shell_command", detail: "curl x" },
      { type: "tool_activity", name: "run_shell_command", detail: "failed: Tool execution denied by policy." },
      { type: "tool_activity", name: "read_file", detail: "a.txt" }
    ])
  })

  it("warnings change nothing; an error line gives the reason of a result that has none", () => {
    const { events, counts } = lines(
      { type: "error", severity: "warning", message: "Agent execution blocked: x" },
      { type: "error", severity: "error", message: "Model stream ended with an invalid chunk." },
      { type: "result", status: "error", stats: { input_tokens: 0, output_tokens: 0 } }
    )
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "Model stream ended with an invalid chunk.",
        details: { provider: "gemini", errorType: null, apiErrorStatus: null }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("Google's invalid-key answer (an HTTP 400) asks for authentication", () => {
    const message = `[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]`
    const { events } = lines({ type: "result", status: "error", error: { type: "unknown", message } })
    assert.strictEqual(events[0]?.type === "error" && events[0].code, "PROVIDER_AUTH_REQUIRED")
  })

  it("unknown line types are ignored and counted; unreadable lines are skipped and counted; the rest still decode", () => {
    const decoded = decode([
      { _tag: "Text", text: "Warning: 256-color support not detected." },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ type: "thought", content: "hmm" }) },
      { _tag: "Text", text: JSON.stringify({ type: "init", session_id: "" }) },
      { _tag: "Text", text: JSON.stringify({ type: "message", role: "assistant" }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify({ type: "result", status: "success" }) }
    ])
    assert.deepStrictEqual(decoded.events, [{ type: "completed" }])
    assert.deepStrictEqual(decoded.counts, { skipped: 4, ignored: 1 })
  })
})
