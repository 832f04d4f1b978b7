/** Test support: HTTP calls to the model server and strict parsers for what it streams back. */
import { afterAll, beforeAll } from "@effect/vitest"
import { type ModelServer, type ModelServerOptions, startModelServer } from "../../src/model-server/ModelServer.ts"

/** One server for a test file, started before its tests and closed after them. */
export const useModelServer = (options: ModelServerOptions = {}): (() => ModelServer) => {
  let server: ModelServer | undefined
  beforeAll(async () => {
    server = await startModelServer(options)
  })
  afterAll(() => server?.close())
  return () => {
    if (!server) throw new Error("the model server is not started")
    return server
  }
}

export interface HttpReply {
  readonly status: number
  readonly contentType: string
  readonly text: string
}

export const call = async (
  server: ModelServer,
  path: string,
  body?: unknown,
  init: { readonly method?: string; readonly headers?: Record<string, string> } = {}
): Promise<HttpReply> => {
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? (body === undefined ? "GET" : "POST"),
    headers: { "content-type": "application/json", ...init.headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    text: await response.text()
  }
}

export interface SseEvent {
  /** The `event:` line, when the frame has one. */
  readonly event: string | undefined
  readonly data: string
}

/** SSE frames, strictly: every frame is an optional `event:` line and one `data:` line, frames end with a blank line. */
export const parseSse = (text: string): ReadonlyArray<SseEvent> => {
  if (!text.endsWith("\n\n"))
    throw new Error(`the stream does not end with a blank line: ${JSON.stringify(text.slice(-40))}`)
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const lines = frame.split("\n")
      const event = lines[0]?.startsWith("event: ") ? lines.shift()!.slice("event: ".length) : undefined
      if (lines.length !== 1 || !lines[0]!.startsWith("data: ")) throw new Error(`malformed frame: ${frame}`)
      return { event, data: lines[0]!.slice("data: ".length) }
    })
}

/** The frames' data parsed as JSON (which must succeed); JSON.parse's untyped result lets a test read deep into it. */
export const sseJson = (text: string) => parseSse(text).map((frame) => JSON.parse(frame.data))

/** NDJSON lines, strictly: every line is JSON and the stream ends with a newline. */
export const parseNdjson = (text: string) => {
  if (!text.endsWith("\n")) throw new Error("the stream does not end with a newline")
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line))
}

export const json = (reply: HttpReply) => JSON.parse(reply.text)
