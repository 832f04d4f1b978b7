/**
 * Session events: everything Core tells observers of a session, each with the session's own `seq` (gap-free,
 * starting at 1), so a reconnecting observer can ask for exactly what it missed. Every turn ends with exactly one
 * `turn_completed`.
 */
import * as Schema from "effect/Schema"
import { SessionId, ToolCallId, TurnId } from "./Ids.ts"
import { PedelecErrorWire } from "./PedelecError.ts"
import { SessionStatus, TurnKind, TurnReason } from "./Session.ts"
import { ToolName, ToolOutcome, ToolTimeoutMs } from "./Tool.ts"

export const Seq = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
export type Seq = typeof Seq.Type

/** Milliseconds since the epoch, as Core's clock read them. */
const At = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const event = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), sessionId: SessionId, seq: Seq, at: At, ...fields })

/** A complete assistant message. */
export const ChatEvent = event("chat", { turnId: TurnId, text: Schema.String })

/** Streamed text; providers that do not stream send one delta per message, so a UI may use deltas alone. */
export const ChatDeltaEvent = event("chat_delta", { turnId: TurnId, delta: Schema.String })

export const StatusChangedEvent = event("status_changed", {
  status: SessionStatus,
  previous: SessionStatus,
  turnId: Schema.optionalKey(TurnId),
  turnKind: Schema.optionalKey(TurnKind)
})

/**
 * Who claimed a session's tools: a token the claiming page chose (Core mints one for a page that gave none). Only
 * the subscription of the newest claim may answer; the token only tells each tab whether a call is its own.
 */
export const Claimant = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{8,64}$/))
export type Claimant = typeof Claimant.Type

/**
 * A call for the page; offered again to the claiming tab after a reconnect, and to a tab that claims the tools
 * anew, until it is answered. `claimant` is the claim it is offered to: only that tab runs its handler, and a tab
 * running it that sees it offered to another has lost the claim.
 */
export const ToolCallEvent = event("tool_call", {
  claimant: Schema.optionalKey(Claimant),
  turnId: TurnId,
  toolCallId: ToolCallId,
  tool: ToolName,
  args: Schema.Json,
  timeoutMs: ToolTimeoutMs
})

/** The page's handler must stop: timeout, cancel, end, or the agent's caller went away. */
export const ToolCallCancelledEvent = event("tool_call_cancelled", {
  turnId: TurnId,
  toolCallId: ToolCallId,
  reason: Schema.Literals(["TOOL_TIMEOUT", "TOOL_CANCELLED", "TOOL_OWNER_GONE", "SESSION_ENDED"])
})

export const ToolResultEvent = event("tool_result", {
  turnId: TurnId,
  toolCallId: ToolCallId,
  tool: ToolName,
  outcome: ToolOutcome
})

export const TurnCompletedEvent = event("turn_completed", {
  turnId: TurnId,
  turnKind: TurnKind,
  reason: TurnReason,
  /** The final assistant message (empty when there was none). */
  text: Schema.String,
  /** Present exactly when `reason` is `failed`; the same error was emitted just before as an `error` event. */
  error: Schema.optionalKey(PedelecErrorWire)
})

export const ErrorEvent = event("error", { turnId: Schema.optionalKey(TurnId), error: PedelecErrorWire })

export const EndedEvent = event("ended", {
  reason: Schema.Literals(["requested", "disconnected", "revoked", "shutdown", "failed"])
})

export const SessionEvent = Schema.Union([
  ChatEvent,
  ChatDeltaEvent,
  StatusChangedEvent,
  ToolCallEvent,
  ToolCallCancelledEvent,
  ToolResultEvent,
  TurnCompletedEvent,
  ErrorEvent,
  EndedEvent
])
export type SessionEvent = typeof SessionEvent.Type
export type SessionEventType = SessionEvent["type"]
