/**
 * AnthropicMessages — the Anthropic Messages API as claude speaks it: `POST …/messages` (claude adds `?beta=true`),
 * `POST …/messages/count_tokens`, and the `HEAD /` preflight claude sends to its base URL before the first call.
 * Reads `system`, `messages` (including the `role: "system"` items claude inserts mid-conversation) and `tools` into
 * a Conversation, and writes an Answer as SSE (`stream: true`) or one message object.
 *
 * Stream: message_start, content_block_start (a text block, or a tool_use block with empty input),
 * content_block_delta × n (`text_delta`, or `input_json_delta` pieces of the arguments), content_block_stop,
 * message_delta (stop_reason "end_turn" or "tool_use", output usage), message_stop.
 */

import type { ServerResponse } from "node:http"
import { anthropicError } from "./Errors.ts"
import { asArray, asObject, asString, type JsonObject, textOf } from "./Json.ts"
import { type Conversation, type Message, message, type Reply } from "./Script.ts"
import { deltas, type ModelRequest, newId, openSse, type Protocol, sendJson, USAGE } from "./Wire.ts"

const blocks = (content: unknown): ReadonlyArray<JsonObject> =>
  typeof content === "string" ? [{ type: "text", text: content }] : asArray(content).map(asObject)

const readMessage = (value: unknown): Message | undefined => {
  const m = asObject(value)
  const parts = blocks(m.content)
  const text = textOf(parts.filter((block) => block.type === "text"))
  switch (m.role) {
    case "system":
      return message("system", text)
    case "user":
      return message("user", text, {
        toolResults: parts.filter((block) => block.type === "tool_result").map((block) => textOf(block.content))
      })
    case "assistant":
      return message("assistant", text, {
        toolCalls: parts
          .filter((block) => block.type === "tool_use")
          .map((block) => ({ name: asString(block.name), args: block.input }))
      })
    default:
      return undefined
  }
}

const readMessages = (body: JsonObject): Conversation => {
  const system = textOf(body.system)
  return {
    tools: asArray(body.tools).map((value) => {
      const tool = asObject(value)
      return { name: asString(tool.name), schema: asObject(tool.input_schema) }
    }),
    messages: [
      ...(system === "" ? [] : [message("system", system)]),
      ...asArray(body.messages).flatMap((m) => readMessage(m) ?? [])
    ],
    jsonSchema: undefined
  }
}

const USAGE_FIELDS = {
  input_tokens: USAGE.input,
  output_tokens: USAGE.output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0
}

const reply = (res: ServerResponse, { body, streaming }: ModelRequest, answer: Reply): void => {
  const block =
    answer._tag === "Text"
      ? { type: "text", text: answer.text }
      : { type: "tool_use", id: newId("toolu"), name: answer.name, input: answer.args }
  const stopReason = answer._tag === "Text" ? "end_turn" : "tool_use"
  const head = { id: newId("msg"), type: "message", role: "assistant", model: asString(body.model) }
  if (!streaming) {
    const usage = USAGE_FIELDS
    sendJson(res, 200, { ...head, content: [block], stop_reason: stopReason, stop_sequence: null, usage })
    return
  }

  const sse = openSse(res)
  const send = (type: string, fields: JsonObject) => sse.send({ type, ...fields }, type)
  const start = {
    ...head,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...USAGE_FIELDS, output_tokens: 1 }
  }
  send("message_start", { message: start })
  if (answer._tag === "Text") {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
    for (const text of deltas(answer.text))
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text } })
  } else {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } })
    for (const partial of deltas(JSON.stringify(answer.args)))
      send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: partial } })
  }
  send("content_block_stop", { index: 0 })
  send("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: USAGE.output }
  })
  send("message_stop", {})
  sse.end()
}

export const AnthropicMessages: Protocol = {
  read: readMessages,
  streams: (body) => body.stream === true,
  framing: "sse",
  errorBody: anthropicError,
  reply
}

export const answerCountTokens = (res: ServerResponse): void => sendJson(res, 200, { input_tokens: USAGE.input })

/** claude checks that its base URL answers at all; any status will do, 200 with no body is the plainest. */
export const answerPreflight = (res: ServerResponse): void => {
  res.writeHead(200)
  res.end()
}
