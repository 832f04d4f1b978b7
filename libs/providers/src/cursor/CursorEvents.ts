/**
 * CursorEvents — Cursor CLI's `--print --output-format stream-json --stream-partial-output` lines, decoded strictly
 * by key into ProviderEvents for one turn. Format source: https://cursor.com/docs/cli/reference/output-format
 * (system/init, user, assistant, tool_call started/completed, result), refined where the docs are silent by
 * published captures of cursor-agent 2026.07–2026.08 (https://forum.cursor.com/t/156289 and the telltale
 * project's wire notes): with partial output, an `assistant` line with `timestamp_ms` and no `model_call_id` is a
 * text delta, one with `model_call_id` is the complete message of a model call that goes on to call tools, and one
 * with neither is the turn's last message repeated whole. `thinking` lines are never chat. A `tool_call` names its
 * tool by the one key ending in `ToolCall`. `result` gives usage and the end of the turn, or an error mapped to a
 * contract code (the docs say failures usually exit non-zero with the reason on stderr; CursorAdapter reads that).
 * Unknown line types are ignored and counted; unreadable lines are skipped and counted. Not verified against the
 * real CLI: the fixtures in test/fixtures/cursor are hand-written.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "cursor"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed tool's text is kept short in the monitor: it may quote the page's data. */
const MAX_RESULT_PREVIEW = 512
const TOOL_SUFFIX = "ToolCall"

const Text = Schema.String
const Count = Schema.Number

const SystemInit = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("init"),
  session_id: ProviderSessionId,
  model: Schema.optionalKey(Text)
})
const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({ content: Schema.Array(Schema.Unknown) }),
  model_call_id: Schema.optionalKey(Text),
  timestamp_ms: Schema.optionalKey(Count)
})
const ToolCallLine = Schema.Struct({
  type: Schema.Literal("tool_call"),
  subtype: Text,
  call_id: Schema.optionalKey(Text),
  tool_call: Schema.Record(Text, Schema.Unknown)
})
const ToolPayload = Schema.Struct({
  args: Schema.optionalKey(Schema.Unknown),
  result: Schema.optionalKey(
    Schema.Struct({
      success: Schema.optionalKey(Schema.Unknown),
      error: Schema.optionalKey(Schema.Unknown),
      rejected: Schema.optionalKey(Schema.Unknown)
    })
  )
})
const Result = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Text,
  is_error: Schema.Boolean,
  result: Schema.optionalKey(Text),
  usage: Schema.optionalKey(Schema.Unknown)
})
const Usage = Schema.Struct({
  inputTokens: Schema.optionalKey(Count),
  outputTokens: Schema.optionalKey(Count),
  cacheReadTokens: Schema.optionalKey(Count),
  cacheWriteTokens: Schema.optionalKey(Count)
})
const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Text })
/** The three spellings of a tool's failure seen in captures: a rejection's reason, an error's message or text. */
const FailureText = Schema.Struct({
  reason: Schema.optionalKey(Text),
  errorMessage: Schema.optionalKey(Text),
  error: Schema.optionalKey(Text)
})
const ShellSuccess = Schema.Struct({ exitCode: Count })

const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Text, subtype: Schema.optionalKey(Text) }))
const decodeInit = Schema.decodeUnknownOption(SystemInit)
const decodeAssistant = Schema.decodeUnknownOption(Assistant)
const decodeToolCall = Schema.decodeUnknownOption(ToolCallLine)
const decodeToolPayload = Schema.decodeUnknownOption(ToolPayload)
const decodeResult = Schema.decodeUnknownOption(Result)
const decodeUsage = Schema.decodeUnknownOption(Usage)
const decodeTextBlock = Schema.decodeUnknownOption(TextBlock)
const decodeFailureText = Schema.decodeUnknownOption(FailureText)
const decodeShellSuccess = Schema.decodeUnknownOption(ShellSuccess)

/** The words Cursor's CLI uses when it has no credentials (`agent login`, CURSOR_API_KEY) or they are refused. */
export const CURSOR_AUTH_TEXT =
  /not logged in|authentication required|(cursor-agent|agent) login|CURSOR_API_KEY|invalid api key|unauthori[sz]ed/i

