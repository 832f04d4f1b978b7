/**
 * ClaudeEvents — Claude Code's `--output-format stream-json` lines (2.1.197, with `--verbose
 * --include-partial-messages`), decoded strictly by key into ProviderEvents for one turn: `system/init` gives the
 * session id, text deltas stream, `assistant` text blocks are messages (thinking blocks never are), `tool_use` and
 * `tool_result` blocks are tool activity, and the `result` line gives usage and the end of the turn, or an error
 * mapped to a contract code. Unknown line types are ignored and counted; unreadable lines are skipped and counted.
 * A warm claude prints each turn's lines the same way (`system/init` again, then its `result`). Spawning claude and
 * writing its turns are ClaudeAdapter's; ending a turn at its last event is WarmProcess's.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "claude"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed tool's text is kept short in the monitor: it may quote the page's data. */
const MAX_RESULT_PREVIEW = 512

const Text = Schema.String
/** Set on lines a subagent produced; only the main conversation is chat. */
const Parent = Schema.optionalKey(Schema.NullOr(Text))

const SystemInit = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("init"),
  session_id: ProviderSessionId
})
const StreamEvent = Schema.Struct({
  type: Schema.Literal("stream_event"),
  /** Decoded further only when it is a text delta: the Messages API's own event, passed through. */
  event: Schema.Unknown,
  parent_tool_use_id: Parent
})
const TextDelta = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  delta: Schema.Struct({ type: Schema.Literal("text_delta"), text: Text })
})
const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({ content: Schema.Array(Schema.Unknown) }),
  parent_tool_use_id: Parent,
  /** Present on the synthetic message claude writes for an API error; the `result` line reports it. */
  error: Schema.optionalKey(Text)
})
const User = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({ content: Schema.Union([Text, Schema.Array(Schema.Unknown)]) })
})
const Result = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Text,
  is_error: Schema.Boolean,
  result: Schema.optionalKey(Text),
  api_error_status: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  errors: Schema.optionalKey(Schema.Array(Text)),
  usage: Schema.optionalKey(Schema.Unknown)
})
const Usage = Schema.Struct({
  input_tokens: Schema.optionalKey(Schema.Number),
  output_tokens: Schema.optionalKey(Schema.Number),
  cache_creation_input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Number))
})

const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Text })
const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Text,
  name: Text,
  input: Schema.optionalKey(Schema.Unknown)
})
const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Text,
  content: Schema.optionalKey(Schema.Unknown),
  is_error: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
})

const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Text, subtype: Schema.optionalKey(Text) }))
const decodeInit = Schema.decodeUnknownOption(SystemInit)
const decodeStreamEvent = Schema.decodeUnknownOption(StreamEvent)
const decodeTextDelta = Schema.decodeUnknownOption(TextDelta)
const decodeAssistant = Schema.decodeUnknownOption(Assistant)
const decodeUser = Schema.decodeUnknownOption(User)
const decodeResult = Schema.decodeUnknownOption(Result)
const decodeUsage = Schema.decodeUnknownOption(Usage)
const decodeTextBlock = Schema.decodeUnknownOption(TextBlock)
const decodeToolUse = Schema.decodeUnknownOption(ToolUseBlock)
const decodeToolResult = Schema.decodeUnknownOption(ToolResultBlock)

/** The words claude prints when its credentials are missing or refused (API key or subscription login). */
const AUTH_TEXT = /invalid api key|please run \/login|not logged in|authentication_error|oauth token/i

/** The argument that says most about a tool call: the shell command, the file, the pattern. */
const summarizeInput = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["command", "file_path", "pattern", "path", "url"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return JSON.stringify(input)
}

const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((block) => Option.match(decodeTextBlock(block), { onNone: () => "", onSome: (b) => b.text }))
    .join("")
}

const toolActivity = (name: string, detail: string | undefined): ProviderEvent =>
  detail === undefined
    ? { type: "tool_activity", name: name.slice(0, MAX_NAME) }
    : { type: "tool_activity", name: name.slice(0, MAX_NAME), detail: detail.slice(0, MAX_DETAIL) }

