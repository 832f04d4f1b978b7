/**
 * Session — the value of one live session and the only place its observable state changes: the record (what is
 * persisted), the status (a `status_changed` event with every change: published here, or handed to a caller that
 * publishes it with the event it goes with), the running turn, and whether a tool call is with the page
 * (`toolActivity`, which the status and the stall clock follow). One value per live session, owned by the scope
 * Sessions' RcMap gives it. Deciding what happens when (turns, ends, leases) is Sessions'; queueing calls is
 * ToolRouter's; it does not persist anything itself.
 */
import type { SessionCapability, SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { SessionInfo, SessionStatus, TurnKind } from "@pedelec/contracts/Session"
import type { ProviderAdapter, SessionProcess } from "@pedelec/providers/Provider"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as FiberHandle from "effect/FiberHandle"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { type EventBody, SessionEvents } from "./SessionEvents.ts"
import type { SessionRecord } from "./SessionStore.ts"
import type { SessionTools } from "./ToolRouter.ts"

export type EndReason = "requested" | "disconnected" | "revoked" | "shutdown" | "failed"

/** Whether a tool call is with the page, and since when (Clock): the stall clock runs only while none is. */
export interface ToolActivity {
  readonly pending: boolean
  readonly changedAt: number
}

export interface ActiveTurn {
  readonly turnId: TurnId
  readonly kind: TurnKind
}

export interface Session {
  readonly sessionId: SessionId
  readonly capability: SessionCapability
  readonly adapter: ProviderAdapter
  readonly fullAccess: boolean
  /** The canonical workspace path; it never changes for the life of the session. */
  readonly workspace: string
  readonly record: Ref.Ref<SessionRecord>
  readonly status: SubscriptionRef.SubscriptionRef<SessionStatus>
  readonly turn: Ref.Ref<ActiveTurn | undefined>
  /** The running turn's fiber: clearing it cancels the turn; the session's scope clears it on end. */
  readonly turnFiber: FiberHandle.FiberHandle<void>
  readonly toolActivity: SubscriptionRef.SubscriptionRef<ToolActivity>
  readonly tools: SessionTools
  /** The provider's session process, started by the first turn that needs it (a failed start is retried). */
  readonly process: Ref.Ref<SessionProcess | undefined>
  /** Owns the provider's processes: closing it kills them. */
  readonly processScope: Scope.Closeable
  /** The session's own scope (its RcMap entry): closing it ends the session. */
  readonly scope: Scope.Closeable
  /** Set once the session has begun to end, with why. */
  readonly ending: Ref.Ref<EndReason | undefined>
}

export const isEnding = (session: Session) => Effect.map(Ref.get(session.ending), (reason) => reason !== undefined)

/** Moves the status; the `status_changed` event that says so, for the caller to publish (undefined: no change). */
export const moveStatus = Effect.fnUntraced(function* (session: Session, status: SessionStatus, turn?: ActiveTurn) {
  const previous = yield* SubscriptionRef.getAndSet(session.status, status)
  if (previous === status) return undefined
  return {
    type: "status_changed",
    status,
    previous,
    ...(turn ? { turnId: turn.turnId, turnKind: turn.kind } : {})
  } satisfies EventBody
})

/** Publishes a move's `status_changed`, if it changed anything (ordered with every other event of the session). */
const sayMoved = (session: Session) => (changed: EventBody | undefined) =>
  changed === undefined
    ? Effect.void
    : Effect.flatMap(SessionEvents, (events) => Effect.ignore(events.publish(session.sessionId, changed)))

/** Moves the status and says so with a `status_changed` event. */
export const setStatus = (session: Session, status: SessionStatus, turn?: ActiveTurn) =>
  Effect.flatMap(moveStatus(session, status, turn), sayMoved(session))

/**
 * A call went to the page (true) or none is with it any more (false): the stall clock restarts, and a running
 * turn's status follows (`waiting_tool_result` / `running`); the `status_changed` that says so is returned for the
 * caller to publish with the `tool_call` event (before it) or the call's end (after it).
 */
export const moveToolPending = Effect.fnUntraced(function* (session: Session, pending: boolean) {
  const changedAt = yield* Clock.currentTimeMillis
  yield* SubscriptionRef.set(session.toolActivity, { pending, changedAt })
  const turn = yield* Ref.get(session.turn)
  const status = yield* SubscriptionRef.get(session.status)
  if (turn === undefined || status === "ended") return undefined
  return yield* moveStatus(session, pending ? "waiting_tool_result" : "running")
})

export const updateRecord = (session: Session, f: (record: SessionRecord) => SessionRecord) =>
  Ref.updateAndGet(session.record, f)

export const info = Effect.fnUntraced(function* (session: Session) {
  const events = yield* SessionEvents
  const record = yield* Ref.get(session.record)
  const lastSeq = yield* events.lastSeq(session.sessionId).pipe(Effect.orElseSucceed(() => record.lastSeq))
  return {
    sessionId: record.sessionId,
    origin: record.origin,
    provider: record.provider,
    model: record.model,
    effortLevel: record.effortLevel,
    workspace: record.workspace,
    status: yield* SubscriptionRef.get(session.status),
    autoEndOnDisconnect: record.autoEndOnDisconnect,
    lastSeq,
    createdAt: record.createdAt
  } satisfies SessionInfo
})
