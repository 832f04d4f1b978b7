/**
 * CodexAppServer — one turn of a warm `codex app-server` (0.171.0) as its JSON-RPC client over stdio lines. The
 * requests: on a new process `initialize`, `initialized` and `thread/start` (or `thread/resume` of the thread a turn
 * continues) with the session's cwd, sandbox and approval policy, then `turn/start` once the thread has answered, and
 * `turn/interrupt` to stop it. The notifications, decoded strictly by method into ProviderEvents: the thread's id is
 * the session id, `item/agentMessage/delta` streams text and a completed `agentMessage` item is the message, shell,
 * file, MCP and web-search items are tool activity as exec's decoder gives them, `turn/completed` ends the turn
 * (completed with its usage, failed with its error mapped as exec's, interrupted as a failure WarmProcess keeps
 * quiet). A failed request (an unknown thread) ends the turn with its error. A request from the server (an approval;
 * none come with approval policy "never") is refused so codex never waits for an answer. `error` notifications that
 * will be retried and `warning`s are kept as warnings. Notifications known to carry nothing for a turn are opted out
 * of at `initialize`, so codex never writes them (a command's output deltas and a reasoning model's deltas can be
 * most of a turn's lines, each one JSON codex encodes and Core parses), and dropped should one come anyway; unknown
 * ones are counted. Spawning codex and its argv are CodexAdapter's.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonOf, usageEvent } from "../EventLine.ts"
import type { OutputLine } from "../OutputLines.ts"
import { CountingDecoder } from "../TurnProcess.ts"
import { codexError, McpToolCall, shellOutcome, toolActivity, WebSearch } from "./CodexEvents.ts"

const MAX_WARNINGS = 32
const MAX_WARNING = 8192
/** JSON-RPC's "method not found": what a client that serves no requests answers. */
const METHOD_NOT_FOUND = -32601

/** What every thread of the session starts or resumes with (`thread/start`'s and `thread/resume`'s params). */
export interface CodexThreadSettings {
  readonly cwd: string
  readonly sandbox: "workspace-write" | "danger-full-access"
  readonly approvalPolicy: "never"
  readonly model?: string
}

/** Request ids of one process; shared by the session's turns so an id never answers two requests. */
export interface RequestIds {
  next: number
}

const Text = Schema.String
const Message = Schema.Struct({
  id: Schema.optionalKey(Schema.Union([Schema.Number, Text])),
  method: Schema.optionalKey(Text),
  params: Schema.optionalKey(Schema.Unknown),
  result: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Struct({ message: Text }))
})
const ThreadResult = Schema.Struct({ thread: Schema.Struct({ id: ProviderSessionId }) })
const TurnResult = Schema.Struct({ turn: Schema.Struct({ id: Text }) })
const TurnError = Schema.Struct({ message: Text, codexErrorInfo: Schema.optionalKey(Schema.Unknown) })
/** `turn/started` and `turn/completed` alike. */
const TurnNotice = Schema.Struct({
  turn: Schema.Struct({ id: Text, status: Text, error: Schema.optionalKey(Schema.NullOr(TurnError)) })
})
const Delta = Schema.Struct({ delta: Text })
const ErrorNotice = Schema.Struct({ error: TurnError, willRetry: Schema.Boolean })
const Warning = Schema.Struct({ message: Text })
const Tokens = Schema.Struct({ inputTokens: Schema.Number, outputTokens: Schema.Number })
const TokenUsage = Schema.Struct({ turnId: Text, tokenUsage: Schema.Struct({ last: Tokens }) })
/** Decoded further by its own `type`: each item kind has its own fields. */
const ItemNotice = Schema.Struct({ item: Schema.Unknown })
const ItemHead = Schema.Struct({ type: Text })
const AgentMessage = Schema.Struct({ text: Text })
const CommandExecution = Schema.Struct({
  command: Text,
  status: Text,
  aggregatedOutput: Schema.optionalKey(Schema.NullOr(Text)),
  exitCode: Schema.optionalKey(Schema.NullOr(Schema.Number))
})
const FileChange = Schema.Struct({
  changes: Schema.Array(Schema.Struct({ path: Text, kind: Schema.Struct({ type: Text }) }))
})

