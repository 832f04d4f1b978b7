/**
 * CodexEvents — the Codex CLI's `exec --json` lines (0.171.0), decoded strictly by key into ProviderEvents for one
 * turn (the provider bench's bare baseline runs exec; Pedelec's own turns go through app-server, CodexAppServer, which
 * shares this file's error mapping and tool activity): `thread.started` gives the session id, an `agent_message` item is a message (exec mode prints no deltas;
 * Core turns a message without deltas into one delta), shell, file, MCP and web-search items are tool activity,
 * `turn.completed` gives usage and the end of the turn, `turn.failed` an error mapped to a contract code. Two kinds
 * of line look like errors and are not: `error` items (e.g. "Model metadata … not found") and top-level `error`
 * lines (retry notices such as "Reconnecting... 1/5"); both are kept as warnings, and only `turn.failed` ends a
 * turn. Reasoning items never become chat. Unknown line and item types are ignored and counted; unreadable lines are
 * skipped and counted. Spawning codex and deciding when the turn is over are CodexAdapter's.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "codex"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed command's output is kept short in the monitor: it may quote the page's data. */
const MAX_OUTPUT_PREVIEW = 512
/** Warnings are for logs; a runaway CLI must not grow them without bound. */
const MAX_WARNINGS = 32

const Text = Schema.String
const Count = Schema.optionalKey(Schema.NullOr(Schema.Number))

const ThreadStarted = Schema.Struct({ type: Schema.Literal("thread.started"), thread_id: ProviderSessionId })
const TurnCompleted = Schema.Struct({
  type: Schema.Literal("turn.completed"),
  usage: Schema.optionalKey(Schema.Struct({ input_tokens: Count, output_tokens: Count }))
})
const TurnFailed = Schema.Struct({ type: Schema.Literal("turn.failed"), error: Schema.Struct({ message: Text }) })
const TopLevelError = Schema.Struct({ type: Schema.Literal("error"), message: Text })
const ItemLine = Schema.Struct({
  type: Schema.Literals(["item.started", "item.updated", "item.completed"]),
  /** Decoded further by its own `type`: each item kind has its own fields. */
  item: Schema.Unknown
})
const ItemHead = Schema.Struct({ id: Text, type: Text })
type Phase = (typeof ItemLine.Type)["type"]

const AgentMessage = Schema.Struct({ text: Text })
const CommandExecution = Schema.Struct({
  command: Text,
  aggregated_output: Schema.optionalKey(Schema.NullOr(Text)),
  exit_code: Count,
  status: Text
})
const FileChange = Schema.Struct({
  changes: Schema.Array(Schema.Struct({ path: Text, kind: Text })),
  status: Schema.optionalKey(Text)
})
/** The same in exec's items and app-server's (CodexAppServer decodes them with these). */
export const McpToolCall = Schema.Struct({
  server: Text,
  tool: Text,
  status: Text,
  error: Schema.optionalKey(Schema.NullOr(Schema.Struct({ message: Text })))
})
export const WebSearch = Schema.Struct({ query: Text })
const ItemError = Schema.Struct({ message: Text })
/** An API error codex passes through as its message: `{"error":{"message":…,"type":…,"code":…}}`. */
const ApiErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Text,
    type: Schema.optionalKey(Schema.NullOr(Text)),
    code: Schema.optionalKey(Schema.NullOr(Text))
  })
})

const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Text }))
const decodeThreadStarted = Schema.decodeUnknownOption(ThreadStarted)
const decodeTurnCompleted = Schema.decodeUnknownOption(TurnCompleted)
const decodeTurnFailed = Schema.decodeUnknownOption(TurnFailed)
const decodeTopLevelError = Schema.decodeUnknownOption(TopLevelError)
const decodeItemLine = Schema.decodeUnknownOption(ItemLine)
const decodeItemHead = Schema.decodeUnknownOption(ItemHead)
const decodeAgentMessage = Schema.decodeUnknownOption(AgentMessage)
const decodeCommand = Schema.decodeUnknownOption(CommandExecution)
const decodeFileChange = Schema.decodeUnknownOption(FileChange)
const decodeMcpToolCall = Schema.decodeUnknownOption(McpToolCall)
const decodeWebSearch = Schema.decodeUnknownOption(WebSearch)
const decodeItemError = Schema.decodeUnknownOption(ItemError)
const decodeApiError = Schema.decodeUnknownOption(Schema.fromJsonString(ApiErrorBody))

/** Item types codex prints that carry nothing for the conversation: never chat, not activity. */
const UNUSED_ITEMS = new Set(["reasoning", "todo_list"])

/**
 * What codex says when its credentials are missing or refused: an HTTP 401/403 from the model API, the ChatGPT login
 * having expired, or a provider's API-key variable being unset.
 */
