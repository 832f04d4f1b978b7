/**
 * GeminiEvents — Gemini CLI's `--output-format stream-json` lines (0.61.0), decoded strictly by key into
 * ProviderEvents for one turn: `init` gives the session id (reported with the turn's success, as gemini keeps only
 * sessions whose turn succeeded), assistant `message`s with `"delta":true` stream (and
 * make one message once the model moves on to a tool or ends), `tool_use` and `tool_result` are tool activity, and
 * `result` gives usage and the end of the turn, or an error mapped to a contract code. `error` lines are gemini's
 * warnings, or the reason a later `result` fails. Unknown line types are ignored and counted; unreadable lines are
 * skipped and counted. Spawning gemini and deciding when the turn is over are GeminiAdapter's.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "gemini"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed tool's text is kept short in the monitor: it may quote the page's data. */
const MAX_RESULT_PREVIEW = 512

const Text = Schema.String
const ErrorInfo = Schema.Struct({ type: Schema.optionalKey(Text), message: Schema.optionalKey(Text) })

const Init = Schema.Struct({ type: Schema.Literal("init"), session_id: ProviderSessionId })
const Message = Schema.Struct({
  type: Schema.Literal("message"),
  role: Text,
  content: Text,
  delta: Schema.optionalKey(Schema.Boolean)
})
const ToolUse = Schema.Struct({
  type: Schema.Literal("tool_use"),
  tool_name: Text,
  tool_id: Text,
  parameters: Schema.optionalKey(Schema.Unknown)
})
const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_id: Text,
  status: Text,
  output: Schema.optionalKey(Text),
  error: Schema.optionalKey(ErrorInfo)
})
const ErrorLine = Schema.Struct({ type: Schema.Literal("error"), severity: Text, message: Text })
const Result = Schema.Struct({
  type: Schema.Literal("result"),
  status: Text,
  error: Schema.optionalKey(ErrorInfo),
  stats: Schema.optionalKey(Schema.Unknown)
})
const Stats = Schema.Struct({
  input_tokens: Schema.optionalKey(Schema.Number),
  output_tokens: Schema.optionalKey(Schema.Number)
})

const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Text }))
const decodeInit = Schema.decodeUnknownOption(Init)
const decodeMessage = Schema.decodeUnknownOption(Message)
const decodeToolUse = Schema.decodeUnknownOption(ToolUse)
const decodeToolResult = Schema.decodeUnknownOption(ToolResult)
const decodeError = Schema.decodeUnknownOption(ErrorLine)
const decodeResult = Schema.decodeUnknownOption(Result)
const decodeStats = Schema.decodeUnknownOption(Stats)

/** gemini wraps API failures as `[API Error: {"error":{"code":401,…,"status":"UNAUTHENTICATED"}}]`. */
const HTTP_CODE = /"code":\s*(\d{3})\b/
/** Missing or refused credentials: a 401/403 status, Google's invalid-key answer (a 400), or gemini's own words. */
const AUTH_TEXT =
  /UNAUTHENTICATED|PERMISSION_DENIED|API_KEY_INVALID|API key not valid|log ?in required|re-?authenticate/i

/** The argument that says most about a tool call: the shell command, the file, the pattern. */
const summarizeInput = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["command", "file_path", "dir_path", "pattern", "path", "url", "query"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return JSON.stringify(input)
}

const toolActivity = (name: string, detail: string | undefined): ProviderEvent =>
  detail === undefined
    ? { type: "tool_activity", name: name.slice(0, MAX_NAME) }
    : { type: "tool_activity", name: name.slice(0, MAX_NAME), detail: detail.slice(0, MAX_DETAIL) }

