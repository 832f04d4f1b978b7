/**
 * ToolRouter/Queue — one session's call queue: the calls waiting for the page (FIFO, the head offered), offering
 * the head to the current claim (status first, then the `tool_call` event naming the claimant, then its timeout),
 * and ending a call exactly once (the event, the agent's answer, the next offer, the pending bit), and its timer
 * (restarted by progress, paused while the page waits on the user). Checking arguments, moving the claim and the
 * service's methods are ToolRouter's.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { ToolCallId, TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { TOOL_LIMITS, type ToolOutcome } from "@pedelec/contracts/Tool"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import type * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import { moveToolPending, type Session } from "../Session.ts"
import { type EventBody, SessionEvents } from "../SessionEvents.ts"
import type { Tool } from "../ToolCatalog.ts"

export interface Call {
  readonly toolCallId: ToolCallId
  readonly turnId: TurnId
  readonly tool: Tool
  readonly args: Schema.Json
  readonly reply: Deferred.Deferred<ToolOutcome, PedelecError>
  /** The call's timeout; progress restarts it. Lives as long as the agent's call. */
  readonly timer: FiberHandle.FiberHandle<void>
  offeredAt: number | undefined
  /** When the armed timer fires (Clock), so that waiting on the user never ends a call sooner than its timeout. */
  deadline: number
  /** The page said a person is answering: the timeout is paused until the call ends or the ceiling passes. */
  awaitingUser: boolean
  /** The agent's own name for the call (`pedelec-cli mcp`), so it can ask to hear when the call waits on the user. */
  readonly tag: string | undefined
}

/**
 * The one subscription that handles a session's calls: the newest to claim. `connection` is its Core IPC client
 * (one per page port, through its own native host), the only one whose answers count; `claimant` is the page's token,
 * which each `tool_call` names so that only that tab runs the handler.
 */
export interface Claim {
  readonly connection: number | undefined
  readonly claimant: string
}

/** One session's tools and call queue. Mutated one event at a time, only by this module and ToolRouter. */
export interface SessionTools {
  readonly catalog: ReadonlyMap<string, Tool>
  /** FIFO; the head is the call the page has (or will get). */
  readonly queue: Array<Call>
  /**
   * The claims whose subscriptions are open, newest last: the last one holds the tools; when it ends the one
   * before takes over. None open: the owner grace runs.
   */
  readonly claims: Array<Claim>
  /** Whose answers count: the newest open claim, or the last to hold one (it may still answer while none is open). */
  readonly answerer: Ref.Ref<Claim | undefined>
  /** Runs while calls wait and no page claims the tools: at the end of the grace they fail `TOOL_OWNER_GONE`. */
  readonly ownerTimer: FiberHandle.FiberHandle<void>
  /** The agent's waits for a tagged call to wait on the user, by tag (ToolRouter's waitsOnUser). */
  readonly userWaits: Map<string, Deferred.Deferred<void>>
}

/** Why a call ended without an answer: the reasons a `tool_call_cancelled` event may carry. */
export type CancelCode = Extract<SessionEvent, { type: "tool_call_cancelled" }>["reason"]

export type Ending =
  | { readonly kind: "answered"; readonly outcome: ToolOutcome }
  | { readonly kind: "cancelled"; readonly code: CancelCode; readonly error: PedelecError }

export const cancelled = (call: Call, code: CancelCode, details: Record<string, Schema.Json> = {}): Ending => ({
  kind: "cancelled",
  code,
  error: PedelecError.fromCode(code, "core", { details: { tool: call.tool.spec.name, ...details } })
})

/** The offered call `toolCallId` names, if it is still waiting for the page. */
export const offeredCall = (session: Session, toolCallId: ToolCallId) =>
  session.tools.queue.find((c) => c.toolCallId === toolCallId && c.offeredAt !== undefined)

/**
 * Gives the head of the queue to the page: the status, the event, the timer. The status comes first so that a
 * handler, which runs when the event arrives, already sees `waiting_tool_result`; both are published together, so
 * they leave Core in one chunk rather than one write each, a hop apart, on the call's way to the page.
 */
export const offer = Effect.fnUntraced(function* (session: Session, call: Call) {
  const firstOffer = call.offeredAt === undefined
  call.offeredAt ??= yield* Clock.currentTimeMillis
  const status = firstOffer ? yield* moveToolPending(session, true) : undefined
  const events = yield* SessionEvents
  const claim = session.tools.claims.at(-1)
  const toolCall = {
    type: "tool_call",
    ...(claim === undefined ? {} : { claimant: claim.claimant }),
    turnId: call.turnId,
    toolCallId: call.toolCallId,
    tool: call.tool.spec.name,
    args: call.args,
    timeoutMs: call.tool.spec.timeoutMs
  } satisfies EventBody
  yield* events.publishAll(session.sessionId, status === undefined ? [toolCall] : [status, toolCall]).pipe(Effect.orDie)
  if (firstOffer) yield* armTimeout(session, call, call.tool.spec.timeoutMs)
})

/** What TOOL_TIMEOUT says: the tool's timeout, or, for a call that waited on the user, the ceiling it reached. */
const timeoutDetails = (call: Call): Record<string, Schema.Json> =>
  call.awaitingUser
    ? { timeoutMs: TOOL_LIMITS.awaitingUserCeilingMs, waitedOnUser: true }
    : { timeoutMs: call.tool.spec.timeoutMs }

export const armTimeout = Effect.fnUntraced(function* (session: Session, call: Call, delayMs: number) {
  call.deadline = (yield* Clock.currentTimeMillis) + delayMs
  yield* FiberHandle.run(
    call.timer,
    // The error is made only when the timeout fires: a PedelecError captures a stack, which every call would pay.
    Effect.sleep(delayMs).pipe(
      Effect.andThen(Effect.suspend(() => finish(session, call, cancelled(call, "TOOL_TIMEOUT", timeoutDetails(call)))))
    )
  )
})

/** Ends one call exactly once: records it, answers the agent, and offers the next call. Never cut half way. */
export const finish = (session: Session, call: Call, ending: Ending): Effect.Effect<void, never, SessionEvents> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const queue = session.tools.queue
      const index = queue.indexOf(call)
      if (index === -1) return
      queue.splice(index, 1)
      const wasOffered = call.offeredAt !== undefined
      // Nothing else waits on the page: the turn runs again, said with the call's end in one chunk (one write to
      // each client, and the host's one write to the extension) rather than a hop behind it.
      const status = wasOffered && queue.length === 0 ? yield* moveToolPending(session, false) : undefined
      // The agent's answer is woken first, so its write leaves before the observers' (the agent waits on it; they
      // do not). Nothing runs in between: the events are published before this fiber yields.
      if (ending.kind === "answered") yield* Deferred.succeed(call.reply, ending.outcome)
      else yield* Deferred.fail(call.reply, ending.error)
      if (wasOffered) yield* publishEnding(session, call, ending, status)
      const next = queue[0]
      if (next && next.offeredAt === undefined) yield* offer(session, next)
    })
  )

const publishEnding = Effect.fnUntraced(function* (
  session: Session,
  call: Call,
  ending: Ending,
  status: EventBody | undefined
) {
  const events = yield* SessionEvents
  const common = { turnId: call.turnId, toolCallId: call.toolCallId }
  const ended: EventBody =
    ending.kind === "answered"
      ? { type: "tool_result", ...common, tool: call.tool.spec.name, outcome: ending.outcome }
      : { type: "tool_call_cancelled", ...common, reason: ending.code }
  yield* events.publishAll(session.sessionId, status === undefined ? [ended] : [ended, status]).pipe(Effect.ignore)
})