const AUTH_TEXT =
  /unexpected status 40[13]\b|\b401 unauthorized|\b403 forbidden|invalid[_ ]api[_ ]key|incorrect api key|not logged in|codex login|log ?in again|sign in again|missing environment variable: `?\w*(api_key|token)\b/i

export const toolActivity = (name: string, detail: string | undefined): ProviderEvent =>
  detail === undefined
    ? { type: "tool_activity", name: name.slice(0, MAX_NAME) }
    : { type: "tool_activity", name: name.slice(0, MAX_NAME), detail: detail.slice(0, MAX_DETAIL) }

const count = (value: number | null | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** A failed turn as a contract error: codex's own words, the API's message when it passed a JSON body through. */
export const codexError = (text: string): ProviderEvent & { readonly type: "error" } => {
  const api = decodeApiError(text)
  const message = Option.match(api, { onNone: () => text, onSome: (body) => body.error.message })
  const details = Option.match(api, {
    onNone: () => ({ provider: PROVIDER }),
    onSome: (body) => ({
      provider: PROVIDER,
      apiErrorType: body.error.type ?? null,
      apiErrorCode: body.error.code ?? null
    })
  })
  const auth = AUTH_TEXT.test(text)
  return {
    type: "error",
    code: auth ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED",
    message: (message.trim() === "" ? "Codex reported a failed turn without a message." : message).slice(
      0,
      MAX_MESSAGE
    ),
    details
  }
}

/** Decodes one turn's lines; it also keeps codex's warnings (for the log) and the last error line it saw. */
export class CodexTurnDecoder extends CountingDecoder {
  readonly warnings: Array<string> = []
  /** The last top-level `error` line: why codex failed if it then dies without `turn.failed`. */
  lastError: string | undefined

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const raw = json.value
    switch (envelope.value.type) {
      case "thread.started":
        return this.mapped(decodeThreadStarted(raw), (line) => [{ type: "session", providerSessionId: line.thread_id }])
      case "turn.started":
        return []
      case "turn.completed":
        return this.mapped(decodeTurnCompleted(raw), (line) => {
          const input = count(line.usage?.input_tokens)
          const output = count(line.usage?.output_tokens)
          const usage: Array<ProviderEvent> = [usageEvent(input, output)].filter((event) => event !== undefined)
          return [...usage, { type: "completed" }]
        })
      case "turn.failed":
        return this.mapped(decodeTurnFailed(raw), (line) => [codexError(line.error.message)])
      case "error":
        // Not the end of the turn: codex prints retry notices this way, and `turn.failed` follows a real failure.
        return this.mapped(decodeTopLevelError(raw), (line) => {
          this.lastError = line.message
          this.warn(line.message)
          return []
        })
      case "item.started":
      case "item.updated":
      case "item.completed":
        return this.mapped(decodeItemLine(raw), (line) =>
          this.mapped(decodeItemHead(line.item), (head) => this.item(line.type, head.type, line.item))
        )
      default:
        this.counts.ignored++
        return []
    }
  }

  private warn(text: string) {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(text.slice(0, MAX_MESSAGE))
  }

  private item(phase: Phase, type: string, item: unknown): ReadonlyArray<ProviderEvent> {
    const completed = phase === "item.completed"
    switch (type) {
      case "agent_message":
        return this.mapped(decodeAgentMessage(item), (message) =>
          completed && message.text !== "" ? [{ type: "message", text: message.text }] : []
        )
      case "command_execution":
        return this.mapped(decodeCommand(item), (command) => {
          if (phase === "item.started") return [toolActivity("shell", command.command)]
          return completed
            ? [toolActivity("shell", shellOutcome(command.status, command.exit_code, command.aggregated_output))]
            : []
        })
      case "file_change":
        return this.mapped(decodeFileChange(item), (change) =>
          completed ? [toolActivity("file_change", change.changes.map((c) => `${c.kind} ${c.path}`).join(", "))] : []
        )
      case "mcp_tool_call":
        return this.mapped(decodeMcpToolCall(item), (call) => {
          const name = `${call.server}.${call.tool}`
          if (phase === "item.started") return [toolActivity(name, undefined)]
          if (!completed) return []
          const failed = call.error?.message
          return [toolActivity(name, failed === undefined ? call.status : `failed: ${failed}`)]
        })
      case "web_search":
        return this.mapped(decodeWebSearch(item), (search) =>
          phase === "item.started" ? [toolActivity("web_search", search.query)] : []
        )
      case "error":
        // A warning codex shows as an item (unknown model metadata, transport fallback); the turn goes on.
        return this.mapped(decodeItemError(item), (warning) => {
          this.warn(warning.message)
          return []
        })
      default:
        if (!UNUSED_ITEMS.has(type)) this.counts.ignored++
        return []
    }
  }
}

/** A finished shell command as the monitor shows it: "finished", or how it failed with the end of its output. */
export const shellOutcome = (
  status: string,
  exitCode: number | null | undefined,
  output: string | null | undefined
): string => {
  if (status === "completed" && (exitCode ?? 0) === 0) return "finished"
  const code = exitCode ?? null
  const preview = (output ?? "").trim().slice(-MAX_OUTPUT_PREVIEW)
  const head = code === null ? status : `${status}, exit code ${code}`
  return preview === "" ? head : `${head}: ${preview}`
}
