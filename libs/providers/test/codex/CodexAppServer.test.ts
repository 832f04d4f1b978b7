/**
 * CodexAppServer on real `codex app-server` 0.171.0 output (captured by hand against the scripted model server, one
 * turn of a new process each, the request ids the adapter's own): the requests a turn writes, and what the lines
 * decode to, as exec's decoder gives them where the two overlap.
 */
import { readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { CodexAppServerTurn, type CodexThreadSettings } from "../../src/codex/CodexAppServer.ts"
import type { OutputLine } from "../../src/OutputLines.ts"

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "app-server")
const SETTINGS: CodexThreadSettings = { cwd: "/ws", sandbox: "workspace-write", approvalPolicy: "never" }
const METADATA_WARNING =
  "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."
const clean = { skipped: 0, ignored: 0 }

const linesOf = (text: string): Array<OutputLine> => text.split("\n").map((line) => ({ _tag: "Text", text: line }))

/** A new process's turn: begun as the adapter begins it, then fed the fixture; its replies are collected. */
const run = (fixture: string, providerSessionId?: string) => {
  const turn = new CodexAppServerTurn({ next: 0 }, SETTINGS)
  const written = [...turn.begin("hi", true, providerSessionId)]
  const events = linesOf(readFileSync(path.join(FIXTURES, fixture), "utf8")).flatMap((line) => {
    const decoded = turn.decode(line)
    written.push(...turn.replies())
    return decoded
  })
  return { turn, events, written: written.map((line) => JSON.parse(line)) }
}

describe("CodexAppServer requests", () => {
  it("a new thread: initialize, initialized, thread/start with the session's settings; turn/start after its answer", () => {
    const { written } = run("text-turn.jsonl")
    assert.deepStrictEqual(
      written.map((message) => [message.id, message.method]),
      [
        [1, "initialize"],
        [undefined, "initialized"],
        [2, "thread/start"],
        [3, "turn/start"]
      ]
    )
    assert.deepStrictEqual(written[2].params, SETTINGS)
    assert.deepStrictEqual(written[3].params, {
      threadId: "01a23332-fad2-7ab1-914a-d5cf77be0864",
      input: [{ type: "text", text: "hi", text_elements: [] }]
    })
  })

  it("initialize opts out of the notifications a turn drops (output and reasoning deltas), and of none it decodes", () => {
    const { written } = run("text-turn.jsonl")
    const optedOut: Array<string> = written[0].params.capabilities.optOutNotificationMethods
    const dropped = ["item/commandExecution/outputDelta", "item/reasoning/textDelta", "account/rateLimits/updated"]
    for (const method of dropped) assert.include(optedOut, method)
    const decoded = ["turn/started", "item/agentMessage/delta", "item/started", "item/completed", "turn/completed"]
    for (const method of [...decoded, "thread/tokenUsage/updated", "error", "warning", "configWarning"])
      assert.notInclude(optedOut, method)
  })

  it("a resumed thread: thread/resume by id without its history; a warm process's turn is turn/start alone", () => {
    const resumed = new CodexAppServerTurn({ next: 0 }, { ...SETTINGS, model: "o4" })
    const [, , thread] = resumed.begin("hi", true, "t-1").map((line) => JSON.parse(line))
    assert.deepStrictEqual(thread, {
      id: 2,
      method: "thread/resume",
      params: { threadId: "t-1", ...SETTINGS, model: "o4", excludeTurns: true }
    })
    const ids = { next: 7 }
    const warm = new CodexAppServerTurn(ids, SETTINGS)
    assert.deepStrictEqual(
      warm.begin("again", false, "t-1").map((line) => JSON.parse(line)),
      [
        {
          id: 8,
          method: "turn/start",
          params: { threadId: "t-1", input: [{ type: "text", text: "again", text_elements: [] }] }
        }
      ]
    )
  })

  it("turn/interrupt names the running turn once codex said it; before that there is nothing to name", () => {
    const turn = new CodexAppServerTurn({ next: 0 }, SETTINGS)
    turn.begin("hi", false, "t-1")
    assert.isUndefined(turn.interrupt())
    turn.decode({ _tag: "Text", text: JSON.stringify({ id: 1, result: { turn: { id: "turn-1" } } }) })
    assert.deepStrictEqual(JSON.parse(turn.interrupt()!), {
      id: 2,
      method: "turn/interrupt",
      params: { threadId: "t-1", turnId: "turn-1" }
    })
  })

  it("a request from codex (an approval) is refused at once, so codex never waits", () => {
    const turn = new CodexAppServerTurn({ next: 0 }, SETTINGS)
    const request = { id: 0, method: "item/commandExecution/requestApproval", params: { threadId: "t", turnId: "u" } }
    assert.deepStrictEqual(turn.decode({ _tag: "Text", text: JSON.stringify(request) }), [])
    const [reply] = turn.replies().map((line) => JSON.parse(line))
    assert.deepStrictEqual([reply.id, reply.error.code], [0, -32601])
    assert.deepStrictEqual(turn.replies(), [])
  })
})

