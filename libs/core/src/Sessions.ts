/**
 * Sessions — the life of every session: creation, resume after a restart, turns (send, prepare, cancel),
 * subscriptions, and the end that leaves no process and no managed workspace behind. Each live session is one
 * Session value owned by one entry of an RcMap keyed by session id: its scope owns the provider's processes, the
 * tool queue and the timers, and the disconnect lease is the entry's idle time-to-live (subscribers hold the entry).
 * Ownership is by origin, decided here alone. It does not parse provider output (TurnRunner), route tool calls
 * (ToolRouter) or store files (the stores); the steps of opening, turns and ending are in `Sessions/`.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionCapability, SessionId, TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput, SessionInfo } from "@pedelec/contracts/Session"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as RcMap from "effect/RcMap"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { EventLog } from "./EventLog.ts"
import { ProviderChoice } from "./ProviderChoice.ts"
import { Providers } from "./Providers.ts"
import { type EndReason, info, isEnding, type Session } from "./Session.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { type SessionRecord, SessionStore } from "./SessionStore.ts"
import { discardRecord, endSession, recoverAtStartup } from "./Sessions/End.ts"
import { type LiveIndex, newRecord, openSession } from "./Sessions/Open.ts"
import { cancelTurn, startTurn } from "./Sessions/Turns.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { ToolRouter } from "./ToolRouter.ts"
import { TurnRunner } from "./TurnRunner.ts"
import { Workspaces } from "./Workspaces.ts"

/** What opening, running and ending a session use (and nothing else of the layer's context: not its Scope). */
const sessionDeps = [
  CoreConfig,
  CorePaths,
  EventLog,
  FileSystem.FileSystem,
  ProviderChoice,
  Providers,
  SessionEvents,
  SessionStore,
  SettingsStore,
  ToolRouter,
  TurnRunner,
  Workspaces
] as const
type SessionDeps =
  | CoreConfig
  | CorePaths
  | EventLog
  | FileSystem.FileSystem
  | ProviderChoice
  | Providers
  | SessionEvents
  | SessionStore
  | SettingsStore
  | ToolRouter
  | TurnRunner
  | Workspaces

const error = (code: Parameters<typeof PedelecError.fromCode>[0], sessionId: SessionId) =>
  PedelecError.fromCode(code, "core", { details: { sessionId } })

export class Sessions extends Context.Service<
  Sessions,
  {
    readonly create: (origin: Origin, input: CreateSessionInput) => Effect.Effect<SessionInfo, PedelecError>
    readonly resume: (origin: Origin, sessionId: SessionId) => Effect.Effect<SessionInfo, PedelecError>
    /** Events after `afterSeq`; holding the stream holds the lease (and the tool claim when asked). */
    readonly subscribe: (
      origin: Origin,
      sessionId: SessionId,
      afterSeq: number,
      claimTools: boolean
    ) => Stream.Stream<SessionEvent, PedelecError>
    readonly sendText: (
      origin: Origin,
      sessionId: SessionId,
      text: string
    ) => Effect.Effect<{ turnId: TurnId }, PedelecError>
    readonly prepare: (origin: Origin, sessionId: SessionId) => Effect.Effect<{ turnId: TurnId }, PedelecError>
    readonly cancel: (origin: Origin, sessionId: SessionId) => Effect.Effect<{ cancelled: boolean }, PedelecError>
    readonly end: (origin: Origin, sessionId: SessionId) => Effect.Effect<void, PedelecError>
    readonly list: (origin: Origin | undefined) => Effect.Effect<ReadonlyArray<SessionInfo>>
    readonly revokeOrigin: (origin: Origin) => Effect.Effect<{ ended: number }>
    /** The live session a capability opens, if any: the agent role's only way in. */
    readonly byCapability: (capability: string) => SessionId | undefined
    /** The live session of an agent whose capability was checked (CoreAuth); `SESSION_ENDED` once it ends. */
    readonly live: (sessionId: SessionId) => Effect.Effect<Session, PedelecError>
    /** Checks that a live session belongs to the origin (for the asset and tool methods of other services). */
    readonly access: (origin: Origin, sessionId: SessionId) => Effect.Effect<Session, PedelecError>
  }
>()("pedelec/core/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.suspend(() => make)
  )
}

