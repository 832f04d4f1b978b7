/**
 * AntigravityEvents — Google Antigravity CLI's `--output-format stream-json` lines, decoded strictly by key into
 * ProviderEvents for one turn. Format source: the vendor's release notes for agy 1.1.8 (typed `init`,
 * `step_update` and terminal `result` events with a closed `step_type` vocabulary, a `tool_info` per tool call,
 * token `usage`; https://github.com/google-antigravity/antigravity-cli/releases/tag/1.1.8) and, where the notes
 * give no field names, published captures of agy 1.1.11–1.1.15 (the telltale and dsh-agy-link projects). Each line
 * is `{"event": …}` with its payload under a key named after the event: `init` carries `conversation_id`;
 * `agent_response` steps carry `text_delta` (deltas; the final text is `result.response`, which an earlier
 * implementation found more reliable); `tool` steps carry `tool_name` and `tool_info` and move ACTIVE → DONE or
 * ERROR; `result` ends the turn with `status` SUCCESS, or ERROR and an `error` text, mapped to a contract code.
 * agy streams no thinking text in print mode, and none would be chat. Unknown events are ignored and counted;
 * unreadable lines (agy prints plain notices too) are skipped and counted. Not verified against the real CLI: the
 * fixtures in test/fixtures/antigravity are hand-written.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"

const PROVIDER = "antigravity"
const MAX_MESSAGE = 8192
const MAX_DETAIL = 4096
const MAX_NAME = 256
/** A failed tool's text is kept short in the monitor: it may quote the page's data. */
const MAX_ERROR_PREVIEW = 512
/** `status` values that mean the turn finished; captures show SUCCESS, one integration also saw DONE. */
const FINISHED = new Set(["SUCCESS", "DONE"])

const Text = Schema.String
const Count = Schema.Number

const Init = Schema.Struct({ event: Schema.Literal("init"), conversation_id: ProviderSessionId })
const StepUpdate = Schema.Struct({
  event: Schema.Literal("step_update"),
  step_update: Schema.Struct({
    step_type: Text,
    state: Schema.optionalKey(Text),
    step_index: Schema.optionalKey(Count),
    text_delta: Schema.optionalKey(Text),
    tool_name: Schema.optionalKey(Text),
    tool_info: Schema.optionalKey(Schema.Unknown)
  })
})
const ToolInfo = Schema.Struct({
  name: Schema.optionalKey(Text),
  parameters: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Struct({ message: Schema.optionalKey(Text) }))
})
const Result = Schema.Struct({
  event: Schema.Literal("result"),
  result: Schema.Struct({
    status: Text,
    response: Schema.optionalKey(Text),
    error: Schema.optionalKey(Text),
    usage: Schema.optionalKey(Schema.Unknown)
  })
})
const Usage = Schema.Struct({
  input_tokens: Schema.optionalKey(Count),
  output_tokens: Schema.optionalKey(Count)
})

const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ event: Text }))
const decodeInit = Schema.decodeUnknownOption(Init)
const decodeStep = Schema.decodeUnknownOption(StepUpdate)
const decodeToolInfo = Schema.decodeUnknownOption(ToolInfo)
const decodeResult = Schema.decodeUnknownOption(Result)
const decodeUsage = Schema.decodeUnknownOption(Usage)

/** The words agy uses when its Google sign-in is missing, refused or expired. */
export const ANTIGRAVITY_AUTH_TEXT =
  /authentication (required|failed)|please sign in|not signed in|not logged in|waiting for authentication|invalid_grant|unauthenticated/i

/** The argument that says most about a tool call: the command line, the file, the pattern, the URL. */
const summarizeParameters = (parameters: unknown): string | undefined => {
  if (typeof parameters !== "object" || parameters === null) return undefined
  const record = parameters as Record<string, unknown>
  for (const key of ["CommandLine", "AbsolutePath", "TargetFile", "DirectoryPath", "Pattern", "Query", "Url"]) {
    const value = record[key]
    if (typeof value === "string") return value
  }
  return JSON.stringify(parameters)
}

