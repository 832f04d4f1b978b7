/**
 * Wire — what the protocol files share: the framings (a JSON body, a Server-Sent Events stream with or without
 * `event:` names, an NDJSON stream, the malformed output GARBAGE asks for), the small pieces every answer needs (ids,
 * text split into deltas, fixed token counts) and the Protocol shape each model-call file exports. What goes inside
 * each frame is the protocol files' business.
 */

import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { JsonObject } from "./Json.ts"
import type { Conversation, Reply } from "./Script.ts"

/** The token counts every answer reports; clients only need them to be present and consistent. */
export const USAGE = { input: 100, output: 10 } as const

/** A fresh id with the protocol's prefix; random, so a resumed CLI never sees an id twice in one history. */
export const newId = (prefix: string): string => `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 24)}`

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/**
 * A text cut into up to three pieces, so every stream carries several deltas and a client that keeps only the last
 * one fails its test. Cuts fall between code points: a lone surrogate in a delta breaks strict JSON decoders (codex).
 * An empty text is one empty piece.
 */
export const deltas = (text: string): ReadonlyArray<string> => {
  const points = Array.from(text)
  const count = Math.min(3, Math.max(1, points.length))
  const cut = (i: number) => Math.floor((i * points.length) / count)
  return Array.from({ length: count }, (_, i) => points.slice(cut(i), cut(i + 1)).join(""))
}

export const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export interface SseStream {
  /** One event; `event` is the `event:` line (Responses, Anthropic), omitted where the protocol has none. */
  readonly send: (data: unknown, event?: string) => void
  /** Chat Completions' terminator, a data line that is not JSON. */
  readonly sendRaw: (data: string) => void
  readonly end: () => void
}

export const openSse = (res: ServerResponse): SseStream => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  return {
    send: (data, event) => res.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`),
    sendRaw: (data) => res.write(`data: ${data}\n\n`),
    end: () => res.end()
  }
}

export const sendNdjson = (res: ServerResponse, lines: ReadonlyArray<unknown>): void => {
  res.writeHead(200, { "content-type": "application/x-ndjson" })
  res.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(""))
}

export type Framing = "sse" | "ndjson" | "json"

const CONTENT_TYPES: Record<Framing, string> = {
  sse: "text/event-stream",
  ndjson: "application/x-ndjson",
  json: "application/json"
}

/**
 * What GARBAGE sends: status 200 and the framing's content type, then a JSON value cut off mid-object and a line
 * that is no JSON at all, with no terminal event. A client must fail with its "invalid response" error.
 */
export const sendGarbage = (res: ServerResponse, framing: Framing): void => {
  res.writeHead(200, { "content-type": CONTENT_TYPES[framing] })
  const broken = ['{"scripted": "garbage", "cut off": ', "this is not json"]
  if (framing === "sse") res.end(broken.map((line) => `data: ${line}\n\n`).join(""))
  else if (framing === "ndjson") res.end(broken.map((line) => `${line}\n`).join(""))
  else res.end(broken[0])
}

/** The message every scripted error carries, so a test can find it in the agent's output. */
export const failureMessage = (status: number): string => `scripted failure (FAIL_HTTP ${status})`

/** What one model-call protocol file provides; ModelServer routes to it and writes failures and garbage itself. */
export interface Protocol {
  readonly read: (body: JsonObject) => Conversation
  /** Whether the request asked for a stream; otherwise the reply is one JSON body. */
  readonly streams: (body: JsonObject, path: string) => boolean
  readonly framing: "sse" | "ndjson"
  /** The provider's error body for FAIL_HTTP[<status>]END; `echo` (ECHO_AUTH) is quoted in its message. */
  readonly errorBody: (status: number, body: JsonObject, echo?: string) => unknown
  readonly reply: (res: ServerResponse, request: ModelRequest, reply: Reply) => void
}

export interface ModelRequest {
  readonly body: JsonObject
  /** The URL path without the query. */
  readonly path: string
  readonly streaming: boolean
  /** The Authorization header as sent, for ECHO_AUTH. */
  readonly authorization?: string | undefined
}