const nonNegativeInt = (value: number | null | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** Input tokens count the cached ones too: they were all read by the model this turn. */
const usageOf = (usage: unknown): ProviderEvent | undefined => {
  const decoded = decodeUsage(usage)
  if (Option.isNone(decoded)) return undefined
  const u = decoded.value
  const input =
    nonNegativeInt(u.input_tokens) +
    nonNegativeInt(u.cache_creation_input_tokens) +
    nonNegativeInt(u.cache_read_input_tokens)
  const output = nonNegativeInt(u.output_tokens)
  // A turn that never reached the model (an API or resume error) has nothing to report.
  return usageEvent(input, output)
}

/** Decodes one turn's lines; it remembers tool names by id so a result can say which tool it ends. */
export class ClaudeTurnDecoder extends CountingDecoder {
  private readonly toolNames = new Map<string, string>()
  private authFailed = false

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const raw = json.value
    switch (envelope.value.type) {
      case "system":
        // Other system lines (status, hooks, compaction) are known and carry nothing a turn needs.
        if (envelope.value.subtype !== "init") return []
        return this.mapped(decodeInit(raw), (init) => [{ type: "session", providerSessionId: init.session_id }])
      case "stream_event":
        return this.mapped(decodeStreamEvent(raw), (line) => {
          if (line.parent_tool_use_id != null) return []
          // Thinking, tool-input and bookkeeping deltas are known and deliberately unused.
          return Option.match(decodeTextDelta(line.event), {
            onNone: () => [],
            onSome: (delta) => (delta.delta.text === "" ? [] : [{ type: "delta", text: delta.delta.text }])
          })
        })
      case "assistant":
        return this.mapped(decodeAssistant(raw), (line) => this.assistant(line))
      case "user":
        return this.mapped(decodeUser(raw), (line) => this.toolResults(line.message.content))
      case "result":
        return this.mapped(decodeResult(raw), (line) => this.result(line))
      case "control_response":
        // claude's acknowledgement of an interrupt: the turn's own `result` says how it ended.
        return []
      default:
        this.counts.ignored++
        return []
    }
  }

  private assistant(line: typeof Assistant.Type): ReadonlyArray<ProviderEvent> {
    if (line.error !== undefined) {
      if (line.error === "authentication_failed") this.authFailed = true
      return []
    }
    const events: Array<ProviderEvent> = []
    const texts: Array<string> = []
    for (const block of line.message.content) {
      const text = decodeTextBlock(block)
      if (Option.isSome(text)) {
        texts.push(text.value.text)
        continue
      }
      const tool = decodeToolUse(block)
      if (Option.isSome(tool)) {
        this.toolNames.set(tool.value.id, tool.value.name)
        events.push(toolActivity(tool.value.name, summarizeInput(tool.value.input)))
      }
      // thinking / redacted_thinking and anything newer: never chat.
    }
    const text = texts.join("\n\n")
    if (text !== "" && line.parent_tool_use_id == null) events.unshift({ type: "message", text })
    return events
  }

  private toolResults(content: string | ReadonlyArray<unknown>): ReadonlyArray<ProviderEvent> {
    if (typeof content === "string") return []
    const events: Array<ProviderEvent> = []
    for (const block of content) {
      const decoded = decodeToolResult(block)
      if (Option.isNone(decoded)) continue
      const name = this.toolNames.get(decoded.value.tool_use_id) ?? "tool"
      const detail =
        decoded.value.is_error === true
          ? `failed: ${resultText(decoded.value.content).slice(0, MAX_RESULT_PREVIEW)}`
          : "finished"
      events.push(toolActivity(name, detail))
    }
    return events
  }

  private result(line: typeof Result.Type): ReadonlyArray<ProviderEvent> {
    const usage = usageOf(line.usage)
    const before = usage === undefined ? [] : [usage]
    if (!line.is_error) {
      return [...before, line.result === undefined ? { type: "completed" } : { type: "completed", text: line.result }]
    }
    return [...before, this.errorOf(line)]
  }

  /** `is_error` decides, whatever `subtype` says: claude reports API errors as `subtype: "success"`. */
  private errorOf(line: typeof Result.Type): ProviderEvent {
    const text = [line.result ?? "", ...(line.errors ?? [])].filter((part) => part.trim() !== "").join("\n")
    const status = line.api_error_status ?? null
    const message = (text === "" ? `Claude Code ended the turn with "${line.subtype}".` : text).slice(0, MAX_MESSAGE)
    const details = { provider: PROVIDER, subtype: line.subtype.slice(0, MAX_NAME), apiErrorStatus: status }
    const auth = status === 401 || status === 403 || this.authFailed || AUTH_TEXT.test(text)
    return { type: "error", code: auth ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED", message, details }
  }
}
