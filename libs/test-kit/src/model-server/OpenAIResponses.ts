/**
 * OpenAIResponses — `POST …/responses`, the OpenAI Responses API as codex (wire_api = "responses") speaks it: reading
 * the request's `input` items and `tools` into a Conversation, and writing an Answer as the SSE stream codex consumes
 * (`event:` + `data:` frames) or, without `stream: true`, as one response object.
 *
 * Stream of a text answer: response.created, response.output_item.added (message), response.content_part.added,
 * response.output_text.delta × n, response.output_text.done, response.content_part.done, response.output_item.done,
 * response.completed (with usage). A tool call: response.created, response.output_item.added (function_call),
 * response.function_call_arguments.delta × n, response.function_call_arguments.done, response.output_item.done,
 * response.completed. A call to one of codex's freeform tools (`type: "custom"`) is a custom_tool_call item whose
 * `input` is the ARGS string, with no argument deltas.
 *
 * codex offers an MCP server's tools as one `type: "namespace"` tool (`mcp__pedelec`) holding function tools; the
 * script sees each as `<namespace>__<name>` (`mcp__pedelec__page_title`, codex's own qualified name), and a call to
 * one is a function_call naming the inner tool with its `namespace`, as codex reads it back.
 */

import type { ServerResponse } from "node:http"
import { openAiError } from "./Errors.ts"
import { asArray, asObject, asString, type JsonObject, textOf } from "./Json.ts"
import { type Conversation, type Message, message, type OfferedTool, type Reply } from "./Script.ts"
import { deltas, type ModelRequest, newId, nowSeconds, openSse, type Protocol, sendJson, USAGE } from "./Wire.ts"

const ROLES: Readonly<Record<string, Message["role"]>> = {
  user: "user",
  assistant: "assistant",
  developer: "system",
  system: "system"
}

const parseArguments = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/** A namespaced tool's name as the script knows it. */
const qualified = (namespace: string, name: string): string => (namespace === "" ? name : `${namespace}__${name}`)

const readItem = (value: unknown): Message | undefined => {
  const item = asObject(value)
  const type = asString(item.type)
  if (type === "function_call") {
    const name = qualified(asString(item.namespace), asString(item.name))
    return message("assistant", "", { toolCalls: [{ name, args: parseArguments(asString(item.arguments)) }] })
  }
  if (type === "custom_tool_call")
    return message("assistant", "", { toolCalls: [{ name: asString(item.name), args: item.input }] })
  // function_call_output, custom_tool_call_output, …: codex sends the command's output as text.
  if (type.endsWith("_output")) return message("user", "", { toolResults: [textOf(item.output)] })
  const role = ROLES[asString(item.role)]
  if ((type === "message" || type === "") && role) return message(role, textOf(item.content))
  // reasoning and other items carry nothing the script reads.
  return undefined
}

/** The namespace tools of a request, each with its inner tools. */
const namespaces = (body: JsonObject) =>
  asArray(body.tools)
    .map(asObject)
    .filter((tool) => tool.type === "namespace")
    .map((tool) => ({ namespace: asString(tool.name), tools: asArray(tool.tools).map(asObject) }))

/** The namespace and inner name of an offered namespaced tool the script calls `name`, if it is one. */
const namespaced = (body: JsonObject, name: string) =>
  namespaces(body)
    .flatMap(({ namespace, tools }) => tools.map((tool) => ({ namespace, name: asString(tool.name) })))
    .find((tool) => qualified(tool.namespace, tool.name) === name)

const readResponses = (body: JsonObject): Conversation => {
  const flat: Array<OfferedTool> = asArray(body.tools)
    .map(asObject)
    .filter((tool) => tool.type !== "namespace")
    // Built-in tools such as web_search have a type but no name.
    .map((tool) => ({ name: asString(tool.name) || asString(tool.type), schema: asObject(tool.parameters) }))
  const inner = namespaces(body).flatMap(({ namespace, tools }) =>
    tools.map((tool) => ({ name: qualified(namespace, asString(tool.name)), schema: asObject(tool.parameters) }))
  )
  const tools = [...flat, ...inner]
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : body.input
  const messages = asArray(input).flatMap((item) => readItem(item) ?? [])
  return { tools, messages, jsonSchema: undefined }
}

const isFreeform = (body: JsonObject, name: string): boolean =>
  asArray(body.tools).some((tool) => asObject(tool).type === "custom" && asObject(tool).name === name)

const outputItem = (body: JsonObject, answer: Reply): JsonObject => {
  if (answer._tag === "Text")
    return {
      id: newId("msg"),
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: answer.text, annotations: [] }]
    }
  const callId = newId("call")
  if (isFreeform(body, answer.name)) {
    const input = typeof answer.args === "string" ? answer.args : JSON.stringify(answer.args)
    return {
      id: newId("ctc"),
      type: "custom_tool_call",
      status: "completed",
      call_id: callId,
      name: answer.name,
      input
    }
  }
  const args = JSON.stringify(answer.args)
  const inNamespace = namespaced(body, answer.name)
  return {
    id: newId("fc"),
    type: "function_call",
    status: "completed",
    call_id: callId,
    ...(inNamespace === undefined ? { name: answer.name } : inNamespace),
    arguments: args
  }
}

const USAGE_FIELDS = {
  input_tokens: USAGE.input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: USAGE.output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: USAGE.input + USAGE.output
}

const reply = (res: ServerResponse, { body, streaming }: ModelRequest, answer: Reply): void => {
  const item = outputItem(body, answer)
  const response = { id: newId("resp"), object: "response", created_at: nowSeconds(), model: asString(body.model) }
  const completed = { ...response, status: "completed", output: [item], usage: USAGE_FIELDS }
  if (!streaming) {
    sendJson(res, 200, completed)
    return
  }
  const sse = openSse(res)
  let sequence = 0
  const send = (type: string, fields: JsonObject) => sse.send({ type, sequence_number: sequence++, ...fields }, type)
  const at = { item_id: item.id, output_index: 0 }
  send("response.created", { response: { ...response, status: "in_progress", output: [] } })
  if (answer._tag === "Text") {
    const part = { type: "output_text", text: "", annotations: [] }
    send("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } })
    send("response.content_part.added", { ...at, content_index: 0, part })
    for (const delta of deltas(answer.text)) send("response.output_text.delta", { ...at, content_index: 0, delta })
    send("response.output_text.done", { ...at, content_index: 0, text: answer.text })
    send("response.content_part.done", { ...at, content_index: 0, part: { ...part, text: answer.text } })
  } else if (item.type === "function_call") {
    send("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } })
    const args = asString(item.arguments)
    for (const delta of deltas(args)) send("response.function_call_arguments.delta", { ...at, delta })
    send("response.function_call_arguments.done", { ...at, arguments: args })
  } else {
    send("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress" } })
  }
  send("response.output_item.done", { output_index: 0, item })
  send("response.completed", { response: completed })
  sse.end()
}

export const OpenAIResponses: Protocol = {
  read: readResponses,
  // codex always streams; the Responses API's default is not to.
  streams: (body) => body.stream === true,
  framing: "sse",
  errorBody: openAiError,
  reply
}
