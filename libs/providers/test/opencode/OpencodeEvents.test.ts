import { assert, describe, it } from "@effect/vitest"
import { OpencodeTurnDecoder } from "../../src/opencode/OpencodeEvents.ts"
import { decoding } from "../support.ts"

const { decode, fixture, lines } = decoding("opencode", () => new OpencodeTurnDecoder())

const SESSION = "ses_dd67d030fffe5gUB3ssyBZ5xZU"
const clean = { skipped: 0, ignored: 0 }
const DENIED =
  "The user has specified a rule which prevents you from using this specific tool call. Here are some of the " +
  'relevant rules [{"permission":"*","action":"allow","pattern":"*"},{"permission":"*","action":"deny",' +
  '"pattern":"*"},{"permission":"bash","pattern":"*","action":"deny"},{"permission":"bash",' +
  '"pattern":"pedelec-cli *","action":"allow"},{"permission":"bash","pattern":"pedelec-deno *","action":"allow"}]'

describe("OpencodeEvents on real opencode 1.18.33 output", () => {
  it("a text turn: session id, the one message, usage and the completion", () => {
    const { events, counts } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "message", text: "hello from opencode" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a tool turn: the bash call once it finished, the answer, usage summed over both steps", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "ses_dd67caf35ffeCgBTn7wz9UF1uQ" },
      { type: "tool_activity", name: "bash", detail: `pedelec-cli --thread-id t1 tool-call page_title '{"tab":1}'` },
      { type: "message", text: "tool said: PEDELEC_OK thread=t1 cap=set\n" },
      { type: "usage", inputTokens: 200, outputTokens: 20 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a denied command is tool activity that says why, and the turn goes on", () => {
    const { events, counts } = fixture("denied-command.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "ses_dd67a9a35ffeX23mw1UW2x4ewK" },
      { type: "tool_activity", name: "bash", detail: `echo hi — failed: ${DENIED}` },
      { type: "message", text: `tool said: ${DENIED}` },
      { type: "usage", inputTokens: 200, outputTokens: 20 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a resumed turn keeps the session id of the turn it resumes", () => {
    const { events, counts } = fixture("resumed-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: SESSION },
      { type: "message", text: "Say hello. TEXT[hello from opencode]END" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 400 turn fails with the provider's message", () => {
    const { events, counts } = fixture("http-400.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "ses_dd67c16fdffeS3LwUa3nBO3Etv" },
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "scripted failure (FAIL_HTTP 400)",
        details: { provider: "opencode", errorName: "APIError", statusCode: 400 }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 401 turn asks for authentication", () => {
    const { events } = fixture("http-401.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_AUTH_REQUIRED",
      message: "scripted failure (FAIL_HTTP 401)",
      details: { provider: "opencode", errorName: "APIError", statusCode: 401 }
    })
  })
})

describe("OpencodeEvents on hand-made lines", () => {
  const sessionID = "ses_x"
  const stepFinish = (reason: string) => ({
    type: "step_finish",
    sessionID,
    part: { type: "step-finish", reason, tokens: { input: 5, output: 1, reasoning: 2, cache: { read: 3, write: 0 } } }
  })

  it("reasoning never becomes chat, and its tokens count as output", () => {
    const { events, counts } = lines(
      { type: "reasoning", sessionID, part: { type: "reasoning", text: "secret plan" } },
      { type: "text", sessionID, part: { type: "text", text: "answer" } },
      stepFinish("stop")
    )
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: sessionID },
      { type: "message", text: "answer" },
      { type: "usage", inputTokens: 8, outputTokens: 3 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("only tool-calls (and unknown) finishes go on; length ends the turn", () => {
    assert.deepStrictEqual(lines(stepFinish("tool-calls"), stepFinish("unknown")).events.slice(1), [])
    assert.deepStrictEqual(lines(stepFinish("length")).events.at(-1), { type: "completed" })
  })

  it("a provider login error asks for authentication", () => {
    const { events } = lines({
      type: "error",
      sessionID,
      error: { name: "ProviderAuthError", data: { providerID: "anthropic", message: "Missing credentials" } }
    })
    assert.strictEqual(events[1]?.type === "error" && events[1].code, "PROVIDER_AUTH_REQUIRED")
  })

  it("an error without a message still says what ended the turn", () => {
    const { events } = lines({ type: "error", error: { name: "MessageOutputLengthError", data: {} } })
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "opencode ended the turn with MessageOutputLengthError.",
        details: { provider: "opencode", errorName: "MessageOutputLengthError", statusCode: null }
      }
    ])
  })

  it("unknown line types are ignored and counted; unreadable lines are skipped and counted; the rest still decode", () => {
    const decoded = decode([
      { _tag: "Text", text: "not json" },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ type: "file", sessionID, part: {} }) },
      { _tag: "Text", text: JSON.stringify({ type: "text", sessionID, part: { type: "text" } }) },
      { _tag: "Text", text: JSON.stringify({ type: "tool_use", sessionID, part: { type: "tool", tool: "bash" } }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify(stepFinish("stop")) }
    ])
    assert.deepStrictEqual(decoded.events, [
      { type: "session", providerSessionId: sessionID },
      { type: "usage", inputTokens: 8, outputTokens: 3 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(decoded.counts, { skipped: 4, ignored: 1 })
  })
})
