/** OpenAIResponses over real HTTP, with requests shaped like codex 0.171.0's. */
import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_TEXT } from "../../src/model-server/Script.ts"
import { CODEX_TOOLS, codexRequest, codexUser } from "./shapes.ts"
import { call, json, parseSse, useModelServer } from "./support.ts"

const server = useModelServer()

const stream = async (body: unknown) => {
  const reply = await call(server(), "/v1/responses", body)
  assert.strictEqual(reply.status, 200)
  assert.strictEqual(reply.contentType, "text/event-stream")
  const frames = parseSse(reply.text)
  const events = frames.map((frame) => JSON.parse(frame.data))
  // Every frame's `event:` line names the type its data carries; codex dispatches on either.
  for (const [i, frame] of frames.entries()) assert.strictEqual(frame.event, events[i].type)
  assert.deepStrictEqual(
    events.map((event) => event.sequence_number),
    events.map((_, i) => i)
  )
  return events
}

describe("Responses API (codex)", () => {
  it("streams a TEXT answer as the event sequence codex consumes", async () => {
    const events = await stream(codexRequest([codexUser("TEXT[hello codex]END")]))
    assert.deepStrictEqual(
      events.map((event) => event.type),
      [
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed"
      ]
    )
    const deltas = events.filter((event) => event.type === "response.output_text.delta")
    assert.strictEqual(deltas.map((event) => event.delta).join(""), "hello codex")
    const itemId = events[1].item.id
    for (const event of deltas) assert.strictEqual(event.item_id, itemId)
    const done = events.at(-2)
    assert.deepStrictEqual(done.item.content, [{ type: "output_text", text: "hello codex", annotations: [] }])
    const completed = events.at(-1).response
    assert.strictEqual(completed.status, "completed")
    assert.strictEqual(completed.model, "gpt-5.5")
    assert.strictEqual(completed.id, events[0].response.id)
    assert.deepStrictEqual(completed.output, [done.item])
    assert.strictEqual(completed.usage.total_tokens, completed.usage.input_tokens + completed.usage.output_tokens)
  })

  it("RUN calls exec_command with `cmd`, its arguments streamed in pieces", async () => {
    const events = await stream(
      codexRequest([codexUser("RUN[pedelec-cli --thread-id t1 tool-call page_title '{\"tab\":1}']END")])
    )
    assert.deepStrictEqual(
      events.map((event) => event.type),
      [
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed"
      ]
    )
    const added = events[1].item
    const done = events.at(-2).item
    assert.strictEqual(added.type, "function_call")
    assert.strictEqual(added.arguments, "")
    assert.strictEqual(done.name, "exec_command")
    assert.strictEqual(done.call_id, added.call_id)
    const streamed = events.filter((event) => event.type === "response.function_call_arguments.delta")
    assert.strictEqual(streamed.map((event) => event.delta).join(""), done.arguments)
    assert.deepStrictEqual(JSON.parse(done.arguments), {
      cmd: "pedelec-cli --thread-id t1 tool-call page_title '{\"tab\":1}'"
    })
  })

  it("RUN gives the older `shell` tool an argv array", async () => {
    const shell = {
      type: "function",
      name: "shell",
      parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } }
    }
    const events = await stream(codexRequest([codexUser("RUN[echo hi]END")], [shell]))
    assert.deepStrictEqual(JSON.parse(events.at(-2).item.arguments), { command: ["bash", "-c", "echo hi"] })
  })

  it("TOOL on a freeform tool emits a custom_tool_call with the ARGS string as input", async () => {
    const events = await stream(codexRequest([codexUser('TOOL[apply_patch]ARGS["*** Begin Patch"]END')]))
    assert.deepStrictEqual(
      events.map((event) => event.type),
      ["response.created", "response.output_item.added", "response.output_item.done", "response.completed"]
    )
    const item = events.at(-2).item
    assert.strictEqual(item.type, "custom_tool_call")
    assert.strictEqual(item.name, "apply_patch")
    assert.strictEqual(item.input, "*** Begin Patch")
  })

  it("answers the function_call_output of a resumed history with its content", async () => {
    const output = "Chunk ID: 1\nWall time: 0.01\nProcess exited with code 0\nOutput:\nPEDELEC_OK\n"
    const events = await stream(
      codexRequest([
        codexUser("RUN[echo PEDELEC_OK]END"),
        { type: "reasoning", summary: [], encrypted_content: "opaque" },
        { type: "function_call", name: "exec_command", arguments: '{"cmd":"echo PEDELEC_OK"}', call_id: "call_1" },
        { type: "function_call_output", call_id: "call_1", output }
      ])
    )
    const text = events.at(-1).response.output[0].content[0].text
    assert.strictEqual(text, `tool said: ${output}`)
  })

  it("RECALL answers the earlier user texts of a resumed conversation", async () => {
    const events = await stream(
      codexRequest([
        codexUser("my first prompt"),
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] },
        codexUser("RECALL")
      ])
    )
    const text = events.at(-1).response.output[0].content[0].text
    assert.strictEqual(text, "<environment_context><cwd>/tmp/ws</cwd></environment_context>\nmy first prompt")
  })

  it("answers without a stream when the request does not ask for one", async () => {
    const reply = await call(server(), "/v1/responses", {
      ...codexRequest([codexUser("TEXT[whole]END")]),
      stream: false
    })
    assert.strictEqual(reply.status, 200)
    const body = json(reply)
    assert.strictEqual(body.status, "completed")
    assert.strictEqual(body.output[0].content[0].text, "whole")
  })

  it("FAIL_HTTP answers OpenAI's error body with that status", async () => {
    for (const [status, type, code] of [
      [400, "invalid_request_error", "scripted"],
      [401, "invalid_request_error", "invalid_api_key"],
      [429, "rate_limit_error", "rate_limit_exceeded"],
      [500, "server_error", "scripted"]
    ] as const) {
      const reply = await call(server(), "/v1/responses", codexRequest([codexUser(`FAIL_HTTP[${status}]END`)]))
      assert.strictEqual(reply.status, status)
      assert.deepStrictEqual(json(reply), {
        error: { message: `scripted failure (FAIL_HTTP ${status})`, type, param: null, code }
      })
    }
  })

  it("GARBAGE sends a 200 event stream that is not the protocol", async () => {
    const reply = await call(server(), "/v1/responses", codexRequest([codexUser("GARBAGE")]))
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.contentType, "text/event-stream")
    const frames = parseSse(reply.text)
    assert.isAbove(frames.length, 0)
    for (const frame of frames) assert.throws(() => JSON.parse(frame.data))
  })

  it("answers a prompt without a directive with the default text", async () => {
    const events = await stream(codexRequest([codexUser("hello")], CODEX_TOOLS))
    assert.strictEqual(events.at(-1).response.output[0].content[0].text, DEFAULT_TEXT)
  })
})
