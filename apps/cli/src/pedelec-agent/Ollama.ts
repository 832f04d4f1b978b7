/**
 * Ollama — pedelec-agent's client of an Ollama-compatible server: `POST /api/show` for the model's context window
 * (and whether it exists) and a streaming `POST /api/chat` with native tools. Owns the HTTP statuses and stream
 * errors → `OLLAMA_*` codes, the silence timeout, and strict decoding of each streamed line; text deltas go out
 * as they arrive, thinking never does. It does not decide what to send (Loop) or run tools.
 *
 * node:http, not fetch: fetch (undici, web streams) cost ~1.6 ms of CPU a request against ~0.3 ms here, measured
 * client and local server together, on every round of every warm turn (issue 15, warm ollama turns). The connection
 * is kept alive between rounds and turns, and a stream is read to its end after its `done` line so that it stays so.
 */
import http from "node:http"
import https from "node:https"
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

/** Idle sockets are unref'd by the agent: a kept connection never holds the process open. */
const clients = {
  "http:": { request: http.request, agent: new http.Agent({ keepAlive: true }) },
  "https:": { request: https.request, agent: new https.Agent({ keepAlive: true }) }
} as const

/** The server's answer once its head arrived; its body is the caller's to read (textOf, or streamed). */
const post = (connection: Connection, route: string, body: unknown, signal: AbortSignal) =>
  new Promise<http.IncomingMessage>((resolve, reject) => {
    const url = new URL(`${connection.baseUrl.replace(/\/+$/, "")}${route}`)
    const client = url.protocol === "http:" || url.protocol === "https:" ? clients[url.protocol] : undefined
    if (client === undefined) return reject(new Error(`${url.protocol} is not http: or https:`))
    const payload = JSON.stringify(body)
    const headers = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      authorization: `Bearer ${connection.apiKey}`
    }
    const request = client.request(url, { method: "POST", headers, agent: client.agent, signal }, resolve)
    request.on("error", reject)
    request.end(payload)
  })

const isOk = (response: http.IncomingMessage) =>
  response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300

/** A connection that closes before the body's end (a reset, our abort) fails the read; `error` says why first. */
const onCutShort = (response: http.IncomingMessage, reject: (cause: unknown) => void) => {
  response.on("error", reject)
  response.on("close", () => {
    if (!response.complete) reject(new Error("the connection closed before the answer's end"))
  })
}

const textOf = (response: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    response.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    onCutShort(response, reject)
  })

/**
 * Each line of the body to `onLine` as it arrives, until it returns a value: that is the result, and the rest of the
 * body is read and dropped (a stream left half-read would cost the kept connection). A body that ends first fails.
 */
const streamLines = <A>(
  connection: Connection,
  response: http.IncomingMessage,
  touch: () => void,
  onLine: (line: string) => A | undefined
) =>
  new Promise<A>((resolve, reject) => {
    const splitter = new TextLineSplitter(MAX_LINE)
    let settled = false
    const fail = (cause: unknown) => {
      settled = true
      response.destroy()
      reject(cause)
    }
    response.setEncoding("utf8")
    response.on("data", (text: string) => {
      if (settled) return
      touch()
      const pushed = splitter.push(text)
      if (pushed._tag === "TooLong") return fail(invalid(connection, "a streamed line was longer than 16 MiB"))
      try {
        for (const line of pushed.lines) {
          const result = line.trim() === "" ? undefined : onLine(line)
          if (result === undefined) continue
          settled = true
          return resolve(result)
        }
      } catch (cause) {
        fail(cause)
      }
    })
    response.on("end", () => reject(invalid(connection, "the stream ended without a done line")))
    onCutShort(response, reject)
  })

/** The model's context window in tokens (`<arch>.context_length`), or undefined when the server does not say. */
export const contextLength = async (connection: Connection, model: string): Promise<number | undefined> => {
  const watch = silenceWatch(connection)
  try {
    const response = await post(connection, "/api/show", { model }, watch.signal)
    const body = await textOf(response)
    if (!isOk(response)) throw refusal(connection, model, response.statusCode ?? 0, body)
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

/** A round's lines, read in order: each text delta to `onText`; the reply once the `done` line came. */
const roundLines = (connection: Connection, onText: (delta: string) => void) => {
  let content = ""
  const toolCalls: Array<ToolCall> = []
  return (line: string): RoundReply | undefined => {
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
    if (!chunk.value.done) return undefined
    return {
      content,
      toolCalls,
      inputTokens: chunk.value.prompt_eval_count ?? 0,
      outputTokens: chunk.value.eval_count ?? 0
    }
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
    if (!isOk(response)) throw refusal(connection, request.model, response.statusCode ?? 0, await textOf(response))
    return await streamLines(connection, response, watch.touch, roundLines(connection, onText))
  } catch (cause) {
    throw watch.failure(cause)
  } finally {
    watch.stop()
  }
}
