/** AnthropicMessages over real HTTP, with requests shaped like claude 2.1.197's. */
import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_TEXT } from "../../src/model-server/Script.ts"
import { claudeRequest } from "./shapes.ts"
import { call, json, parseSse, useModelServer } from "./support.ts"

const server = useModelServer()

const CLAUDE_HEADERS = {
  "x-api-key": "sk-ant-fake",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219"
}

const stream = async (body: unknown) => {
  const reply = await call(server(), "/v1/messages?beta=true", body, { headers: CLAUDE_HEADERS })
  assert.strictEqual(reply.status, 200)
  assert.strictEqual(reply.contentType, "text/event-stream")
  const frames = parseSse(reply.text)
  const events = frames.map((frame) => JSON.parse(frame.data))
  for (const [i, frame] of frames.entries()) assert.strictEqual(frame.event, events[i].type)
  return events
}

/** claude's prompt: its context reminders and the prompt as text blocks of one user message. */
const prompt = (text: string) => ({
  role: "user",
  content: [
    { type: "text", text: "<system-reminder>As you answer, use this context.</system-reminder>" },
    { type: "text", text }
  ]
})

const textOf = (events: ReadonlyArray<{ type: string; delta?: { text?: string } }>) =>
  events
    .filter((event) => event.type === "content_block_delta")
    .map((event) => event.delta?.text)
    .join("")

describe("Anthropic Messages (claude)", () => {
  it("streams a TEXT answer as message_start, content_block_start/delta/stop, message_delta, message_stop", async () => {
    const events = await stream(claudeRequest([prompt("TEXT[hello claude]END")]))
    assert.deepStrictEqual(
      events.map((event) => event.type),
      [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop"
      ]
    )
    const start = events[0].message
    assert.strictEqual(start.role, "assistant")
    assert.strictEqual(start.model, "claude-opus-4-8")
    assert.deepStrictEqual(start.content, [])
    assert.isNull(start.stop_reason)
    assert.deepStrictEqual(events[1], {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" }
    })
    for (const event of events.slice(2, 5)) assert.strictEqual(event.delta.type, "text_delta")
    assert.strictEqual(textOf(events), "hello claude")
    assert.deepStrictEqual(events[6].delta, { stop_reason: "end_turn", stop_sequence: null })
    assert.strictEqual(events[6].usage.output_tokens, 10)
  })

  it("RUN calls Bash, its input streamed as input_json_delta pieces", async () => {
    const events = await stream(claudeRequest([prompt("RUN[pedelec-cli --thread-id t1 tool-call page_title '{}']END")]))
    const block = events[1].content_block
    assert.strictEqual(block.type, "tool_use")
    assert.strictEqual(block.name, "Bash")
    assert.match(block.id, /^toolu_/)
    assert.deepStrictEqual(block.input, {})
    const pieces = events.filter((event) => event.type === "content_block_delta")
    assert.isAbove(pieces.length, 1)
    for (const piece of pieces) assert.strictEqual(piece.delta.type, "input_json_delta")
    assert.deepStrictEqual(JSON.parse(pieces.map((piece) => piece.delta.partial_json).join("")), {
      command: "pedelec-cli --thread-id t1 tool-call page_title '{}'"
    })
    assert.strictEqual(events.at(-2).delta.stop_reason, "tool_use")
    assert.strictEqual(events.at(-1).type, "message_stop")
  })

  it("answers a tool_result even when claude put role:system messages after it", async () => {
    const events = await stream(
      claudeRequest([
        prompt("RUN[echo PEDELEC_OK]END"),
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo" } }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "text", text: "PEDELEC_OK" }],
              is_error: false
            },
            { type: "text", text: "<system-reminder>a todo list</system-reminder>" }
          ]
        },
        { role: "system", content: "mid-conversation system message" }
      ])
    )
    assert.strictEqual(textOf(events), "tool said: PEDELEC_OK")
  })

  it("RECALL answers the earlier user texts of a resumed session", async () => {
    const events = await stream(
      claudeRequest([
        { role: "user", content: "first question" },
        { role: "assistant", content: [{ type: "text", text: "first answer" }] },
        { role: "system", content: "ignored" },
        { role: "user", content: "RECALL" }
      ])
    )
    assert.strictEqual(textOf(events), "first question")
  })

  it("gives the title-generation call (no tools) the default text", async () => {
    const title = { ...claudeRequest([prompt("FAIL_HTTP[500]END")], []), stream: false }
    const reply = await call(server(), "/v1/messages?beta=true", title, { headers: CLAUDE_HEADERS })
    assert.strictEqual(reply.status, 200)
    const body = json(reply)
    assert.strictEqual(body.type, "message")
    assert.deepStrictEqual(body.content, [{ type: "text", text: DEFAULT_TEXT }])
    assert.strictEqual(body.stop_reason, "end_turn")
  })

  it("answers a tool call without a stream as one message", async () => {
    const body = { ...claudeRequest([prompt('TOOL[Read]ARGS[{"file_path":"/a"}]END')]), stream: false }
    const message = json(await call(server(), "/v1/messages", body))
    assert.strictEqual(message.stop_reason, "tool_use")
    assert.strictEqual(message.content[0].type, "tool_use")
    assert.strictEqual(message.content[0].name, "Read")
    assert.deepStrictEqual(message.content[0].input, { file_path: "/a" })
  })

  it("FAIL_HTTP answers Anthropic's error body with that status", async () => {
    for (const [status, type] of [
      [400, "invalid_request_error"],
      [401, "authentication_error"],
      [403, "permission_error"],
      [429, "rate_limit_error"],
      [500, "api_error"],
      [529, "overloaded_error"]
    ] as const) {
      const reply = await call(server(), "/v1/messages?beta=true", claudeRequest([prompt(`FAIL_HTTP[${status}]END`)]))
      assert.strictEqual(reply.status, status)
      assert.deepStrictEqual(json(reply), {
        type: "error",
        error: { type, message: `scripted failure (FAIL_HTTP ${status})` }
      })
    }
  })

  it("GARBAGE sends a 200 event stream that is not the protocol", async () => {
    const reply = await call(server(), "/v1/messages?beta=true", claudeRequest([prompt("GARBAGE")]))
    assert.strictEqual(reply.status, 200)
    for (const frame of parseSse(reply.text)) assert.throws(() => JSON.parse(frame.data))
  })

  it("answers count_tokens and the HEAD / preflight", async () => {
    const count = await call(server(), "/v1/messages/count_tokens?beta=true", claudeRequest([prompt("hi")]))
    assert.strictEqual(count.status, 200)
    assert.deepStrictEqual(json(count), { input_tokens: 100 })
    const head = await call(server(), "/", undefined, { method: "HEAD" })
    assert.strictEqual(head.status, 200)
    assert.strictEqual(head.text, "")
  })
})
