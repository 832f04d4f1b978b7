/**
 * Sessions/Live — the live sessions of this Core: one RcMap entry per session, keyed by id, whose scope is the
 * session's (Sessions/Open builds it; closing it runs Sessions/End). Holding an entry holds the session; an
 * `autoEndOnDisconnect` session nobody holds ends after the lease (the entry's idle time-to-live), others stay until
 * ended. A session not live is revived from its record on first hold; an ending one never is. Why and when a session
 * ends is Sessions'; this module only holds, revives and closes.
 */
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as RcMap from "effect/RcMap"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { CoreConfig } from "../CoreConfig.ts"
import { CorePaths } from "../CorePaths.ts"
import { EventLog } from "../EventLog.ts"
import { NodeShim } from "../NodeShim.ts"
import { ProcessRecords } from "../ProcessRecords.ts"
import { ProviderChoice } from "../ProviderChoice.ts"
import { Providers } from "../Providers.ts"
import { type EndReason, isEnding, type Session } from "../Session.ts"
import { SessionEvents } from "../SessionEvents.ts"
import { type SessionRecord, SessionStore } from "../SessionStore.ts"
import { SettingsStore } from "../SettingsStore.ts"
import { ToolRouter } from "../ToolRouter.ts"
import { TurnRunner } from "../TurnRunner.ts"
import { Workspaces } from "../Workspaces.ts"
import { discardRecord, endSession } from "./End.ts"
import { type LiveIndex, openSession } from "./Open.ts"

export const sessionError = (code: Parameters<typeof PedelecError.fromCode>[0], sessionId: SessionId) =>
  PedelecError.fromCode(code, "core", { details: { sessionId } })

/** What opening, running and ending a session use (and nothing else of the layer's context: not its Scope). */
export const sessionDeps = [
  CoreConfig,
  CorePaths,
  EventLog,
  FileSystem.FileSystem,
  NodeShim,
  ProcessRecords,
  ProviderChoice,
  Providers,
  SessionEvents,
  SessionStore,
  SettingsStore,
  ToolRouter,
  TurnRunner,
  Workspaces
] as const
export type SessionDeps =
  | CoreConfig
  | CorePaths
  | EventLog
  | FileSystem.FileSystem
  | NodeShim
  | ProcessRecords
  | ProviderChoice
  | Providers
  | SessionEvents
  | SessionStore
  | SettingsStore
  | ToolRouter
  | TurnRunner
  | Workspaces

/** Provides what opening and ending need (the Sessions layer's services, without its Scope). */
type Provide = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, SessionDeps>>

export const makeLiveSessions = Effect.fnUntraced(function* (provide: Provide) {
  const config = yield* CoreConfig
  const store = yield* SessionStore
  const index: LiveIndex = { bySession: new Map(), byCapability: new Map() }
  /** Each session's lease, known from its record before it is first held: only autoEndOnDisconnect ones expire. */
  const leases = new Map<SessionId, Duration.Duration>()
  const noteLease = (record: SessionRecord) =>
    leases.set(record.sessionId, record.autoEndOnDisconnect ? Duration.millis(config.leaseMs) : Duration.infinity)

  const loadRecord = Effect.fnUntraced(function* (sessionId: SessionId) {
    const record = yield* store.load(sessionId)
    if (record.state === "ended") return yield* Effect.fail(sessionError("SESSION_ENDED", sessionId))
    return record
  })

  const end = (session: Session) =>
    provide(endSession(session, index).pipe(Effect.ensuring(Effect.sync(() => leases.delete(session.sessionId)))))

  const map = yield* RcMap.make({
    lookup: (sessionId: SessionId) =>
      provide(Effect.flatMap(loadRecord(sessionId), (record) => openSession(record, index, end))),
    idleTimeToLive: (sessionId: SessionId) => leases.get(sessionId) ?? Duration.infinity
  })

  /** Holds the session in the caller's scope (reviving it from its record if it is not live). */
  const hold = Effect.fnUntraced(function* (origin: Origin, sessionId: SessionId) {
    const running = index.bySession.get(sessionId)
    // An ending session stays indexed until its record says ended: nothing may revive it in between.
    if (running && (yield* isEnding(running))) return yield* Effect.fail(sessionError("SESSION_ENDED", sessionId))
    if (!running) noteLease(yield* loadRecord(sessionId))
    const session = yield* RcMap.get(map, sessionId).pipe(Effect.tapError(() => RcMap.invalidate(map, sessionId)))
    if ((yield* Ref.get(session.record)).origin !== origin) {
      return yield* Effect.fail(sessionError("SESSION_ACCESS_DENIED", sessionId))
    }
    if (yield* isEnding(session)) return yield* Effect.fail(sessionError("SESSION_ENDED", sessionId))
    return session
  })

  /**
   * Makes a new record live, held only while it is set up: a session nobody ever subscribes to is as abandoned as
   * one whose subscribers all left, so its lease starts now. One that cannot open is discarded.
   */
  const adopt = Effect.fnUntraced(function* (record: SessionRecord) {
    noteLease(record)
    return yield* Effect.scoped(RcMap.get(map, record.sessionId)).pipe(
      Effect.tapError(() =>
        RcMap.invalidate(map, record.sessionId).pipe(Effect.andThen(provide(discardRecord(record))))
      )
    )
  })

  /** Ends a live session now, whoever holds it: its scope's closing runs the end (Sessions/End). */
  const endNow = Effect.fnUntraced(function* (session: Session, reason: EndReason) {
    const first = yield* Ref.modify(session.ending, (current) =>
      current === undefined ? [true, reason] : [false, current]
    )
    if (!first) return
    yield* RcMap.invalidate(map, session.sessionId)
    yield* Scope.close(session.scope, Exit.void)
  })

  return { index, hold, adopt, endNow }
})
