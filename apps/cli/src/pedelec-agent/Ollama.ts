/**
 * Ollama — pedelec-agent's client of an Ollama-compatible server: `POST /api/show` for the model's context window
 * (and whether it exists) and a streaming `POST /api/chat` with native tools. Owns the HTTP statuses and stream
 * errors → `OLLAMA_*` codes, the silence timeout, and strict decoding of each streamed line; text deltas go out
 * as they arrive, thinking never does. It does not decide what to send (Loop) or run tools.
 */
import { TextLineSplitter } from "@pedelec/core-client/TextLines"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentFailure, Cancelled } from "./Failure.ts"

export interface ToolCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
}

export type ChatMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | {
      readonly role: "assistant"
      readonly content: string
      readonly tool_calls?: ReadonlyArray<{ function: ToolCall }>
    }
  | { readonly role: "tool"; readonly content: string; readonly tool_name: string }

export interface FunctionTool {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description: string; readonly parameters: unknown }
}

export interface Connection {
  readonly baseUrl: string
  readonly apiKey: string
  readonly timeoutMs: number
  readonly signal: AbortSignal
}

export interface RoundReply {
  readonly content: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly inputTokens: number
  readonly outputTokens: number
}

/** Arguments arrive as an object from Ollama and as a JSON string from some compatible servers. */
const ArgumentsObject = Schema.Record(Schema.String, Schema.Unknown)
const Arguments = Schema.Union([ArgumentsObject, Schema.fromJsonString(ArgumentsObject)])
const Chunk = Schema.Struct({
  message: Schema.optionalKey(
    Schema.Struct({
      content: Schema.optionalKey(Schema.String),
      tool_calls: Schema.optionalKey(
        Schema.Array(Schema.Struct({ function: Schema.Struct({ name: Schema.String, arguments: Arguments }) }))
      )
    })
  ),
  done: Schema.Boolean,
  prompt_eval_count: Schema.optionalKey(Schema.Number),
  eval_count: Schema.optionalKey(Schema.Number)
})
const StreamError = Schema.Struct({ error: Schema.String })
const ShowReply = Schema.Struct({ model_info: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) })

const decodeChunk = Schema.decodeUnknownOption(Chunk)
const decodeStreamError = Schema.decodeUnknownOption(StreamError)
const decodeShow = Schema.decodeUnknownOption(ShowReply)

const MAX_LINE = 16 * 1024 * 1024

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The server's own words with our key taken out: a server may quote back the header it refused, and this text
 * becomes the turn's error. Core scrubs every event again (libs/core SecretScrubber, the key's length rule too);
 * this keeps the key out of what this process prints at all.
 */
const upstream = (connection: Connection, text: string) =>
  connection.apiKey.length >= 8 ? text.replaceAll(connection.apiKey, "(hidden)") : text

const invalid = (connection: Connection, reason: string) =>
  new AgentFailure("OLLAMA_RESPONSE_INVALID", { baseUrl: connection.baseUrl }, upstream(connection, reason))

/** An HTTP refusal in Ollama's words (`{"error": "…"}`), mapped to the code a user can act on. */
const refusal = (connection: Connection, model: string, status: number, body: string): AgentFailure => {
  const said = upstream(
    connection,
    Option.getOrUndefined(decodeStreamError(parseJson(body)))?.error ?? body.slice(0, 500)
  )
  if (status === 401 || status === 403) return new AgentFailure("OLLAMA_AUTH_FAILED", { status }, said)
  if (status === 429) return new AgentFailure("OLLAMA_RATE_LIMITED", { status }, said)
  if (status === 404 && /model/i.test(said)) return new AgentFailure("OLLAMA_MODEL_NOT_FOUND", { model }, said)
  if (status === 404)
    return invalid(connection, `${connection.baseUrl} answered 404 (${said}); it does not look like Ollama's API`)
  return new AgentFailure("PROVIDER_FAILED", { provider: "ollama", status }, `Ollama answered HTTP ${status}: ${said}`)
}

