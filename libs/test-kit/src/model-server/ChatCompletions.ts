/**
 * ChatCompletions — `POST …/chat/completions`, the OpenAI Chat Completions API as opencode's
 * `@ai-sdk/openai-compatible` provider speaks it: reading `messages` and `tools` into a Conversation, and writing an
 * Answer as SSE chunks (`stream: true`) or one chat.completion object.
 *
 * Stream: a chunk with `delta.role`, then for a text one chunk per delta of `delta.content`, for a tool call a chunk
 * opening `delta.tool_calls[0]` (id, name, empty arguments) and one per piece of its arguments; then a chunk with
 * `finish_reason` ("stop" or "tool_calls"), a usage chunk with empty `choices` when `stream_options.include_usage`
 * asked for it, and `data: [DONE]`.
 */

import type { ServerResponse } from "node:http"
import { openAiError } from "./Errors.ts"
import { asArray, asObject, asString, type JsonObject, textOf } from "./Json.ts"
import { type Conversation, type Message, message, type Reply, type ToolCall } from "./Script.ts"
import { deltas, type ModelRequest, newId, nowSeconds, openSse, type Protocol, sendJson, USAGE } from "./Wire.ts"

/** Chat Completions carries the arguments as the JSON string the model sent, Ollama as the object itself. */
const toolCallOf = (value: unknown): ToolCall => {
  const fn = asObject(asObject(value).function)
  if (typeof fn.arguments !== "string") return { name: asString(fn.name), args: fn.arguments }
  try {
    return { name: asString(fn.name), args: JSON.parse(fn.arguments) }
  } catch {
    return { name: asString(fn.name), args: fn.arguments }
  }
}

const readMessage = (value: unknown): Message | undefined => {
  const m = asObject(value)
  switch (m.role) {
    case "system":
    case "developer":
      return message("system", textOf(m.content))
    case "user":
      return message("user", textOf(m.content))
    case "assistant":
      return message("assistant", textOf(m.content), { toolCalls: asArray(m.tool_calls).map(toolCallOf) })
    case "tool":
      return message("user", "", { toolResults: [textOf(m.content)] })
    default:
      return undefined
  }
}

/** Also reads Ollama's /api/chat, whose messages and tools have the same shape. */
export const readChat = (body: JsonObject): Conversation => ({
  tools: asArray(body.tools).map((value) => {
    const fn = asObject(asObject(value).function)
    return { name: asString(fn.name), schema: asObject(fn.parameters) }
  }),
  messages: asArray(body.messages).flatMap((m) => readMessage(m) ?? []),
  jsonSchema: undefined
})

const USAGE_FIELDS = {
  prompt_tokens: USAGE.input,
  completion_tokens: USAGE.output,
  total_tokens: USAGE.input + USAGE.output
}

const reply = (res: ServerResponse, { body, streaming }: ModelRequest, answer: Reply): void => {
  const head = { id: newId("chatcmpl"), created: nowSeconds(), model: asString(body.model) }
  const finishReason = answer._tag === "Text" ? "stop" : "tool_calls"
  const callId = newId("call")
  const args = answer._tag === "ToolCall" ? JSON.stringify(answer.args) : ""

  if (!streaming) {
    const message =
      answer._tag === "Text"
        ? { role: "assistant", content: answer.text }
        : {
            role: "assistant",
            content: null,
            tool_calls: [{ id: callId, type: "function", function: { name: answer.name, arguments: args } }]
          }
    const choice = { index: 0, message, finish_reason: finishReason }
    sendJson(res, 200, { ...head, object: "chat.completion", choices: [choice], usage: USAGE_FIELDS })
    return
  }

  const sse = openSse(res)
  const chunk = (delta: JsonObject, finish: string | null = null) =>
    sse.send({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })
  chunk({ role: "assistant", content: "" })
  if (answer._tag === "Text") {
    for (const piece of deltas(answer.text)) chunk({ content: piece })
  } else {
    chunk({ tool_calls: [{ index: 0, id: callId, type: "function", function: { name: answer.name, arguments: "" } }] })
    for (const piece of deltas(args)) chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })
  }
  chunk({}, finishReason)
  if (asObject(body.stream_options).include_usage === true)
    sse.send({ ...head, object: "chat.completion.chunk", choices: [], usage: USAGE_FIELDS })
  sse.sendRaw("[DONE]")
  sse.end()
}

export const ChatCompletions: Protocol = {
  read: readChat,
  streams: (body) => body.stream === true,
  framing: "sse",
  errorBody: openAiError,
  reply
}
