import { assert, describe, it } from "@effect/vitest"
import { CodexTurnDecoder } from "../../src/codex/CodexEvents.ts"
import type { OutputLine } from "../../src/OutputLines.ts"
import { decoding } from "../support.ts"

const codex = decoding("codex", () => new CodexTurnDecoder())
const withWarnings = (decoded: ReturnType<typeof codex.decode>) => ({ ...decoded, warnings: decoded.decoder.warnings })
const fixture = (name: string) => withWarnings(codex.fixture(name))
const lines = (...objects: ReadonlyArray<unknown>) => withWarnings(codex.lines(...objects))
const decode = (outputLines: ReadonlyArray<OutputLine>) => withWarnings(codex.decode(outputLines))

const THREAD = "01a2297c-faf9-7a31-bba3-0a98311945d1"
const METADATA_WARNING =
  "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."
const clean = { skipped: 0, ignored: 0 }
const session = (id: string) => ({ type: "session" as const, providerSessionId: id })

describe("CodexEvents on real codex-cli 0.171.0 output", () => {
  it("a text turn: session id, the message, usage, the completion; the metadata warning is only a warning", () => {
    const { events, counts, warnings } = fixture("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      session("01a2297c-c51f-72a3-bff6-70ef02befbf7"),
      { type: "message", text: "hello there" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
    assert.deepStrictEqual(warnings, [METADATA_WARNING])
  })

  it("a tool turn: pedelec-cli ran with its argv and the session capability, then the answer", () => {
    const { events, counts } = fixture("tool-turn.jsonl")
    const command = `/bin/bash -c "pedelec-cli --thread-id t1 tool-call page_title '{\\"tab\\":1}'"`
    assert.deepStrictEqual(events, [
      session(THREAD),
      { type: "tool_activity", name: "shell", detail: command },
      { type: "tool_activity", name: "shell", detail: "finished" },
      {
        type: "message",
        text:
          "tool said: Chunk ID: 09ca8a\nWall time: 0.2300 seconds\nProcess exited with code 0\nOriginal token count: 21\n" +
          'Output:\npedelec-cli argv: --thread-id t1 tool-call page_title {"tab":1}\ncap: cap-secret-123\n'
      },
      { type: "usage", inputTokens: 200, outputTokens: 20 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("a failing command is activity that says how it failed; the turn still completes", () => {
    const { events, warnings } = fixture("tool-failed.jsonl")
    assert.deepStrictEqual(events.slice(1, 3), [
      { type: "tool_activity", name: "shell", detail: "/bin/bash -c 'ls /nonexistent-dir'" },
      {
        type: "tool_activity",
        name: "shell",
        detail: "failed, exit code 2: ls: cannot access '/nonexistent-dir': No such file or directory"
      }
    ])
    assert.deepStrictEqual(events.at(-1), { type: "completed" })
    // A catalog model (`--model gpt-5.5`) has metadata: no warning.
    assert.deepStrictEqual(warnings, [])
  })

  it("a resumed turn reports the same thread id", () => {
    const { events, counts } = fixture("resumed-turn.jsonl")
    assert.deepStrictEqual(events, [
      session(THREAD),
      { type: "message", text: "resumed and still here" },
      { type: "usage", inputTokens: 400, outputTokens: 40 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 400 turn fails with the API's message, taken out of the JSON body codex passes through", () => {
    const { events, counts } = fixture("http-400.jsonl")
    assert.deepStrictEqual(events, [
      session("01a2297d-6282-7f51-a004-19a8c0d9aa8e"),
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "scripted failure (FAIL_HTTP 400)",
        details: { provider: "codex", apiErrorType: "invalid_request_error", apiErrorCode: "scripted" }
      }
    ])
    assert.deepStrictEqual(counts, clean)
  })

  it("an HTTP 401 turn asks for authentication", () => {
    const { events } = fixture("http-401.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_AUTH_REQUIRED",
      message:
        "unexpected status 401 Unauthorized: scripted failure (FAIL_HTTP 401), url: http://127.0.0.1:38183/v1/responses",
      details: { provider: "codex" }
    })
  })

  it("an unset API-key variable asks for authentication", () => {
    const { events } = fixture("missing-key.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_AUTH_REQUIRED",
      message: "Missing environment variable: `FAKE_API_KEY`.",
      details: { provider: "codex" }
    })
  })

  it("retry notices on top-level error lines are warnings; only turn.failed ends the turn", () => {
    const { events, warnings } = fixture("http-500-retries.jsonl")
    const demand = "We’re currently experiencing high demand, which may cause temporary errors."
    assert.deepStrictEqual(events, [
      session("01a2297f-4184-7610-ae79-d06a38322ea0"),
      { type: "error", code: "PROVIDER_FAILED", message: demand, details: { provider: "codex" } }
    ])
    assert.deepStrictEqual(warnings, [`Reconnecting... 1/2 (${demand})`, `Reconnecting... 2/2 (${demand})`, demand])
  })
})

describe("CodexEvents on hand-made lines", () => {
  const item = (phase: string, fields: Record<string, unknown>) => ({ type: phase, item: { id: "item_9", ...fields } })

  it("reasoning and todo lists never become chat or activity, and are not counted as unknown", () => {
    const { events, counts } = lines(
      item("item.completed", { type: "reasoning", text: "secret plan" }),
      item("item.updated", { type: "todo_list", items: [{ text: "x", completed: false }] }),
      item("item.completed", { type: "agent_message", text: "answer" })
    )
    assert.deepStrictEqual(events, [{ type: "message", text: "answer" }])
    assert.deepStrictEqual(counts, clean)
  })

  it("file changes, MCP calls and web searches are tool activity", () => {
    const { events } = lines(
      item("item.completed", {
        type: "file_change",
        changes: [{ path: "a.txt", kind: "update" }],
        status: "completed"
      }),
      item("item.started", { type: "mcp_tool_call", server: "docs", tool: "search", status: "in_progress" }),
      item("item.completed", {
        type: "mcp_tool_call",
        server: "docs",
        tool: "search",
        status: "failed",
        error: { message: "boom" }
      }),
      item("item.started", { type: "web_search", query: "effect schema" })
    )
    assert.deepStrictEqual(events, [
      { type: "tool_activity", name: "file_change", detail: "update a.txt" },
      { type: "tool_activity", name: "docs.search" },
      { type: "tool_activity", name: "docs.search", detail: "failed: boom" },
      { type: "tool_activity", name: "web_search", detail: "effect schema" }
    ])
  })

  it("a ChatGPT login that expired asks for authentication", () => {
    const { events } = lines({
      type: "turn.failed",
      error: { message: "Your access token could not be refreshed. Please log in again." }
    })
    assert.strictEqual(events[0]?.type === "error" && events[0].code, "PROVIDER_AUTH_REQUIRED")
  })

  it("unknown lines and items are ignored and counted; unreadable lines are skipped and counted; the rest decode", () => {
    const decoded = decode([
      { _tag: "Text", text: "not json" },
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: JSON.stringify({ type: "thread.renamed", name: "x" }) },
      { _tag: "Text", text: JSON.stringify(item("item.completed", { type: "collab_tool_call" })) },
      { _tag: "Text", text: JSON.stringify({ type: "thread.started" }) },
      { _tag: "Text", text: JSON.stringify(item("item.completed", { type: "agent_message" })) },
      { _tag: "Text", text: JSON.stringify({ type: "item.completed", item: "nope" }) },
      { _tag: "Text", text: "" },
      { _tag: "Text", text: JSON.stringify({ type: "turn.completed" }) }
    ])
    assert.deepStrictEqual(decoded.events, [{ type: "completed" }])
    assert.deepStrictEqual(decoded.counts, { skipped: 5, ignored: 2 })
  })
})
