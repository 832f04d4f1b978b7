/**
 * Ollama — the Ollama API Pedelec's own agent loop (`pedelec-agent`) speaks: `POST /api/chat` with native `tools` and
 * `tool_calls` (its messages and tools have the Chat Completions shape, so ChatCompletions reads them), plus the
 * calls a client makes around it: `GET /api/tags`, `GET /api/version` and `POST /api/show` (the model's context
 * window). /api/chat answers for any model name; provoke OLLAMA_MODEL_NOT_FOUND with FAIL_HTTP[404]END there, or
 * with a name missing from the server's model list on /api/tags and /api/show.
 *
 * /api/chat streams NDJSON unless `stream: false`: one line per text delta (`message.content`), or one line whose
 * `message.tool_calls` is `[{function: {name, arguments}}]` with the arguments as an object; then a line with
 * `done: true`, `done_reason: "stop"` and the counters. Non-streaming: that last line carrying the whole message.
 */

import type { ServerResponse } from "node:http"
import { readChat } from "./ChatCompletions.ts"
import { ollamaError } from "./Errors.ts"
import { asString, type JsonObject } from "./Json.ts"
import type { Reply } from "./Script.ts"
import { deltas, type ModelRequest, type Protocol, sendJson, sendNdjson, USAGE } from "./Wire.ts"

export const OLLAMA_VERSION = "0.12.0-scripted"

/** What the server reports as the model's context window on /api/show. */
export const CONTEXT_LENGTH = 32_768

const reply = (res: ServerResponse, { body, streaming }: ModelRequest, answer: Reply): void => {
  const model = asString(body.model)
  const head = () => ({ model, created_at: new Date().toISOString() })
  const counters = {
    done: true,
    done_reason: "stop",
    total_duration: 1_000_000,
    load_duration: 0,
    prompt_eval_count: USAGE.input,
    prompt_eval_duration: 500_000,
    eval_count: USAGE.output,
    eval_duration: 500_000
  }
  const toolCalls = answer._tag === "ToolCall" ? [{ function: { name: answer.name, arguments: answer.args } }] : []
  if (!streaming) {
    const content = answer._tag === "Text" ? answer.text : ""
    const message = { role: "assistant", content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }
    sendJson(res, 200, { ...head(), message, ...counters })
    return
  }
  const messages =
    answer._tag === "Text"
      ? deltas(answer.text).map((content) => ({ role: "assistant", content }))
      : [{ role: "assistant", content: "", tool_calls: toolCalls }]
  sendNdjson(res, [
    ...messages.map((message) => ({ ...head(), message, done: false })),
    { ...head(), message: { role: "assistant", content: "" }, ...counters }
  ])
}

export const OllamaChat: Protocol = {
  read: readChat,
  // Ollama streams unless told not to.
  streams: (body) => body.stream !== false,
  framing: "ndjson",
  errorBody: (status, body, echo) => ollamaError(status, asString(body.model), echo),
  reply
}

/** Ollama lists models with their tag; a name without one means `:latest`. */
const sameModel = (a: string, b: string) => a.replace(/:latest$/, "") === b.replace(/:latest$/, "")

const DETAILS = { format: "gguf", family: "llama", parameter_size: "1B", quantization_level: "Q4_K_M" }

export const answerTags = (res: ServerResponse, models: ReadonlyArray<string>): void =>
  sendJson(res, 200, {
    models: models.map((name) => ({
      name,
      model: name,
      modified_at: "2026-01-01T00:00:00Z",
      size: 1_000_000,
      digest: "0".repeat(64),
      details: DETAILS
    }))
  })

export const answerVersion = (res: ServerResponse): void => sendJson(res, 200, { version: OLLAMA_VERSION })

export const answerShow = (res: ServerResponse, body: JsonObject, models: ReadonlyArray<string>): void => {
  // Older clients send `name` instead of `model`.
  const model = asString(body.model) || asString(body.name)
  if (!models.some((name) => sameModel(name, model))) {
    sendJson(res, 404, ollamaError(404, model))
    return
  }
  sendJson(res, 200, {
    details: DETAILS,
    model_info: { "general.architecture": "llama", "llama.context_length": CONTEXT_LENGTH },
    capabilities: ["completion", "tools"]
  })
}