const decodeMessage = Schema.decodeUnknownOption(Message)
const decodeThreadResult = Schema.decodeUnknownOption(ThreadResult)
const decodeTurnResult = Schema.decodeUnknownOption(TurnResult)
const decodeTurnNotice = Schema.decodeUnknownOption(TurnNotice)
const decodeDelta = Schema.decodeUnknownOption(Delta)
const decodeErrorNotice = Schema.decodeUnknownOption(ErrorNotice)
const decodeWarning = Schema.decodeUnknownOption(Warning)
const decodeTokenUsage = Schema.decodeUnknownOption(TokenUsage)
const decodeItemNotice = Schema.decodeUnknownOption(ItemNotice)
const decodeItemHead = Schema.decodeUnknownOption(ItemHead)
const decodeAgentMessage = Schema.decodeUnknownOption(AgentMessage)
const decodeCommand = Schema.decodeUnknownOption(CommandExecution)
const decodeFileChange = Schema.decodeUnknownOption(FileChange)
const decodeMcpToolCall = Schema.decodeUnknownOption(McpToolCall)
const decodeWebSearch = Schema.decodeUnknownOption(WebSearch)

/** Notifications that say nothing about a turn's conversation: opted out of, and dropped without counting. */
const UNUSED = new Set([
  "thread/started",
  "thread/status/changed",
  "thread/settings/updated",
  "account/rateLimits/updated",
  "remoteControl/status/changed",
  "mcpServer/startupStatus/updated",
  "serverRequest/resolved",
  "skills/changed",
  "turn/diff/updated",
  "turn/plan/updated",
  "item/commandExecution/outputDelta",
  "item/fileChange/outputDelta",
  "item/fileChange/patchUpdated",
  "item/mcpToolCall/progress",
  "item/reasoning/summaryTextDelta",
  "item/reasoning/summaryPartAdded",
  "item/reasoning/textDelta"
])
const UNUSED_ITEMS = new Set(["userMessage", "reasoning", "plan", "contextCompaction", "hookPrompt"])

/** Auth refused by codex's own classification, whatever the message says (codexErrorInfo `unauthorized`, a 401/403). */
const isAuthInfo = (info: unknown): boolean =>
  info === "unauthorized" || /"httpStatusCode":40[13]\b/.test(JSON.stringify(info ?? null))

const turnError = (error: typeof TurnError.Type): ProviderEvent => {
  const event = codexError(error.message)
  return isAuthInfo(error.codexErrorInfo) ? { ...event, code: "PROVIDER_AUTH_REQUIRED" } : event
}

/** One turn's requests and the decoding of what app-server says back. */
export class CodexAppServerTurn extends CountingDecoder {
  readonly warnings: Array<string> = []
  /** The last error codex reported: why it failed if it then dies before `turn/completed`. */
  lastError: string | undefined
  private readonly outbox: Array<string> = []
  private threadId: string | undefined
  private turnId: string | undefined
  private prompt = ""
  private threadRequest: number | undefined
  private turnRequest: number | undefined
  private readonly usage = { input: 0, output: 0 }

  private readonly ids: RequestIds
  private readonly settings: CodexThreadSettings

  constructor(ids: RequestIds, settings: CodexThreadSettings) {
    super()
    this.ids = ids
    this.settings = settings
  }

  /** The lines that start the turn: a new process's handshake and thread first (the turn follows their answer). */
  begin(prompt: string, fresh: boolean, providerSessionId: string | undefined): ReadonlyArray<string> {
    this.prompt = prompt
    if (!fresh && providerSessionId !== undefined) {
      this.threadId = providerSessionId
      return [this.turnStart(providerSessionId)]
    }
    const initialize = this.request("initialize", {
      clientInfo: { name: "pedelec", title: "Pedelec", version: "1" },
      capabilities: { experimentalApi: false, requestAttestation: false, optOutNotificationMethods: [...UNUSED] }
    })
    const thread =
      providerSessionId === undefined
        ? this.request("thread/start", this.settings)
        : this.request("thread/resume", { threadId: providerSessionId, ...this.settings, excludeTurns: true })
    this.threadRequest = this.ids.next
    return [initialize, JSON.stringify({ method: "initialized" }), thread]
  }

  /** `turn/interrupt`, once codex has said which turn runs; before that there is nothing to name. */
  interrupt(): string | undefined {
    const { threadId, turnId } = this
    return threadId === undefined || turnId === undefined
      ? undefined
      : this.request("turn/interrupt", { threadId, turnId })
  }

