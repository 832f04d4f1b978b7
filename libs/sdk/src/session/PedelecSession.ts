/**
 * PedelecSession — one session as a page holds it: its events in `seq` order, delivered once (a replay after a
 * reconnect repeats nothing), its turns, and its tool calls when this page holds the claim on the tools (a
 * `tool_call` names the claimant it is offered to; one offered to another tab means the claim moved, and what runs
 * here is aborted). Status is Core's, as reported; the SDK never guesses one. The port, requests and reconnection are ExtensionLink's; the session only
 * re-subscribes itself from the last `seq` it saw when asked to.
 */
import type { AssetPath, ReadAssetAs } from "@pedelec/contracts/Assets"
import type { Claimant, SessionEvent, ToolCallEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { hasCode, PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortLevel } from "@pedelec/contracts/Provider"
import type { SessionInfo, SessionStatus, WorkspaceInfo } from "@pedelec/contracts/Session"
import type { ToolOutcome } from "@pedelec/contracts/Tool"
import type { ExtensionLink } from "../page/ExtensionLink.ts"
import type { GenericToolHandler, JsonObject, JsonValue, ToolHandler } from "../tools/Tool.ts"
import { listAssets, readAsset, type SandboxAsset, uploadAsset } from "./Assets.ts"
import type { EventContext, TurnCompletion, TurnResult } from "./EventContext.ts"
import { Listeners } from "./Listeners.ts"
import { type ResolvedHandler, ToolCalls } from "./ToolCalls.ts"
import { Turns } from "./Turns.ts"

/** This page's claim token: unique, not secret (Core trusts only the claiming connection's answers). */
const mintClaimant = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")

const cancelledHere = (tool: string, reason: string) =>
  PedelecError.fromCode("TOOL_CANCELLED", "sdk", { details: { tool, reason } })

/** What `sendText(text, options)` takes. */
export interface SendTextOptions {
  /** Rejects `REQUEST_TIMEOUT` and cancels the turn when it has not completed by then. */
  readonly timeoutMs?: number | undefined
}

/**
 * One session with a local agent, from `Pedelec.createSession` or `resumeSession`: turns, events in `seq` order,
 * and the page's tool handlers. `ToolName` is the union of the session's tool names: `onTool("typo", …)` does not
 * compile.
 */
export class PedelecSession<ToolName extends string = string> {
  /** The agent's `pedelec_thread_id`; pass it to `resumeSession` after a reload or in another tab. */
  readonly sessionId: string
  /** The provider code the session runs (`codex`, `claude`, `ollama`, …). */
  readonly provider: string
  /** The model, or `null` for the provider's default. */
  readonly model: string | null
  /** The effort level whose profile was snapshotted into the session at creation. */
  readonly effortLevel: EffortLevel
  /** The agent's working directory: managed (deleted at end) or the path the user granted. */
  readonly workspace: WorkspaceInfo

  #status: SessionStatus
  #lastSeq: number
  #ending: Promise<void> | undefined
  #isEnded = false
  readonly #turns = new Turns()
  readonly #prepareTurnIds = new Set<string>()
  readonly #calls: ToolCalls
  readonly #namedHandlers = new Map<string, ToolHandler>()
  #genericHandler: GenericToolHandler | undefined
  readonly #on = {
    chat: new Listeners<[text: string, ctx: EventContext]>(),
    chatDelta: new Listeners<[delta: string, ctx: EventContext]>(),
    status: new Listeners<[status: SessionStatus, ctx: EventContext]>(),
    error: new Listeners<[error: PedelecError, ctx: EventContext]>(),
    ended: new Listeners<[ctx: EventContext]>(),
    turnCompleted: new Listeners<[result: TurnCompletion, ctx: EventContext]>()
  }

  #claimsTools: boolean
  readonly #claimant = mintClaimant()
  readonly #inlineHandlers: ReadonlyMap<string, ToolHandler>
  readonly #link: ExtensionLink
  readonly #forget: () => void

  /** @internal Pages get sessions from `Pedelec.createSession` / `resumeSession`. */
  constructor(
    info: SessionInfo,
    claimsTools: boolean,
    inlineHandlers: ReadonlyMap<string, ToolHandler>,
    link: ExtensionLink,
    forget: () => void
  ) {
    this.#claimsTools = claimsTools
    this.#inlineHandlers = inlineHandlers
    this.#link = link
    this.#forget = forget
    this.sessionId = info.sessionId
    this.provider = info.provider
    this.model = info.model
    this.effortLevel = info.effortLevel
    this.workspace = info.workspace
    this.#status = info.status
    this.#lastSeq = info.lastSeq
    this.#calls = new ToolCalls({
      sessionId: info.sessionId as SessionId,
      link,
      handlerFor: (tool) => this.#handlerFor(tool),
      report: (error) => this.report(error)
    })
  }

  /** The session's status as Core last reported it. */
  getStatus(): SessionStatus {
    return this.#status
  }

  /** Resolves at the turn's completion; rejects with the turn's own error code. */
  async sendText(text: string, options: SendTextOptions = {}): Promise<TurnResult> {
    const completion = await this.#runTurn(
      "user",
      () => this.#link.request("session.send_text", { sessionId: this.#id, text: text as never }),
      options.timeoutMs
    )
    return {
      turnId: completion.turnId,
      reason: completion.reason === "cancelled" ? "cancelled" : "completed",
      text: completion.text
    }
  }

  /** A warm-up turn: the provider starts and records its session id; its chat is not shown. */
  async prepare(): Promise<void> {
    await this.#runTurn("prepare", () => this.#link.request("session.prepare", { sessionId: this.#id }))
  }

  /** Stops the active turn; `sendText` then resolves with reason "cancelled". */
  async cancel(): Promise<void> {
    this.#usable()
    await this.#link.request("session.cancel", { sessionId: this.#id })
  }

  /** Idempotent: ends the session, its processes and a managed workspace. */
  end(): Promise<void> {
    if (this.#isEnded) return Promise.resolve()
    this.#ending ??= this.#link.request("session.end", { sessionId: this.#id }).then(
      () => this.#markEnded("sdk"),
      (error: unknown) => {
        if (hasCode(error, "SESSION_ENDED", "SESSION_NOT_FOUND")) return this.#markEnded("sdk")
        this.#ending = undefined
        throw error
      }
    )
    return this.#ending
  }

  /**
   * Puts a file into the session's assets (`.pedelec-runtime/assets/` of its workspace, where the agent reads it) at
   * `targetPath`, else under the file's name; resolves with its path. Start it from a user gesture where you can:
   * Chrome may ask the user once before a site reaches the local runtime.
   */
  async uploadAsset(file: File, targetPath?: string): Promise<AssetPath> {
    this.#usable()
    return uploadAsset(this.#link, this.#id, file, targetPath)
  }

  /** The session's asset files, with names, sizes, content types and modification times. */
  async listAssets(): Promise<ReadonlyArray<SandboxAsset>> {
    this.#usable()
    return listAssets(this.#link, this.#id)
  }

  /** Reads an asset (one the agent wrote, say) as UTF-8 text, as JSON, or as a File. */
  readAsset(path: string, as: "text"): Promise<string>
  readAsset<T = JsonValue>(path: string, as: "json"): Promise<T>
  readAsset(path: string, as: "file"): Promise<File>
  async readAsset(path: string, as: ReadAssetAs): Promise<unknown> {
    this.#usable()
    return readAsset(this.#link, this.#id, path, as)
  }

  /** A complete assistant message (prepare turns' chat is hidden). Returns its unsubscribe function. */
  onChat(callback: (text: string, ctx: EventContext) => void): () => void {
    return this.#on.chat.add(callback)
  }
  /** Streamed assistant text (one delta per message where the provider does not stream). Returns its unsubscribe. */
  onChatDelta(callback: (delta: string, ctx: EventContext) => void): () => void {
    return this.#on.chatDelta.add(callback)
  }
  /** Each change of the session's status. Returns its unsubscribe function. */
  onStatus(callback: (status: SessionStatus, ctx: EventContext) => void): () => void {
    return this.#on.status.add(callback)
  }
  /** A turn's error (before its `failed` completion), a lost subscription, a replay gap. Returns its unsubscribe. */
  onError(callback: (error: PedelecError, ctx: EventContext) => void): () => void {
    return this.#on.error.add(callback)
  }
  /** Once, when the session ended (here, in another tab, by revocation or in Core). Returns its unsubscribe. */
  onEnded(callback: (ctx: EventContext) => void): () => void {
    return this.#on.ended.add(callback)
  }
  /** Every turn's one completion, whichever tab started it. Returns its unsubscribe function. */
  onTurnCompleted(callback: (result: TurnCompletion, ctx: EventContext) => void): () => void {
    return this.#on.turnCompleted.add(callback)
  }

  /** A handler for one tool (it wins over the tool's inline handler), or for every tool without one. */
  onTool<Args = JsonObject>(name: ToolName, handler: ToolHandler<Args>): () => void
  onTool(handler: GenericToolHandler<ToolName>): () => void
  onTool(nameOrHandler: string | GenericToolHandler<ToolName>, handler?: ToolHandler<never>): () => void {
    if (typeof nameOrHandler === "function") {
      const generic = nameOrHandler as GenericToolHandler
      this.#genericHandler = generic
      return () => {
        if (this.#genericHandler === generic) this.#genericHandler = undefined
      }
    }
    if (typeof handler !== "function") {
      throw PedelecError.fromCode("INVALID_INPUT", "sdk", {
        details: { pointer: "/handler", reason: "onTool(name, handler) needs a function" }
      })
    }
    const named = handler as ToolHandler
    this.#namedHandlers.set(nameOrHandler, named)
    return () => {
      if (this.#namedHandlers.get(nameOrHandler) === named) this.#namedHandlers.delete(nameOrHandler)
    }
  }

  /** @internal Every event of this session, from the client's router. */
  receive(event: SessionEvent): void {
    if (event.seq <= this.#lastSeq || this.#isEnded) return
    this.#lastSeq = event.seq
    const ctx = this.#context("core", "turnId" in event ? event.turnId : undefined)
    switch (event.type) {
      case "chat":
        if (!this.#hidden(event.turnId)) this.#on.chat.emit(event.text, ctx)
        return
      case "chat_delta":
        if (!this.#hidden(event.turnId)) this.#on.chatDelta.emit(event.delta, ctx)
        return
      case "status_changed":
        if (event.turnKind === "prepare" && event.turnId !== undefined) this.#prepareTurnIds.add(event.turnId)
        if (event.status === "ended") this.#markEnded("core")
        else this.#setStatus(event.status, ctx)
        return
      case "tool_call":
        this.#offered(event, ctx)
        return
      case "tool_call_cancelled":
        this.#calls.abort(event.toolCallId, () => PedelecError.fromCode(event.reason, "core"))
        return
      case "tool_result":
        // Answered elsewhere (the claim moved on): a handler still running here must stop.
        this.#calls.abort(event.toolCallId, () => cancelledHere(event.tool, "the call was answered elsewhere"))
        return
      case "turn_completed": {
        const { turnId, turnKind, reason, text } = event
        this.#on.turnCompleted.emit({ turnId, turnKind, reason, text }, ctx)
        this.#prepareTurnIds.delete(turnId)
        this.#turns.completed(event)
        return
      }
      case "error":
        this.#on.error.emit(PedelecError.fromWire(event.error), ctx)
        return
      case "ended":
        this.#markEnded("core")
    }
  }

  /** @internal A failure that belongs to this session but to no request (a lost subscription, a replay gap). */
  report(error: PedelecError): void {
    this.#on.error.emit(error, this.#context("sdk", undefined))
  }

  /**
   * @internal Resume and re-subscribe from the last `seq` seen, on a new port (`send`) or the current one. Never
   * throws: a session that is gone ends here, any other failure is reported to the page.
   */
  async resubscribe(via: "send" | "request"): Promise<void> {
    try {
      await this.follow(via)
    } catch (error) {
      if (error instanceof PedelecError) this.report(error)
    }
  }

  /** @internal As `resubscribe`, for `resumeSession` on a held session: a failure is the caller's. */
  async follow(via: "send" | "request"): Promise<void> {
    if (this.#isEnded) return
    const call = via === "send" ? this.#link.send.bind(this.#link) : this.#link.request.bind(this.#link)
    try {
      await call("session.resume", { sessionId: this.#id, claimTools: this.#claimsTools })
      await call("session.subscribe", { sessionId: this.#id, afterSeq: this.#lastSeq, ...this.claimParams })
    } catch (error) {
      if (hasCode(error, "SESSION_ENDED", "SESSION_NOT_FOUND")) this.#markEnded("sdk")
      throw error
    }
  }

  /** @internal `resumeSession` with `claimTools` on a session this client already holds. */
  claim(): void {
    this.#claimsTools = true
  }

  /** @internal What `session.subscribe` carries: this page's claim token, when it claims the tools. */
  get claimParams(): { readonly claimant?: Claimant } {
    return this.#claimsTools ? { claimant: this.#claimant as Claimant } : {}
  }

  get #id(): SessionId {
    return this.sessionId as SessionId
  }

  #usable(): void {
    if (this.#isEnded) {
      throw PedelecError.fromCode("SESSION_ENDED", "sdk", { details: { sessionId: this.sessionId } })
    }
  }

  async #runTurn(kind: "user" | "prepare", start: () => Promise<{ readonly turnId: string }>, timeoutMs?: number) {
    this.#usable()
    if (this.#turns.active !== undefined) {
      throw PedelecError.fromCode("SESSION_BUSY", "sdk", { details: { sessionId: this.sessionId } })
    }
    const turn = this.#turns.begin(kind)
    try {
      const { turnId } = await start()
      this.#turns.accepted(turn, turnId)
    } catch (error) {
      this.#turns.refused(turn, error instanceof PedelecError ? error : PedelecError.fromCode("INTERNAL_ERROR", "sdk"))
      throw error
    }
    if (timeoutMs === undefined) return turn.done
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(PedelecError.fromCode("REQUEST_TIMEOUT", "sdk", { details: { method: "sendText", timeoutMs } }))
        // The turn must not outlive the caller's patience; its cancelled completion frees the session.
        this.cancel().catch(() => undefined)
      }, timeoutMs)
    })
    return Promise.race([turn.done, timedOut]).finally(() => clearTimeout(timer))
  }

  #hidden(turnId: string): boolean {
    return this.#prepareTurnIds.has(turnId) || this.#turns.isPrepare(turnId)
  }

  #setStatus(status: SessionStatus, ctx: EventContext): void {
    if (status === this.#status) return
    this.#status = status
    this.#on.status.emit(status, ctx)
  }

  /**
   * A call offered to this page's claim runs here (one offered to no claim, to a page that claims); one offered to
   * another claimant means the claim moved there: whatever runs here stops, and may run again if it comes back.
   */
  #offered(event: typeof ToolCallEvent.Type, ctx: EventContext): void {
    const { claimant } = event
    if (claimant === undefined || claimant === this.#claimant) {
      if (claimant !== undefined) this.#claimsTools = true
      if (this.#claimsTools) void this.#calls.run(event, ctx)
      return
    }
    this.#claimsTools = false
    this.#calls.release(event.tool)
  }

  /** @internal A call from outside Core (WebMCP): the handler `onTool` or `defineTool` gave, run in this page. */
  runHere(tool: string, args: JsonObject, signal: AbortSignal): Promise<ToolOutcome> {
    return this.#calls.runHere(tool, args, signal, this.#context("sdk", undefined))
  }

  #handlerFor(tool: string): ResolvedHandler | undefined {
    const handler = this.#namedHandlers.get(tool) ?? this.#inlineHandlers.get(tool)
    if (handler !== undefined) return handler
    const generic = this.#genericHandler
    return generic === undefined ? undefined : (args, ctx) => generic(tool as ToolName, args, ctx)
  }

  /** Once, whoever noticed first: Core's status or `ended` event, or the answer to `end()`. */
  #markEnded(source: "core" | "sdk"): void {
    if (this.#isEnded) return
    this.#isEnded = true
    const ctx = this.#context(source, undefined)
    const ended = PedelecError.fromCode("SESSION_ENDED", "sdk", { details: { sessionId: this.sessionId } })
    this.#setStatus("ended", ctx)
    this.#turns.abandon(ended)
    this.#calls.end(ended)
    this.#on.ended.emit(ctx)
    this.#forget()
  }

  #context(source: "core" | "sdk", turnId: string | undefined): EventContext {
    return {
      sessionId: this.sessionId,
      turnId,
      provider: this.provider,
      model: this.model,
      source,
      seq: this.#lastSeq,
      receivedAt: Date.now()
    }
  }
}