const toolActivity = (name: string, detail: string | undefined): ProviderEvent =>
  detail === undefined || detail === ""
    ? { type: "tool_activity", name: name.slice(0, MAX_NAME) }
    : { type: "tool_activity", name: name.slice(0, MAX_NAME), detail: detail.slice(0, MAX_DETAIL) }

const count = (value: number | undefined) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0

/** agy's input_tokens already holds the cached ones (input + output = total_tokens in captures). */
const usageOf = (usage: unknown): ReadonlyArray<ProviderEvent> =>
  Option.match(decodeUsage(usage), {
    onNone: () => [],
    onSome: (u) => {
      const input = count(u.input_tokens)
      const output = count(u.output_tokens)
      return [usageEvent(input, output)].filter((event) => event !== undefined)
    }
  })

/** Decodes one turn's lines; it remembers which tool steps it announced, since a step is updated several times. */
export class AntigravityTurnDecoder extends CountingDecoder {
  private readonly announced = new Set<number>()

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const json = jsonOf(line.text)
    const envelope = Option.flatMap(json, decodeEnvelope)
    if (Option.isNone(json) || Option.isNone(envelope)) return this.skip()
    const raw = json.value
    switch (envelope.value.event) {
      case "init":
        return this.mapped(decodeInit(raw), (init) => [{ type: "session", providerSessionId: init.conversation_id }])
      case "step_update":
        return this.mapped(decodeStep(raw), (step) => this.step(step.step_update))
      case "result":
        return this.mapped(decodeResult(raw), (line) => resultOf(line.result))
      default:
        this.counts.ignored++
        return []
    }
  }

  /** Only answers and tools matter; user_input, checkpoint and the rest are known and unused. */
  private step(step: (typeof StepUpdate.Type)["step_update"]): ReadonlyArray<ProviderEvent> {
    if (step.step_type === "agent_response") {
      return step.text_delta === undefined || step.text_delta === "" ? [] : [{ type: "delta", text: step.text_delta }]
    }
    if (step.step_type !== "tool") return []
    const info = Option.getOrUndefined(decodeToolInfo(step.tool_info))
    const name = info?.name ?? step.tool_name ?? "tool"
    if (step.state === "ERROR") return [toolActivity(name, `failed: ${failure(info)}`)]
    if (step.state === "DONE") return [toolActivity(name, "finished")]
    if (step.step_index !== undefined) {
      if (this.announced.has(step.step_index)) return []
      this.announced.add(step.step_index)
    }
    return [toolActivity(name, summarizeParameters(info?.parameters))]
  }
}

const failure = (info: typeof ToolInfo.Type | undefined) => (info?.error?.message ?? "").slice(0, MAX_ERROR_PREVIEW)

const resultOf = (result: (typeof Result.Type)["result"]): ReadonlyArray<ProviderEvent> => {
  const usage = usageOf(result.usage)
  // The final answer, whole: deltas were only a preview of it. A failed turn may still have one worth keeping.
  const answer: ReadonlyArray<ProviderEvent> =
    result.response === undefined || result.response.trim() === "" ? [] : [{ type: "message", text: result.response }]
  if (FINISHED.has(result.status)) return [...answer, ...usage, { type: "completed" }]
  return [...answer, ...usage, errorOf(result)]
}

const errorOf = (result: (typeof Result.Type)["result"]): ProviderEvent => {
  const text = result.error ?? ""
  const message = (text.trim() === "" ? `agy ended the turn with status ${result.status}.` : text).slice(0, MAX_MESSAGE)
  const details = { provider: PROVIDER, status: result.status.slice(0, MAX_NAME) }
  return {
    type: "error",
    code: ANTIGRAVITY_AUTH_TEXT.test(text) ? "PROVIDER_AUTH_REQUIRED" : "PROVIDER_FAILED",
    message,
    details
  }
}