  /** What the turn owes codex after the line just decoded. */
  replies(): ReadonlyArray<string> {
    return this.outbox.splice(0)
  }

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    if (line.text.trim() === "") return []
    const message = Option.flatMap(jsonOf(line.text), decodeMessage)
    if (Option.isNone(message)) return this.skip()
    const { id, method, params, result, error } = message.value
    if (method === undefined) return id === undefined ? this.skip() : this.response(id, result, error)
    if (id !== undefined) return this.refuse(id, method)
    return this.notification(method, params)
  }

  private request(method: string, params: unknown): string {
    this.ids.next++
    return JSON.stringify({ id: this.ids.next, method, params })
  }

  private turnStart(threadId: string): string {
    const line = this.request("turn/start", {
      threadId,
      input: [{ type: "text", text: this.prompt, text_elements: [] }]
    })
    this.turnRequest = this.ids.next
    return line
  }

  private response(id: number | string, result: unknown, error: { message: string } | undefined) {
    const ours = id === this.threadRequest || id === this.turnRequest
    // An answer to an earlier turn's request (a late `turn/interrupt`) or to `initialize` carries nothing more.
    if (!ours) return error === undefined ? [] : this.warned(error.message)
    if (error !== undefined) return [codexError(error.message)]
    if (id === this.turnRequest) {
      return this.mapped(decodeTurnResult(result), (answer) => {
        this.turnId ??= answer.turn.id
        return []
      })
    }
    return this.mapped(decodeThreadResult(result), (answer) => {
      this.threadId = answer.thread.id
      this.outbox.push(this.turnStart(answer.thread.id))
      return [{ type: "session", providerSessionId: answer.thread.id }]
    })
  }

  private refuse(id: number | string, method: string) {
    const message = `Pedelec does not answer ${method} (approval policy is never)`
    this.outbox.push(JSON.stringify({ id, error: { code: METHOD_NOT_FOUND, message } }))
    return this.warned(`codex asked ${method}; refused`)
  }

  private notification(method: string, params: unknown): ReadonlyArray<ProviderEvent> {
    switch (method) {
      case "turn/started":
        return this.mapped(decodeTurnNotice(params), (started) => {
          this.turnId ??= started.turn.id
          return []
        })
      case "item/agentMessage/delta":
        return this.mapped(decodeDelta(params), (delta) =>
          delta.delta === "" ? [] : [{ type: "delta", text: delta.delta }]
        )
      case "item/started":
      case "item/completed":
        return this.mapped(decodeItemNotice(params), (notice) =>
          this.mapped(decodeItemHead(notice.item), (head) =>
            this.item(method === "item/completed", head.type, notice.item)
          )
        )
      case "thread/tokenUsage/updated":
        return this.mapped(decodeTokenUsage(params), (update) => {
          if (update.turnId !== this.turnId) return []
          this.usage.input += update.tokenUsage.last.inputTokens
          this.usage.output += update.tokenUsage.last.outputTokens
          return []
        })
      case "turn/completed":
        return this.mapped(decodeTurnNotice(params), (done) => this.completed(done.turn))
      case "error":
        return this.mapped(decodeErrorNotice(params), (notice) => {
          if (!notice.willRetry) this.lastError = notice.error.message
          return this.warned(notice.error.message)
        })
      case "warning":
      case "configWarning":
      case "deprecationNotice":
        return this.mapped(decodeWarning(params), (warning) => this.warned(warning.message))
      default:
        if (!UNUSED.has(method)) this.counts.ignored++
        return []
    }
  }

  private completed(turn: typeof TurnNotice.Type.turn): ReadonlyArray<ProviderEvent> {
    if (turn.status === "completed") {
      const usage = usageEvent(this.usage.input, this.usage.output)
      return usage === undefined ? [{ type: "completed" }] : [usage, { type: "completed" }]
    }
    if (turn.error !== undefined && turn.error !== null) return [turnError(turn.error)]
    return [codexError(turn.status === "interrupted" ? "The turn was interrupted." : `The turn ended ${turn.status}.`)]
  }

  private item(completed: boolean, type: string, item: unknown): ReadonlyArray<ProviderEvent> {
    switch (type) {
      case "agentMessage":
        return this.mapped(decodeAgentMessage(item), (message) =>
          completed && message.text !== "" ? [{ type: "message", text: message.text }] : []
        )
      case "commandExecution":
        return this.mapped(decodeCommand(item), (command) => [
          toolActivity(
            "shell",
            completed ? shellOutcome(command.status, command.exitCode, command.aggregatedOutput) : command.command
          )
        ])
      case "fileChange":
        return this.mapped(decodeFileChange(item), (change) =>
          completed
            ? [toolActivity("file_change", change.changes.map((c) => `${c.kind.type} ${c.path}`).join(", "))]
            : []
        )
      case "mcpToolCall":
        return this.mapped(decodeMcpToolCall(item), (call) => {
          const name = `${call.server}.${call.tool}`
          if (!completed) return [toolActivity(name, undefined)]
          const failed = call.error?.message
          return [toolActivity(name, failed === undefined ? call.status : `failed: ${failed}`)]
        })
      case "webSearch":
        return this.mapped(decodeWebSearch(item), (search) =>
          completed ? [] : [toolActivity("web_search", search.query)]
        )
      default:
        if (!UNUSED_ITEMS.has(type)) this.counts.ignored++
        return []
    }
  }

  private warned(text: string): ReadonlyArray<ProviderEvent> {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(text.slice(0, MAX_WARNING))
    return []
  }
}