/** A signal that fires on cancel, or when the server stays silent for `timeoutMs`; `touch` restarts the clock. */
const silenceWatch = (connection: Connection) => {
  const controller = new AbortController()
  let silent = false
  const arm = () =>
    setTimeout(() => {
      silent = true
      controller.abort()
    }, connection.timeoutMs)
  let timer = arm()
  const onCancel = () => controller.abort()
  connection.signal.addEventListener("abort", onCancel, { once: true })
  return {
    signal: controller.signal,
    touch: () => {
      clearTimeout(timer)
      timer = arm()
    },
    stop: () => {
      clearTimeout(timer)
      connection.signal.removeEventListener("abort", onCancel)
    },
    /** What an abort or a network failure means now. */
    failure: (cause: unknown): Error => {
      if (connection.signal.aborted) return new Cancelled()
      if (silent)
        return new AgentFailure(
          "PROVIDER_FAILED",
          { provider: "ollama", timeoutMs: connection.timeoutMs },
          `Ollama at ${connection.baseUrl} sent nothing for ${connection.timeoutMs} ms`
        )
      if (cause instanceof AgentFailure) return cause
      const reason = cause instanceof Error ? String(cause.cause ?? cause.message) : String(cause)
      return new AgentFailure("OLLAMA_UNAVAILABLE", { baseUrl: connection.baseUrl }, upstream(connection, reason))
    }
  }
}

const post = (connection: Connection, route: string, body: unknown, signal: AbortSignal) =>
  fetch(`${connection.baseUrl.replace(/\/+$/, "")}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${connection.apiKey}` },
    body: JSON.stringify(body),
    signal
  })

/** The model's context window in tokens (`<arch>.context_length`), or undefined when the server does not say. */
export const contextLength = async (connection: Connection, model: string): Promise<number | undefined> => {
  const watch = silenceWatch(connection)
  try {
    const response = await post(connection, "/api/show", { model }, watch.signal)
    const body = await response.text()
    if (!response.ok) throw refusal(connection, model, response.status, body)
    const info = Option.getOrUndefined(decodeShow(parseJson(body)))?.model_info ?? {}
    const found = Object.entries(info).find(
      ([key, value]) => key.endsWith(".context_length") && Number.isInteger(value)
    )
    return found?.[1] as number | undefined
  } catch (cause) {
    throw watch.failure(cause)
  } finally {
    watch.stop()
  }
}

/** One model round, streamed: `onText` gets each text delta; the reply is the whole message and its usage. */
export const chat = async (
  connection: Connection,
  request: {
    readonly model: string
    readonly messages: ReadonlyArray<ChatMessage>
    readonly tools: ReadonlyArray<FunctionTool>
    readonly numCtx: number
    readonly think: boolean | string | undefined
  },
  onText: (delta: string) => void
): Promise<RoundReply> => {
  const watch = silenceWatch(connection)
  const body = {
    model: request.model,
    messages: request.messages,
    tools: request.tools,
    stream: true,
    options: { num_ctx: request.numCtx },
    ...(request.think === undefined ? {} : { think: request.think })
  }
  try {
    const response = await post(connection, "/api/chat", body, watch.signal)
    if (!response.ok) throw refusal(connection, request.model, response.status, await response.text())
    if (response.body === null) throw invalid(connection, "the answer to /api/chat had no body")
    let content = ""
    const toolCalls: Array<ToolCall> = []
    const splitter = new TextLineSplitter(MAX_LINE)
    const decoder = new TextDecoder()
    for await (const bytes of response.body) {
      watch.touch()
      const pushed = splitter.push(decoder.decode(bytes, { stream: true }))
      if (pushed._tag === "TooLong") throw invalid(connection, "a streamed line was longer than 16 MiB")
      for (const line of pushed.lines) {
        if (line.trim() === "") continue
        const json = parseJson(line)
        const streamError = decodeStreamError(json)
        if (Option.isSome(streamError))
          throw new AgentFailure(
            "PROVIDER_FAILED",
            { provider: "ollama" },
            `Ollama: ${upstream(connection, streamError.value.error)}`
          )
        const chunk = decodeChunk(json)
        if (Option.isNone(chunk)) throw invalid(connection, `an unreadable line: ${line.slice(0, 200)}`)
        const text = chunk.value.message?.content ?? ""
        if (text !== "") {
          content += text
          onText(text)
        }
        for (const call of chunk.value.message?.tool_calls ?? []) toolCalls.push(call.function)
        if (chunk.value.done)
          return {
            content,
            toolCalls,
            inputTokens: chunk.value.prompt_eval_count ?? 0,
            outputTokens: chunk.value.eval_count ?? 0
          }
      }
    }
    throw invalid(connection, "the stream ended without a done line")
  } catch (cause) {
    throw watch.failure(cause)
  } finally {
    watch.stop()
  }
}