const nonNegativeInt = (value: number | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** `input_tokens` already counts the cached part; a turn that never reached the model has nothing to report. */
const usageOf = (stats: unknown): ProviderEvent | undefined => {
  const decoded = decodeStats(stats)
  if (Option.isNone(decoded)) return undefined
  const input = nonNegativeInt(decoded.value.input_tokens)
  const output = nonNegativeInt(decoded.value.output_tokens)
  return usageEvent(input, output)
}

/** Decodes one turn's lines; it remembers tool names by id and the streamed text of the message in progress. */
export class GeminiTurnDecoder extends CountingDecoder {
  private readonly toolNames = new Map<string, string>()
  private streamed = ""
  private lastError: string | undefined
  /** From `init`, reported only with a successful `result`: gemini saves no session whose first turn failed. */
  private sessionId: string | undefined

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const raw = json.value
    switch (envelope.value.type) {
      case "init":
        return this.mapped(decodeInit(raw), (init) => {
          this.sessionId = init.session_id
          return []
        })
      case "message":
        return this.mapped(decodeMessage(raw), (message) => this.message(message))
      case "tool_use":
        return this.mapped(decodeToolUse(raw), (tool) => {
          this.toolNames.set(tool.tool_id, tool.tool_name)
          return [...this.flush(), toolActivity(tool.tool_name, summarizeInput(tool.parameters))]
        })
      case "tool_result":
        return this.mapped(decodeToolResult(raw), (result) => [this.toolResult(result)])
      case "error":
        return this.mapped(decodeError(raw), (error) => {
          // Warnings (a blocked agent, a retried stream) change nothing; an error-severity line says why `result` fails.
          if (error.severity === "error") this.lastError = error.message
          return []
        })
      case "result":
        return this.mapped(decodeResult(raw), (result) => this.result(result))
      default:
        this.counts.ignored++
        return []
    }
  }

  /** The deltas streamed so far, as the complete message they make. */
  private flush(): ReadonlyArray<ProviderEvent> {
    const text = this.streamed
    this.streamed = ""
    return text === "" ? [] : [{ type: "message", text }]
  }

  private message(line: typeof Message.Type): ReadonlyArray<ProviderEvent> {
    // gemini echoes the prompt as a user message: not the agent's chat.
    if (line.role !== "assistant") return []
    if (line.delta === true) {
      if (line.content === "") return []
      this.streamed += line.content
      return [{ type: "delta", text: line.content }]
    }
    // A whole message replaces whatever deltas led up to it.
    this.streamed = ""
    return line.content === "" ? [] : [{ type: "message", text: line.content }]
  }

  private toolResult(line: typeof ToolResult.Type): ProviderEvent {
    const name = this.toolNames.get(line.tool_id) ?? "tool"
    if (line.status === "success") return toolActivity(name, "finished")
    const why = line.error?.message ?? line.output ?? line.status
    return toolActivity(name, `failed: ${why.slice(0, MAX_RESULT_PREVIEW)}`)
  }

  private result(line: typeof Result.Type): ReadonlyArray<ProviderEvent> {
    const usage = usageOf(line.stats)
    const before = [...this.flush(), ...(usage === undefined ? [] : [usage])]
    if (line.status === "success") {
      const session: ReadonlyArray<ProviderEvent> =
        this.sessionId === undefined ? [] : [{ type: "session", providerSessionId: this.sessionId }]
      return [...before, ...session, { type: "completed" }]
    }
    return [...before, this.errorOf(line)]
  }

  private errorOf(line: typeof Result.Type): ProviderEvent {
    const text = line.error?.message ?? this.lastError ?? ""
    const errorType = line.error?.type ?? null
    const message = (text.trim() === "" ? `Gemini CLI ended the turn with status "${line.status}".` : text).slice(
      0,
      MAX_MESSAGE
    )
    const code = HTTP_CODE.exec(text)?.[1]
    const status = code === undefined ? null : Number(code)
    const details = { provider: PROVIDER, errorType: errorType?.slice(0, MAX_NAME) ?? null, apiErrorStatus: status }
    const auth = status === 401 || status === 403 || AUTH_TEXT.test(text) || /authentication/i.test(errorType ?? "")
    return { type: "error", code: auth ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED", message, details }
  }
}
