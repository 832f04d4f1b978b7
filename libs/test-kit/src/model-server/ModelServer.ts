/**
 * ModelServer — the scripted model server the provider suites point the real agent CLIs at: a node:http server on
 * 127.0.0.1 and a random port that routes each request by its path suffix (so any base-URL prefix works), logs it,
 * lets Script decide the answer from the request's own body, and hands the writing to the protocol's file.
 *
 *   POST …/responses                              OpenAI Responses (codex)          OpenAIResponses.ts
 *   POST …/chat/completions                       Chat Completions (opencode)       ChatCompletions.ts
 *   POST …/messages, …/messages/count_tokens      Anthropic Messages (claude)       AnthropicMessages.ts
 *   HEAD (any path)                               claude's preflight                AnthropicMessages.ts
 *   POST …:streamGenerateContent, :generateContent, :countTokens   Gemini (gemini)  Gemini.ts
 *   POST …/api/chat, …/api/show; GET …/api/tags, …/api/version     Ollama (pedelec-agent)  Ollama.ts
 *   anything else                                 404 with a JSON body naming the request
 *
 * Two ways to start one: `startModelServer()` (a Promise; call `close()`), and `modelServer()`, a scoped Effect
 * that closes the server with its scope (for `it.effect` in @effect/vitest).
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { AnthropicMessages, answerCountTokens, answerPreflight } from "./AnthropicMessages.ts"
import { ChatCompletions } from "./ChatCompletions.ts"
import { answerCountTokens as answerGeminiCountTokens, Gemini } from "./Gemini.ts"
import { asObject } from "./Json.ts"
import { answerShow, answerTags, answerVersion, OllamaChat } from "./Ollama.ts"
import { OpenAIResponses } from "./OpenAIResponses.ts"
import { type LoggedRequest, RequestLog, type Route, redactHeaders } from "./RequestLog.ts"
import { type Answer, decide } from "./Script.ts"
import { type ModelRequest, type Protocol, sendGarbage, sendJson } from "./Wire.ts"

export interface ModelServerOptions {
  /** Also write each logged request to `<logDir>/NNN-<route>.json` (the directory is created). */
  readonly logDir?: string
  /** The models Ollama's /api/tags lists and /api/show describes; /api/chat answers for any name. */
  readonly ollamaModels?: ReadonlyArray<string>
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash; append the prefix the CLI wants (`/v1`, `/v1beta`, …). */
  readonly url: string
  readonly port: number
  /** Every request so far, in arrival order. */
  readonly requests: () => ReadonlyArray<LoggedRequest>
  /** Stops listening and drops open connections; safe to call twice. */
  readonly close: () => Promise<void>
}

export const DEFAULT_OLLAMA_MODELS: ReadonlyArray<string> = ["scripted-model"]

export const routeOf = (method: string, path: string): Route => {
  if (method === "HEAD") return "anthropic-preflight"
  if (method === "GET" && path.endsWith("/api/tags")) return "ollama-tags"
  if (method === "GET" && path.endsWith("/api/version")) return "ollama-version"
  if (method !== "POST") return "unrouted"
  if (path.endsWith("/api/chat")) return "ollama-chat"
  if (path.endsWith("/api/show")) return "ollama-show"
  if (path.endsWith("/responses")) return "responses"
  if (path.endsWith("/chat/completions")) return "chat-completions"
  if (path.endsWith("/messages/count_tokens")) return "anthropic-count-tokens"
  if (path.endsWith("/messages")) return "anthropic-messages"
  if (path.endsWith(":streamGenerateContent") || path.endsWith(":generateContent")) return "gemini"
  if (path.endsWith(":countTokens")) return "gemini-count-tokens"
  return "unrouted"
}

/** The routes that are model calls: the script reads their body and decides their answer. */
const MODEL_CALLS: Partial<Record<Route, Protocol>> = {
  responses: OpenAIResponses,
  "chat-completions": ChatCompletions,
  "anthropic-messages": AnthropicMessages,
  gemini: Gemini,
  "ollama-chat": OllamaChat
}

const respond = (protocol: Protocol, res: ServerResponse, request: ModelRequest, answer: Answer): void => {
  if (answer._tag === "Fail") {
    const echo = answer.echoAuth ? (request.authorization ?? "") : undefined
    sendJson(res, answer.status, protocol.errorBody(answer.status, request.body, echo))
  } else if (answer._tag === "Garbage") sendGarbage(res, request.streaming ? protocol.framing : "json")
  else protocol.reply(res, request, answer)
}

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks).toString("utf8")
  if (raw === "") return null
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const handle = async (log: RequestLog, models: ReadonlyArray<string>, req: IncomingMessage, res: ServerResponse) => {
  const method = req.method ?? "GET"
  const url = req.url ?? "/"
  const path = new URL(url, "http://127.0.0.1").pathname
  const route = routeOf(method, path)
  const body = await readBody(req)
  // A body that is not a JSON object reads as empty, and the log keeps what was sent.
  const fields = asObject(body)
  const protocol = MODEL_CALLS[route]
  const conversation = protocol?.read(fields)
  const answer = conversation && decide(conversation)
  const headers = redactHeaders(req.headers)
  await log.add({ time: new Date().toISOString(), method, url, route, headers, body, conversation, answer })

  if (protocol && answer)
    return respond(
      protocol,
      res,
      { body: fields, path, streaming: protocol.streams(fields, path), authorization: req.headers.authorization },
      answer
    )
  switch (route) {
    case "anthropic-preflight":
      return answerPreflight(res)
    case "anthropic-count-tokens":
      return answerCountTokens(res)
    case "gemini-count-tokens":
      return answerGeminiCountTokens(res)
    case "ollama-tags":
      return answerTags(res, models)
    case "ollama-version":
      return answerVersion(res)
    case "ollama-show":
      return answerShow(res, fields, models)
    default:
      return sendJson(res, 404, { error: { message: `scripted model server: no route for ${method} ${path}` } })
  }
}

export const startModelServer = async (options: ModelServerOptions = {}): Promise<ModelServer> => {
  const log = await RequestLog.open(options.logDir)
  const models = options.ollamaModels ?? DEFAULT_OLLAMA_MODELS
  const server = createServer((req, res) => {
    handle(log, models, req, res).catch((cause: unknown) => {
      // A bug here must reach the test as an HTTP error, not crash the process the test runs in.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `scripted model server failed: ${String(cause)}` } })
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      // close() waits for requests in flight; a CLI hanging mid-request would hold it open for ever.
      server.closeAllConnections()
    })
    return closing
  }
  return { url: `http://127.0.0.1:${port}`, port, requests: () => log.all(), close }
}

/** The server for the life of the enclosing scope. Failing to listen on loopback is a broken machine: a defect. */
export const modelServer = (options: ModelServerOptions = {}): Effect.Effect<ModelServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startModelServer(options)),
    (server) => Effect.promise(() => server.close())
  )