/** The argument that says most about a tool call: the shell command, the file, the pattern, the MCP tool. */
const summarizeArgs = (args: unknown): string | undefined => {
  if (typeof args !== "object" || args === null) return undefined
  const record = args as Record<string, unknown>
  for (const key of ["command", "path", "pattern", "targetDirectory", "url", "name"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return JSON.stringify(args)
}

const failureText = (failure: unknown): string => {
  if (typeof failure === "string") return failure
  return Option.match(decodeFailureText(failure), {
    onNone: () => "",
    onSome: (f) => f.reason ?? f.errorMessage ?? f.error ?? ""
  })
}

const outcomeOf = (name: string, result: (typeof ToolPayload.Type)["result"]): string => {
  if (result?.rejected !== undefined) return `failed: ${failureText(result.rejected).slice(0, MAX_RESULT_PREVIEW)}`
  if (result?.error !== undefined) return `failed: ${failureText(result.error).slice(0, MAX_RESULT_PREVIEW)}`
  // A shell command that ran but exited non-zero is a success of the tool and a failure of the command.
  const exitCode = name === "shell" ? Option.getOrUndefined(decodeShellSuccess(result?.success))?.exitCode : undefined
  return exitCode === undefined || exitCode === 0 ? "finished" : `failed: exit code ${exitCode}`
}

const toolActivity = (name: string, detail: string | undefined): ProviderEvent =>
  detail === undefined
    ? { type: "tool_activity", name: name.slice(0, MAX_NAME) }
    : { type: "tool_activity", name: name.slice(0, MAX_NAME), detail: detail.slice(0, MAX_DETAIL) }

const count = (value: number | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** Cached input was read by the model too (whether cursor's inputTokens already holds it is unverified). */
const usageOf = (usage: unknown): ReadonlyArray<ProviderEvent> =>
  Option.match(decodeUsage(usage), {
    onNone: () => [],
    onSome: (u) => {
      const input = count(u.inputTokens) + count(u.cacheReadTokens) + count(u.cacheWriteTokens)
      const output = count(u.outputTokens)
      return [usageEvent(input, output)].filter((event) => event !== undefined)
    }
  })

const textOf = (content: ReadonlyArray<unknown>) =>
  content.map((block) => Option.match(decodeTextBlock(block), { onNone: () => "", onSome: (b) => b.text })).join("")

/** Decodes one turn's lines; it keeps the text streamed since the last message so a repeat is not said twice. */
export class CursorTurnDecoder extends CountingDecoder {
  private pending = ""
  private lastMessage: string | undefined

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const raw = json.value
    switch (envelope.value.type) {
      case "system":
        if (envelope.value.subtype !== "init") return []
        return this.mapped(decodeInit(raw), (init) => [{ type: "session", providerSessionId: init.session_id }])
      // The prompt echoed back, and reasoning: known, and never chat.
      case "user":
      case "thinking":
        return []
      case "assistant":
        return this.mapped(decodeAssistant(raw), (line) => this.assistant(line))
      case "tool_call":
        return this.mapped(decodeToolCall(raw), (line) => [toolCall(line)])
      case "result":
        return this.mapped(decodeResult(raw), (line) => this.result(line))
      default:
        this.counts.ignored++
        return []
    }
  }

  private assistant(line: typeof Assistant.Type): ReadonlyArray<ProviderEvent> {
    const text = textOf(line.message.content)
    if (text === "") return []
    if (line.model_call_id === undefined && line.timestamp_ms !== undefined) {
      this.pending += text
      return [{ type: "delta", text }]
    }
    // The turn's last message repeated whole after it was already said (no deltas in between): nothing new.
    if (line.model_call_id === undefined && this.pending === "" && text === this.lastMessage) return []
    this.pending = ""
    this.lastMessage = text
    return [{ type: "message", text }]
  }

  private result(line: typeof Result.Type): ReadonlyArray<ProviderEvent> {
    const usage = usageOf(line.usage)
    if (line.is_error) return [...usage, errorOf(line)]
    // `result` joins every message of the turn; it is chat only when nothing else was said.
    const said = this.lastMessage !== undefined || this.pending !== ""
    const fallback: ReadonlyArray<ProviderEvent> =
      said || line.result === undefined || line.result.trim() === "" ? [] : [{ type: "message", text: line.result }]
    return [...usage, ...fallback, { type: "completed" }]
  }
}

const toolCall = (line: typeof ToolCallLine.Type): ProviderEvent => {
  const key = Object.keys(line.tool_call).find((name) => name.endsWith(TOOL_SUFFIX) && name !== TOOL_SUFFIX)
  if (key === undefined) return toolActivity("tool", line.subtype === "completed" ? "finished" : undefined)
  const name = key.slice(0, -TOOL_SUFFIX.length)
  const payload = Option.getOrUndefined(decodeToolPayload(line.tool_call[key]))
  return line.subtype === "completed"
    ? toolActivity(name, outcomeOf(name, payload?.result))
    : toolActivity(name, summarizeArgs(payload?.args))
}

const errorOf = (line: typeof Result.Type): ProviderEvent => {
  const text = line.result ?? ""
  const message = (text.trim() === "" ? `Cursor CLI ended the turn with "${line.subtype}".` : text).slice(
    0,
    MAX_MESSAGE
  )
  const details = { provider: PROVIDER, subtype: line.subtype.slice(0, MAX_NAME) }
  return {
    type: "error",
    code: CURSOR_AUTH_TEXT.test(text) ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED",
    message,
    details
  }
}
