/**
 * ToolCalls — the tool calls one session runs in this page while it holds the claim: each offered call id runs its
 * handler once (an offer repeated after a reconnect runs nothing new), its signal aborts when Core cancels it, it is
 * answered elsewhere, the claim moves or the session ends, and its outcome reaches Core even across a reconnect: an
 * outcome whose submit failed (the native host died with it in flight, or the new connection had not claimed yet)
 * is kept and sent again when Core offers the call again. Which handler a tool has, the claim itself and the port are
 * PedelecSession's and ExtensionLink's.
 */
import type { ToolCallEvent } from "@pedelec/contracts/Events"
import type { SessionId, ToolCallId } from "@pedelec/contracts/Ids"
import { hasCode, PedelecError } from "@pedelec/contracts/PedelecError"
import type { ToolOutcome } from "@pedelec/contracts/Tool"
import type { ExtensionLink } from "../page/ExtensionLink.ts"
import type { JsonObject, ToolCallContext } from "../tools/Tool.ts"
import { handlerNotFound, runHandler } from "../tools/ToolRunner.ts"
import type { EventContext } from "./EventContext.ts"

/** Tool call ids remembered so a call offered again after a reconnect runs once. */
const REMEMBERED_CALLS = 1024

/** A tool's handler as the session resolves it at call time (a named one, the inline one, or the generic one). */
export type ResolvedHandler = (args: JsonObject, ctx: ToolCallContext) => unknown

export interface ToolCallsOptions {
  readonly sessionId: SessionId
  readonly link: ExtensionLink
  readonly handlerFor: (tool: string) => ResolvedHandler | undefined
  /** A failure the page should hear of (onError); transport drops are not, they are retried. */
  readonly report: (error: PedelecError) => void
}

/** Failures after which the outcome may still be taken: the link dropped, or the claim was not back yet. */
const RETRIED = [
  "EXTENSION_DISCONNECTED",
  "NATIVE_HOST_UNAVAILABLE",
  "NATIVE_CONNECTION_CLOSED",
  "CORE_RUNTIME_UNAVAILABLE",
  "REQUEST_TIMEOUT",
  "TOOL_NOT_CLAIMED"
] as const

const cancelledHere = (tool: string, reason: string) =>
  PedelecError.fromCode("TOOL_CANCELLED", "sdk", { details: { tool, reason } })

export class ToolCalls {
  readonly #running = new Map<string, AbortController>()
  readonly #seen = new Set<string>()
  readonly #unsent = new Map<string, ToolOutcome>()
  /** Calls run here for WebMCP, for their ids. */
  #here = 0
  readonly #options: ToolCallsOptions

  constructor(options: ToolCallsOptions) {
    this.#options = options
  }

  /** Runs an offered call, once per id; an offer of one whose outcome never reached Core sends that outcome. */
  async run(event: typeof ToolCallEvent.Type, base: EventContext): Promise<void> {
    const { toolCallId } = event
    const unsent = this.#unsent.get(toolCallId)
    if (unsent !== undefined) return this.#submit(toolCallId, unsent)
    if (this.#seen.has(toolCallId)) return
    this.#remember(toolCallId)
    const controller = new AbortController()
    this.#running.set(toolCallId, controller)
    const outcome = await this.#outcome(event.args as JsonObject, this.#context(event, base, controller.signal))
    this.#running.delete(toolCallId)
    // Core already answered the agent (timeout, cancel, end) and would refuse a late result.
    if (controller.signal.aborted) return
    return this.#submit(toolCallId, outcome)
  }

  /**
   * A call from outside Core (WebMCP's browser agent): the same handler, its outcome returned to the caller rather
   * than submitted. `signal` is the caller's; there is no turn, and no timeout of Core's to report to.
   */
  runHere(tool: string, args: JsonObject, signal: AbortSignal, base: EventContext): Promise<ToolOutcome> {
    const toolCallId = `webmcp-${++this.#here}`
    const idle = () => undefined
    const ids = { turnId: "", toolCallId, toolRequestId: toolCallId, tool }
    return this.#outcome(args, { ...base, ...ids, signal, progress: idle, awaitingUser: idle })
  }

  /** The handler's outcome, by the session's handler priority; none at all is TOOL_HANDLER_NOT_FOUND. */
  #outcome(args: JsonObject, ctx: ToolCallContext): Promise<ToolOutcome> {
    const handler = this.#options.handlerFor(ctx.tool)
    if (handler === undefined) return Promise.resolve(handlerNotFound(ctx.tool))
    return runHandler(ctx.tool, (c) => handler(args, c), ctx)
  }

  /**
   * Core cancelled the call, or answered it from another tab: a handler still running here must stop. The error is
   * made only then: every call's own result comes by here too, and an Error's stack trace is the dearest part of it.
   */
  abort(toolCallId: string, error: () => PedelecError): void {
    this.#running.get(toolCallId)?.abort(error())
    this.#unsent.delete(toolCallId)
  }

  /** The claim moved to another tab: it runs the calls now, from the start if need be. */
  release(tool: string): void {
    for (const [toolCallId, controller] of this.#running) {
      this.#seen.delete(toolCallId)
      controller.abort(cancelledHere(tool, "another tab claimed the tools"))
    }
    this.#unsent.clear()
  }

  /** The session ended: every handler stops, nothing is sent. */
  end(error: PedelecError): void {
    for (const controller of this.#running.values()) controller.abort(error)
    this.#running.clear()
    this.#unsent.clear()
  }

  async #submit(toolCallId: string, outcome: ToolOutcome): Promise<void> {
    const { link, sessionId } = this.#options
    try {
      await link.request("tool.submit_result", { sessionId, toolCallId: toolCallId as ToolCallId, outcome })
      this.#unsent.delete(toolCallId)
    } catch (error) {
      if (!(error instanceof PedelecError)) throw error
      if (RETRIED.some((code) => hasCode(error, code))) this.#unsent.set(toolCallId, outcome)
      else {
        this.#unsent.delete(toolCallId)
        this.#options.report(error)
      }
    }
  }

  #remember(toolCallId: string): void {
    this.#seen.add(toolCallId)
    if (this.#seen.size <= REMEMBERED_CALLS) return
    const oldest = this.#seen.values().next().value!
    this.#seen.delete(oldest)
    this.#unsent.delete(oldest)
  }

  #context(event: typeof ToolCallEvent.Type, base: EventContext, signal: AbortSignal): ToolCallContext {
    const { toolCallId, tool } = event
    const { link, sessionId } = this.#options
    const ids = { sessionId, toolCallId: toolCallId as ToolCallId }
    // Best effort, like progress: a failed send leaves the call with its normal timeout, which is all it can do.
    const send = (method: "tool.progress" | "tool.awaiting_user", params: typeof ids & { message?: string }) =>
      void link.request(method, params).catch(() => undefined)
    return {
      ...base,
      turnId: event.turnId,
      toolCallId,
      toolRequestId: toolCallId,
      tool,
      signal,
      progress: (message) =>
        send("tool.progress", message === undefined ? ids : { ...ids, message: message.slice(0, 1024) }),
      awaitingUser: () => send("tool.awaiting_user", ids)
    }
  }
}