const make = Effect.gen(function* () {
  const context = Context.pick(...sessionDeps)(yield* Effect.context<SessionDeps>())
  const withDeps = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, SessionDeps>> =>
    Effect.provide(effect, context)
  const config = yield* CoreConfig
  const store = yield* SessionStore
  const events = yield* SessionEvents
  const tools = yield* ToolRouter
  const index: LiveIndex = { bySession: new Map(), byCapability: new Map() }
  /** Each session's lease, known from its record before it is first held: only autoEndOnDisconnect ones expire. */
  const leases = new Map<SessionId, Duration.Duration>()
  const leaseOf = (record: SessionRecord) =>
    record.autoEndOnDisconnect ? Duration.millis(config.leaseMs) : Duration.infinity

  const loadRecord = Effect.fnUntraced(function* (sessionId: SessionId) {
    const record = yield* store.load(sessionId)
    if (record.state === "ended") return yield* Effect.fail(error("SESSION_ENDED", sessionId))
    return record
  })

  // Sessions a previous Core left active: their orphaned processes are reaped before anything else runs.
  yield* withDeps(recoverAtStartup)

  const live = yield* RcMap.make({
    lookup: (sessionId: SessionId) =>
      loadRecord(sessionId).pipe(
        Effect.flatMap((record) =>
          openSession(record, index, (session) =>
            endSession(session, index).pipe(Effect.ensuring(Effect.sync(() => leases.delete(sessionId))), withDeps)
          )
        ),
        withDeps
      ),
    idleTimeToLive: (sessionId: SessionId) => leases.get(sessionId) ?? Duration.infinity
  })

  /** Holds the session in the caller's scope (reviving it from its record if it is not live). */
  const hold = Effect.fnUntraced(function* (origin: Origin, sessionId: SessionId) {
    const running = index.bySession.get(sessionId)
    // An ending session stays indexed until its record says ended: nothing may revive it in between.
    if (running && (yield* isEnding(running))) return yield* Effect.fail(error("SESSION_ENDED", sessionId))
    if (!running) leases.set(sessionId, leaseOf(yield* loadRecord(sessionId)))
    const session = yield* RcMap.get(live, sessionId).pipe(Effect.tapError(() => RcMap.invalidate(live, sessionId)))
    if ((yield* Ref.get(session.record)).origin !== origin) {
      return yield* Effect.fail(error("SESSION_ACCESS_DENIED", sessionId))
    }
    if (yield* isEnding(session)) return yield* Effect.fail(error("SESSION_ENDED", sessionId))
    return session
  })

  const access = (origin: Origin, sessionId: SessionId) => Effect.scoped(hold(origin, sessionId))

  /** Ends a live session now, whoever holds it: its scope's closing runs the end (Sessions/End). */
  const endNow = Effect.fnUntraced(function* (session: Session, reason: EndReason) {
    const first = yield* Ref.modify(session.ending, (current) =>
      current === undefined ? [true, reason] : [false, current]
    )
    if (!first) return
    yield* RcMap.invalidate(live, session.sessionId)
    yield* Scope.close(session.scope, Exit.void)
  })

  const create = Effect.fn("Sessions.create")(function* (origin: Origin, input: CreateSessionInput) {
    const record = yield* withDeps(newRecord(origin, input))
    leases.set(record.sessionId, leaseOf(record))
    // Held only while it is set up: a session nobody ever subscribes to is as abandoned as one whose
    // subscribers all left, so its lease starts now.
    const session = yield* Effect.scoped(RcMap.get(live, record.sessionId)).pipe(
      Effect.tapError(() =>
        RcMap.invalidate(live, record.sessionId).pipe(Effect.andThen(withDeps(discardRecord(record))))
      )
    )
    return yield* withDeps(info(session))
  })

  const end = Effect.fn("Sessions.end")(function* (origin: Origin, sessionId: SessionId) {
    const running = index.bySession.get(sessionId)
    if (running && (yield* isEnding(running))) return
    // Idempotent (SPEC §2): the owner ending a session that has already ended succeeds.
    if (running === undefined) {
      const record = yield* store.load(sessionId).pipe(Effect.option)
      if (record._tag === "Some" && record.value.state === "ended" && record.value.origin === origin) return
    }
    yield* endNow(yield* access(origin, sessionId), "requested")
  })

  const subscribe = (origin: Origin, sessionId: SessionId, afterSeq: number, claimTools: boolean) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const session = yield* hold(origin, sessionId)
        if (claimTools) yield* tools.claim(session)
        return events.subscribe(sessionId, afterSeq)
      })
    )

  const liveOf = (origin: Origin | undefined) =>
    Effect.filter([...index.bySession.values()], (session) =>
      Effect.map(
        Effect.zip(isEnding(session), Ref.get(session.record)),
        ([ending, record]) => !ending && (origin === undefined || record.origin === origin)
      )
    )

  const revokeOrigin = Effect.fn("Sessions.revokeOrigin")(function* (origin: Origin) {
    const owned = yield* liveOf(origin)
    yield* Effect.forEach(owned, (session) => endNow(session, "revoked"), { discard: true })
    return { ended: owned.length }
  })

  // On shutdown (SIGTERM) every live session ends and its processes die with it (before the RcMap closes).
  yield* Effect.addFinalizer(() =>
    Effect.forEach([...index.bySession.values()], (session) => endNow(session, "shutdown"), {
      concurrency: "unbounded",
      discard: true
    })
  )

  return Sessions.of({
    create,
    resume: (origin, sessionId) => Effect.flatMap(access(origin, sessionId), (s) => withDeps(info(s))),
    subscribe,
    sendText: (origin, sessionId, text) =>
      Effect.flatMap(access(origin, sessionId), (s) => withDeps(startTurn(s, "user", text))),
    prepare: (origin, sessionId) =>
      Effect.flatMap(access(origin, sessionId), (s) => withDeps(startTurn(s, "prepare", ""))),
    cancel: (origin, sessionId) => Effect.flatMap(access(origin, sessionId), (s) => withDeps(cancelTurn(s))),
    end,
    list: (origin) => Effect.flatMap(liveOf(origin), (owned) => Effect.forEach(owned, (s) => withDeps(info(s)))),
    revokeOrigin,
    byCapability: (capability) => index.byCapability.get(capability as SessionCapability),
    live: (sessionId) =>
      Effect.gen(function* () {
        const session = index.bySession.get(sessionId)
        if (session === undefined || (yield* isEnding(session))) {
          return yield* Effect.fail(error("SESSION_ENDED", sessionId))
        }
        return session
      }),
    access
  })
})
