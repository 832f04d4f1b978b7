/**
 * OpencodeEvents — opencode's `run --format json` lines (1.18.33), decoded strictly by key into ProviderEvents for
 * one turn. Every line carries the session id; `text` parts are whole messages (opencode does not stream, so Core
 * makes each message its only delta); `tool_use` parts arrive once the tool has finished or failed and become tool
 * activity; `step_finish` adds up usage and, unless the model asked for tools, ends the turn; `error` ends it with
 * a contract code. `step_start` and `reasoning` are known and unused (reasoning is never chat); other types are
 * ignored and counted, unreadable lines skipped and counted. Spawning opencode and waiting for it to exit are
 * OpencodeAdapter's.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "opencode"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed tool's text is kept short in the monitor: it may quote the page's data. */
const MAX_ERROR_PREVIEW = 512

const Text = Schema.String
const Count = Schema.Number

const Envelope = Schema.Struct({ type: Text, sessionID: Schema.optionalKey(ProviderSessionId) })
const TextLine = Schema.Struct({
  type: Schema.Literal("text"),
  part: Schema.Struct({ type: Schema.Literal("text"), text: Text })
})
const ToolLine = Schema.Struct({
  type: Schema.Literal("tool_use"),
  part: Schema.Struct({
    type: Schema.Literal("tool"),
    tool: Text,
    state: Schema.Struct({
      status: Text,
      input: Schema.optionalKey(Schema.Unknown),
      title: Schema.optionalKey(Text),
      error: Schema.optionalKey(Text)
    })
  })
})
const StepFinish = Schema.Struct({
  type: Schema.Literal("step_finish"),
  part: Schema.Struct({
    type: Schema.Literal("step-finish"),
    /** The AI SDK's finish reason: "tool-calls" (another step follows), "stop", "length", … */
    reason: Schema.optionalKey(Text),
    tokens: Schema.optionalKey(
      Schema.Struct({
        input: Schema.optionalKey(Count),
        output: Schema.optionalKey(Count),
        reasoning: Schema.optionalKey(Count),
        cache: Schema.optionalKey(Schema.Struct({ read: Schema.optionalKey(Count), write: Schema.optionalKey(Count) }))
      })
    )
  })
})
const ErrorLine = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({
    /** APIError, ProviderAuthError, UnknownError, MessageAbortedError, MessageOutputLengthError, … */
    name: Text,
    data: Schema.optionalKey(
      Schema.Struct({
        message: Schema.optionalKey(Text),
        statusCode: Schema.optionalKey(Schema.Number),
        providerID: Schema.optionalKey(Text)
      })
    )
  })
})

const decodeEnvelope = Schema.decodeUnknownOption(Envelope)
const decodeText = Schema.decodeUnknownOption(TextLine)
const decodeTool = Schema.decodeUnknownOption(ToolLine)
const decodeStepFinish = Schema.decodeUnknownOption(StepFinish)
const decodeError = Schema.decodeUnknownOption(ErrorLine)

/** Finish reasons after which opencode's loop runs another step; any other one ends the turn. */
const CONTINUES = new Set(["tool-calls", "unknown"])
/** The words opencode and the providers behind it use when credentials are missing or refused. */
const AUTH_TEXT = /api key|apikey|unauthori[sz]ed|authentication|not logged in|\/connect|\blogin\b/i

/** The argument that says most about a tool call: the shell command, the file, the pattern. */
const summarizeInput = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["command", "filePath", "pattern", "path", "url"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return JSON.stringify(input)
}

const count = (value: number | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** Decodes one turn's lines; it sums usage over the turn's steps and reports it once, before the turn ends. */
export class OpencodeTurnDecoder extends CountingDecoder {
  private sessionId: string | undefined
  private inputTokens = 0
  private outputTokens = 0

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const events = this.event(envelope.value.type, json.value)
    const id = envelope.value.sessionID
    if (id === undefined || id === this.sessionId) return events
    this.sessionId = id
    return [{ type: "session", providerSessionId: id }, ...events]
  }

  private event(type: string, raw: unknown): ReadonlyArray<ProviderEvent> {
    switch (type) {
      case "step_start":
      case "reasoning":
        return []
      case "text":
        return this.mapped(decodeText(raw), (line) => (line.part.text === "" ? [] : [message(line.part.text)]))
      case "tool_use":
        return this.mapped(decodeTool(raw), (line) => [toolActivity(line.part)])
      case "step_finish":
        return this.mapped(decodeStepFinish(raw), (line) => this.stepFinish(line.part))
      case "error":
        return this.mapped(decodeError(raw), (line) => [...this.usage(), errorOf(line.error)])
      default:
        this.counts.ignored++
        return []
    }
  }

  private stepFinish(part: (typeof StepFinish.Type)["part"]): ReadonlyArray<ProviderEvent> {
    const tokens = part.tokens
    // Cached input was read by the model too; reasoning tokens are output the model was billed for.
    this.inputTokens += count(tokens?.input) + count(tokens?.cache?.read) + count(tokens?.cache?.write)
    this.outputTokens += count(tokens?.output) + count(tokens?.reasoning)
    if (part.reason !== undefined && CONTINUES.has(part.reason)) return []
    return [...this.usage(), { type: "completed" }]
  }

  private usage(): ReadonlyArray<ProviderEvent> {
    const usage = usageEvent(this.inputTokens, this.outputTokens)
    this.inputTokens = 0
    this.outputTokens = 0
    return usage === undefined ? [] : [usage]
  }
}

const message = (text: string): ProviderEvent => ({ type: "message", text })

const toolActivity = (part: (typeof ToolLine.Type)["part"]): ProviderEvent => {
  const name = part.tool.slice(0, MAX_NAME)
  const summary = summarizeInput(part.state.input) ?? part.state.title
  const failed =
    part.state.status === "error" ? `failed: ${(part.state.error ?? "").slice(0, MAX_ERROR_PREVIEW)}` : undefined
  const detail = [summary, failed].filter((piece) => piece !== undefined && piece !== "").join(" — ")
  return detail === ""
    ? { type: "tool_activity", name }
    : { type: "tool_activity", name, detail: detail.slice(0, MAX_DETAIL) }
}

const errorOf = (error: (typeof ErrorLine.Type)["error"]): ProviderEvent => {
  const text = error.data?.message ?? ""
  const status = error.data?.statusCode ?? null
  const auth = error.name === "ProviderAuthError" || status === 401 || status === 403 || AUTH_TEXT.test(text)
  const message = (text.trim() === "" ? `opencode ended the turn with ${error.name}.` : text).slice(0, MAX_MESSAGE)
  const details = { provider: PROVIDER, errorName: error.name.slice(0, MAX_NAME), statusCode: status }
  return { type: "error", code: auth ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED", message, details }
}
