/**
 * Sessions/Open — how a live session comes to be: a new record from a request (provider, model and effort chosen
 * from the request and the settings, workspace prepared, tools checked, record written), and the live Session value
 * built from a record in the scope Sessions' RcMap gives it (after a create, a Core restart, or a lease that let it
 * go), with the end that scope's closing runs, and its process when the adapter starts one with the session. A turn
 * a crashed Core left open is completed here, as failed.
 * Turns are Sessions/Turns', the end's steps Sessions/End's.
 */
import type { Origin, TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput, SessionStatus, TurnKind } from "@pedelec/contracts/Session"
import type { SessionProcess } from "@pedelec/providers/Provider"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { EventLog } from "../EventLog.ts"
import { mintCapability, mintSessionId } from "../Mint.ts"
import { ProviderChoice } from "../ProviderChoice.ts"
import { Providers } from "../Providers.ts"
import type { ActiveTurn, EndReason, Session } from "../Session.ts"
import { SessionEvents } from "../SessionEvents.ts"
import { type SessionRecord, SessionStore } from "../SessionStore.ts"
import { SettingsStore } from "../SettingsStore.ts"
import { compileTools } from "../ToolCatalog.ts"
import { ToolRouter } from "../ToolRouter.ts"
import { Workspaces } from "../Workspaces.ts"
import { processOf } from "./Turns.ts"

/** Where live sessions are found by id and by capability; kept by the sessions themselves as they open and end. */
export interface LiveIndex {
  readonly bySession: Map<Session["sessionId"], Session>
  readonly byCapability: Map<Session["capability"], Session["sessionId"]>
}

/** A new session's record, saved, with its workspace ready and its tools checked. */
export const newRecord = Effect.fnUntraced(function* (origin: Origin, input: CreateSessionInput) {
  const chosen = yield* (yield* ProviderChoice).resolve(input)
  const compiled = compileTools(input.skills)
  if (Result.isFailure(compiled)) return yield* Effect.fail(compiled.failure)
  const workspaces = yield* Workspaces
  const sessionId = mintSessionId()
  const explicit = input.workspace?.path
  // prepareExplicit runs every check of checkExplicit first, and returns the canonical path.
  const workspace = explicit ? yield* workspaces.prepareExplicit(explicit) : yield* workspaces.createManaged(sessionId)
  const now = yield* Clock.currentTimeMillis
  const record: SessionRecord = {
    sessionId,
    origin,
    provider: chosen.adapter.code,
    model: chosen.model ?? null,
    effortLevel: chosen.effortLevel,
    effortProfile: chosen.profile,
    workspace,
    autoEndOnDisconnect: input.autoEndOnDisconnect ?? true,
    ...(input.skills ? { skills: input.skills } : {}),
    createdAt: now,
    lastActiveAt: now,
    state: "active",
    promptInjected: false,
    lastSeq: 0,
    processes: []
  }
  yield* (yield* SessionStore)
    .save(record)
    .pipe(Effect.tapError(() => (workspace.managed ? workspaces.removeManaged(sessionId) : Effect.void)))
  return record
})

/**
 * The live value of the session `record` names, in the current scope: closing that scope (the RcMap entry, or
 * `session.scope` itself) runs `end`. Everything the session owns is acquired before `end` is registered, so `end`
 * runs first and decides the order.
 */
export const openSession = Effect.fnUntraced(function* (
  record: SessionRecord,
  index: LiveIndex,
  end: (session: Session) => Effect.Effect<void>
) {
  const scope = yield* Scope.fork(yield* Effect.scope)
  const session = yield* makeSession(record, scope).pipe(Scope.provide(scope))
  index.bySession.set(session.sessionId, session)
  index.byCapability.set(session.capability, session.sessionId)
  // Once it can be looked up: an onlooker that hears of it may ask for its info at once.
  yield* (yield* SessionEvents).announce(session.sessionId)
  yield* Scope.addFinalizer(
    scope,
    Ref.update(session.ending, (reason): EndReason => reason ?? "disconnected").pipe(Effect.andThen(end(session)))
  )
  if (record.activeTurn) yield* completeInterruptedTurn(session, record, record.activeTurn)
  // Ignored: a process that cannot start fails the first turn, which tries again, with its code.
  if (session.adapter.startsWithSession === true) yield* processOf(session).pipe(Effect.ignore)
  return session
})

const makeSession = Effect.fnUntraced(function* (record: SessionRecord, scope: Scope.Closeable) {
  const adapter = yield* (yield* Providers).adapter(record.provider)
  const settings = yield* (yield* SettingsStore).get
  const events = yield* SessionEvents
  const tools = yield* (yield* ToolRouter).open(record.skills, record.workspace.path)
  // The log may hold events the record's lastSeq missed (a crash between the two writes).
  const logged = yield* (yield* EventLog).readAfter(record.sessionId, record.lastSeq)
  yield* events.open(record.sessionId, logged.at(-1)?.seq ?? record.lastSeq)
  const now = yield* Clock.currentTimeMillis
  return {
    sessionId: record.sessionId,
    capability: mintCapability(),
    adapter,
    fullAccess: settings.fullAccessOrigins.includes(record.origin),
    workspace: record.workspace.path,
    record: yield* Ref.make(record),
    status: yield* SubscriptionRef.make<SessionStatus>("idle"),
    turn: yield* Ref.make<ActiveTurn | undefined>(undefined),
    turnFiber: yield* FiberHandle.make<void>(),
    toolActivity: yield* SubscriptionRef.make({ pending: false, changedAt: now }),
    tools,
    process: yield* Ref.make<SessionProcess | undefined>(undefined),
    processScope: yield* Scope.fork(scope),
    scope,
    ending: yield* Ref.make<EndReason | undefined>(undefined)
  } satisfies Session
})

/**
 * Every turn ends with one completion, even one whose Core died under it: failed, idle, then the completion (the
 * order a finished turn has). A Core killed after logging the completion but before the record said so has nothing
 * to add: the log (past the record's lastSeq) says whether it was.
 */
const completeInterruptedTurn = Effect.fnUntraced(function* (
  session: Session,
  record: SessionRecord,
  turn: { readonly turnId: TurnId; readonly kind: TurnKind }
) {
  const events = yield* SessionEvents
  const sessionId = session.sessionId
  const logged = yield* (yield* EventLog).readAfter(sessionId, record.lastSeq)
  if (!logged.some((event) => event.type === "turn_completed" && event.turnId === turn.turnId)) {
    const error = PedelecError.fromCode("INTERNAL_ERROR", "core", {
      details: { component: "core", reason: "the Pedelec Core stopped while this turn ran" }
    }).toWire()
    yield* events.publish(sessionId, { type: "error", turnId: turn.turnId, error })
    yield* events.publish(sessionId, { type: "status_changed", status: "idle", previous: "running" })
    yield* events.publish(sessionId, {
      type: "turn_completed",
      turnId: turn.turnId,
      turnKind: turn.kind,
      reason: "failed",
      text: "",
      error
    })
  }
  const lastSeq = yield* events.lastSeq(sessionId)
  const { activeTurn: _, ...settled } = yield* Ref.get(session.record)
  yield* Ref.set(session.record, { ...settled, lastSeq })
  yield* (yield* SessionStore).save({ ...settled, lastSeq })
})
