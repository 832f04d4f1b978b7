/**
 * RequestLog — every request the model server received, in arrival order: method, URL, the route it took, headers
 * with credential values redacted, the parsed body, what the body meant to the script (tools offered, messages
 * carried) and the answer given. Kept in memory for assertions and, with a directory, also written as
 * `NNN-<route>.json` files before the answer is sent, so a failed CLI run can be read afterwards. Also the helpers
 * tests use to pick requests out of the log.
 */

import { mkdir, writeFile } from "node:fs/promises"
import type { IncomingHttpHeaders } from "node:http"
import path from "node:path"
import { type Answer, type Conversation, type Message, userTexts } from "./Script.ts"

export type Route =
  | "responses"
  | "chat-completions"
  | "anthropic-messages"
  | "anthropic-count-tokens"
  | "anthropic-preflight"
  | "gemini"
  | "gemini-count-tokens"
  | "ollama-chat"
  | "ollama-tags"
  | "ollama-version"
  | "ollama-show"
  | "unrouted"

export interface LoggedRequest {
  /** 1 for the first request the server received. */
  readonly seq: number
  readonly time: string
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  readonly route: Route
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body; the raw text when it was not JSON; null when there was none. */
  readonly body: unknown
  /** Set for the routes that carry a conversation (the model calls). */
  readonly conversation: Conversation | undefined
  /** Set when the script decided the answer (the model calls). */
  readonly answer: Answer | undefined
}

export const REDACTED = "[redacted]"

/** The headers that carry credentials in any of the protocols; the log keeps their presence, not their value. */
const SECRET_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "cookie"
])

/** Headers as one string each; a credential keeps only its scheme (`Bearer [redacted]`) so a test can still see it. */
export const redactHeaders = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) => {
      if (value === undefined) return []
      const joined = Array.isArray(value) ? value.join(", ") : value
      if (!SECRET_HEADERS.has(name)) return [[name, joined]]
      const scheme = /^(\w+) \S/.exec(joined)?.[1]
      return [[name, scheme ? `${scheme} ${REDACTED}` : REDACTED]]
    })
  )

export class RequestLog {
  private readonly entries: Array<LoggedRequest> = []
  private readonly dir: string | undefined

  private constructor(dir: string | undefined) {
    this.dir = dir
  }

  static async open(dir: string | undefined): Promise<RequestLog> {
    if (dir !== undefined) await mkdir(dir, { recursive: true })
    return new RequestLog(dir)
  }

  async add(request: Omit<LoggedRequest, "seq">): Promise<LoggedRequest> {
    const entry: LoggedRequest = { seq: this.entries.length + 1, ...request }
    this.entries.push(entry)
    if (this.dir !== undefined) {
      const file = path.join(this.dir, `${String(entry.seq).padStart(3, "0")}-${entry.route}.json`)
      await writeFile(file, `${JSON.stringify(entry, null, 2)}\n`)
    }
    return entry
  }

  all(): ReadonlyArray<LoggedRequest> {
    return [...this.entries]
  }
}

/** The requests that offered tools: an agent's turns, not its side calls (titles, classifiers, token counts). */
export const mainRequests = (requests: ReadonlyArray<LoggedRequest>): ReadonlyArray<LoggedRequest> =>
  requests.filter((request) => (request.conversation?.tools.length ?? 0) > 0)

/** The messages a request carried, in the script's terms; empty for routes without a conversation. */
export const historyOf = (request: LoggedRequest): ReadonlyArray<Message> => request.conversation?.messages ?? []

/** The user texts a request carried, oldest first (CLIs add their own context messages among them). */
export const userTextsOf = (request: LoggedRequest): ReadonlyArray<string> => userTexts(historyOf(request))

/** The names of the tools a request offered. */
export const toolNamesOf = (request: LoggedRequest): ReadonlyArray<string> =>
  request.conversation?.tools.map((tool) => tool.name) ?? []
