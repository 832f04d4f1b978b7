/**
 * What every session callback receives beside its value. Core's events carry Core's `seq`; events the SDK makes
 * itself (a lost connection, a local end) carry the last Core `seq` the session saw.
 */
import type { SessionStatus } from "@pedelec/contracts/Session"

export interface EventContext {
  readonly sessionId: string
  readonly turnId: string | undefined
  readonly provider: string
  readonly model: string | null
  readonly source: "core" | "sdk"
  readonly seq: number
  /** `Date.now()` when the page received (or the SDK made) the event. */
  readonly receivedAt: number
}

export type PedelecSessionStatus = SessionStatus

export interface TurnResult {
  readonly turnId: string
  readonly reason: "completed" | "cancelled"
  /** The turn's final assistant message; empty when there was none. */
  readonly text: string
}

export interface TurnCompletion {
  readonly turnId: string
  readonly turnKind: "user" | "prepare"
  readonly reason: "completed" | "cancelled" | "failed"
  readonly text: string
}
