/**
 * What every session callback receives beside its value. Core's events carry Core's `seq`; events the SDK makes
 * itself (a lost connection, a local end) carry the last Core `seq` the session saw.
 */
import type { SessionStatus } from "@pedelec/contracts/Session"

/** What every session callback receives beside its value. */
export interface EventContext {
  /** The session the event belongs to (the `pedelec_thread_id` the agent sees). */
  readonly sessionId: string
  /** The turn the event belongs to, minted by Core; `undefined` for events outside a turn. */
  readonly turnId: string | undefined
  /** The provider code of the session (`codex`, `claude`, …). */
  readonly provider: string
  /** The session's model, or `null` for the provider's default. */
  readonly model: string | null
  /** `core` for Core's events; `sdk` for those the SDK makes itself (a lost connection, a local end). */
  readonly source: "core" | "sdk"
  /** Core's per-session sequence number (for `sdk` events: the last one the session saw). */
  readonly seq: number
  /** `Date.now()` when the page received (or the SDK made) the event. */
  readonly receivedAt: number
}

/**
 * `idle → running → (waiting_tool_result ↔ running) → idle`; `ended` from any state; `error` only for a
 * session that cannot continue (a failed turn leaves it `idle`).
 */
export type PedelecSessionStatus = SessionStatus

/** What `sendText` resolves with; a failed turn rejects with its error instead. */
export interface TurnResult {
  /** The turn's id, as every tab observing the session sees it. */
  readonly turnId: string
  /** `cancelled` when `cancel()` (or a `sendText` timeout) stopped the turn. */
  readonly reason: "completed" | "cancelled"
  /** The turn's final assistant message; empty when there was none. */
  readonly text: string
}

/** What `onTurnCompleted` receives: every turn of the session ends with exactly one, whichever tab started it. */
export interface TurnCompletion {
  /** The turn's id. */
  readonly turnId: string
  /** `prepare` for the warm-up turn of `prepare()`, `user` for `sendText`. */
  readonly turnKind: "user" | "prepare"
  /** How it ended; a `failed` turn's error came just before, through `onError`. */
  readonly reason: "completed" | "cancelled" | "failed"
  /** The turn's final assistant message; empty when there was none. */
  readonly text: string
}