describe("CodexAppServer on real codex app-server 0.171.0 output", () => {
  it("a text turn: the thread id, the deltas, the message, usage, the completion; the metadata warning is a warning", () => {
    const { turn, events } = run("text-turn.jsonl")
    assert.deepStrictEqual(events, [
      { type: "session", providerSessionId: "01a23332-fad2-7ab1-914a-d5cf77be0864" },
      { type: "delta", text: "hello" },
      { type: "delta", text: " from" },
      { type: "delta", text: " codex" },
      { type: "message", text: "hello from codex" },
      { type: "usage", inputTokens: 100, outputTokens: 10 },
      { type: "completed" }
    ])
    assert.deepStrictEqual(turn.counts, clean)
    assert.deepStrictEqual(turn.warnings, [METADATA_WARNING])
  })

  it("a sandboxed command: its start, its outcome, then the answer; usage summed over the turn's two model calls", () => {
    const { turn, events } = run("tool-turn.jsonl")
    const types = events.map((event) => event.type)
    assert.deepStrictEqual(types, [
      "session",
      "tool_activity",
      "tool_activity",
      "delta",
      "delta",
      "delta",
      "message",
      "usage",
      "completed"
    ])
    const [started, finished] = events.filter((event) => event.type === "tool_activity")
    assert.include(started?.type === "tool_activity" && started.detail, "echo hi > $PROBE_OUTSIDE")
    assert.strictEqual(finished?.type === "tool_activity" && finished.detail, "finished")
    assert.include(JSON.stringify(events.at(-3)), "Read-only file system")
    assert.deepStrictEqual(events.at(-2), { type: "usage", inputTokens: 200, outputTokens: 20 })
    assert.deepStrictEqual(turn.counts, clean)
  })

  it("a refused key (HTTP 401) is PROVIDER_AUTH_REQUIRED, and the error notification is kept as the last error", () => {
    const { turn, events } = run("http-401.jsonl")
    const last = events.at(-1)
    assert.strictEqual(last?.type === "error" && last.code, "PROVIDER_AUTH_REQUIRED")
    assert.include(last?.type === "error" && last.message, "401 Unauthorized")
    assert.include(turn.lastError ?? "", "401 Unauthorized")
    assert.strictEqual(events.filter((event) => event.type === "error").length, 1)
  })

  it("a model error (HTTP 400): PROVIDER_FAILED with the API's own message and codes, as exec's decoder gives it", () => {
    const { events } = run("http-400.jsonl")
    assert.deepStrictEqual(events.at(-1), {
      type: "error",
      code: "PROVIDER_FAILED",
      message: "scripted failure (FAIL_HTTP 400)",
      details: { provider: "codex", apiErrorType: "invalid_request_error", apiErrorCode: "scripted" }
    })
  })

  it("an interrupted turn ends with an error (WarmProcess keeps it quiet); the interrupt's own answer is nothing", () => {
    const { events } = run("interrupted.jsonl")
    assert.deepStrictEqual(events.slice(-1), [
      { type: "error", code: "PROVIDER_FAILED", message: "The turn was interrupted.", details: { provider: "codex" } }
    ])
    assert.deepStrictEqual(
      events.map((event) => event.type),
      ["session", "tool_activity", "error"]
    )
  })

  it("resuming a thread codex has no record of fails the turn with codex's words", () => {
    const { events, written } = run("resume-unknown.jsonl", "01a2332b-0000-7000-8000-000000000000")
    assert.deepStrictEqual(events, [
      {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "no rollout found for thread id 01a2332b-0000-7000-8000-000000000000",
        details: { provider: "codex" }
      }
    ])
    assert.isFalse(written.some((message) => message.method === "turn/start"))
  })

  it("unreadable and unknown lines are counted, never events", () => {
    const turn = new CodexAppServerTurn({ next: 0 }, SETTINGS)
    const lines: Array<OutputLine> = [
      { _tag: "Invalid", bytes: 3 },
      { _tag: "Text", text: "not json" },
      { _tag: "Text", text: JSON.stringify({ method: "some/new/notification", params: {} }) },
      { _tag: "Text", text: JSON.stringify({ method: "item/completed", params: { item: { type: "newKind" } } }) },
      { _tag: "Text", text: JSON.stringify({ method: "turn/completed", params: { turn: {} } }) }
    ]
    assert.deepStrictEqual(
      lines.flatMap((line) => turn.decode(line)),
      []
    )
    assert.deepStrictEqual(turn.counts, { skipped: 3, ignored: 2 })
  })
})
