/** ChatCompletions over real HTTP, with requests shaped like opencode 1.18.33's (@ai-sdk/openai-compatible). */
import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_TEXT } from "../../src/model-server/Script.ts"
import { opencodeRequest } from "./shapes.ts"
import { call, json, parseSse, useModelServer } from "./support.ts"

const server = useModelServer()

/** The chunks before `data: [DONE]`, which must be the last frame and the only one that is not JSON. */
const stream = async (body: unknown) => {
  const reply = await call(server(), "/v1/chat/completions", body)
  assert.strictEqual(reply.status, 200)
  assert.strictEqual(reply.contentType, "text/event-stream")
  const frames = parseSse(reply.text)
  assert.deepStrictEqual(frames.at(-1), { event: undefined, data: "[DONE]" })
  const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.data))
  const id = chunks[0].id
  for (const chunk of chunks) {
    assert.strictEqual(chunk.object, "chat.completion.chunk")
    assert.strictEqual(chunk.id, id)
  }
  return chunks
}

const user = (content: unknown) => ({ role: "user", content })

describe("Chat Completions (opencode)", () => {
  it("streams a TEXT answer: role, content deltas, finish_reason stop, usage, [DONE]", async () => {
    const chunks = await stream(opencodeRequest([user("TEXT[hello opencode]END")]))
    assert.deepStrictEqual(chunks[0].choices, [
      { index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }
    ])
    const content = chunks.slice(1, -2).map((chunk) => chunk.choices[0].delta.content)
    assert.strictEqual(content.length, 3)
    assert.strictEqual(content.join(""), "hello opencode")
    assert.deepStrictEqual(chunks.at(-2).choices, [{ index: 0, delta: {}, finish_reason: "stop" }])
    assert.deepStrictEqual(chunks.at(-1).choices, [])
    assert.deepStrictEqual(chunks.at(-1).usage, { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 })
  })

  it("sends no usage chunk unless stream_options.include_usage asks for it", async () => {
    const chunks = await stream({ ...opencodeRequest([user("TEXT[x]END")]), stream_options: undefined })
    assert.strictEqual(chunks.at(-1).choices[0].finish_reason, "stop")
    assert.isTrue(chunks.every((chunk) => chunk.usage === undefined))
  })

  it("RUN calls opencode's bash with command and the required description", async () => {
    const chunks = await stream(opencodeRequest([user([{ type: "text", text: "RUN[echo PEDELEC_OK]END" }])]))
    const opened = chunks[1].choices[0].delta.tool_calls[0]
    assert.strictEqual(opened.index, 0)
    assert.strictEqual(opened.type, "function")
    assert.strictEqual(opened.function.name, "bash")
    assert.strictEqual(opened.function.arguments, "")
    assert.match(opened.id, /^call_/)
    const pieces = chunks.slice(2, -2).map((chunk) => chunk.choices[0].delta.tool_calls[0].function.arguments)
    assert.isAbove(pieces.length, 1)
    assert.deepStrictEqual(JSON.parse(pieces.join("")), {
      command: "echo PEDELEC_OK",
      description: "Runs the scripted command"
    })
    assert.strictEqual(chunks.at(-2).choices[0].finish_reason, "tool_calls")
  })

  it("answers the role:tool message of a resumed history with its content", async () => {
    const chunks = await stream(
      opencodeRequest([
        user("RUN[echo PEDELEC_OK]END"),
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"echo"}' } }]
        },
        { role: "tool", tool_call_id: "call_1", content: "PEDELEC_OK\n" }
      ])
    )
    const text = chunks
      .slice(1, -2)
      .map((chunk) => chunk.choices[0].delta.content)
      .join("")
    assert.strictEqual(text, "tool said: PEDELEC_OK\n")
  })

  it("answers without a stream: a text, and a tool call with its arguments as a JSON string", async () => {
    const text = json(
      await call(server(), "/v1/chat/completions", { ...opencodeRequest([user("TEXT[whole]END")]), stream: false })
    )
    assert.strictEqual(text.object, "chat.completion")
    assert.deepStrictEqual(text.choices, [
      { index: 0, message: { role: "assistant", content: "whole" }, finish_reason: "stop" }
    ])
    const tool = json(
      await call(server(), "/v1/chat/completions", {
        ...opencodeRequest([user('TOOL[read]ARGS[{"filePath":"a.txt"}]END')]),
        stream: undefined
      })
    )
    assert.strictEqual(tool.choices[0].finish_reason, "tool_calls")
    assert.strictEqual(tool.choices[0].message.tool_calls[0].function.name, "read")
    assert.strictEqual(tool.choices[0].message.tool_calls[0].function.arguments, '{"filePath":"a.txt"}')
  })

  it("gives opencode's title generation (no tools) the default text even when the prompt fails", async () => {
    const chunks = await stream({ ...opencodeRequest([user("FAIL_HTTP[500]END")]), tools: undefined })
    const text = chunks
      .slice(1, -2)
      .map((chunk) => chunk.choices[0].delta.content)
      .join("")
    assert.strictEqual(text, DEFAULT_TEXT)
  })

  it("FAIL_HTTP answers OpenAI's error body with that status", async () => {
    const reply = await call(server(), "/v1/chat/completions", opencodeRequest([user("FAIL_HTTP[404]END")]))
    assert.strictEqual(reply.status, 404)
    assert.strictEqual(reply.contentType, "application/json")
    assert.deepStrictEqual(json(reply).error.code, "model_not_found")
    assert.strictEqual(json(reply).error.message, "scripted failure (FAIL_HTTP 404)")
  })

  it("GARBAGE sends frames that are not JSON and no [DONE]", async () => {
    const reply = await call(server(), "/v1/chat/completions", opencodeRequest([user("GARBAGE")]))
    assert.strictEqual(reply.status, 200)
    const frames = parseSse(reply.text)
    assert.notInclude(
      frames.map((frame) => frame.data),
      "[DONE]"
    )
    for (const frame of frames) assert.throws(() => JSON.parse(frame.data))
  })
})
