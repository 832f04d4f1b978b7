/**
 * Sessions — the life of every session: creation, resume after a restart, turns (send, prepare, cancel),
 * subscriptions, and the end that leaves no process and no managed workspace behind. Each live session is one
 * Session value owned by one entry of an RcMap keyed by session id: its scope owns the provider's processes, the
 * tool queue and the timers, and the disconnect lease is the entry's idle time-to-live (subscribers hold the entry).
 * Ownership is by origin, decided here alone; a create outside the site's policy is refused before anything is made
 * (the rules are SitePolicies'). It does not parse provider output (TurnRunner), route tool calls
 * (ToolRouter) or store files (the stores); the steps of opening, turns and ending are in `Sessions/`.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionCapability, SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput, SessionInfo } from "@pedelec/contracts/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { providing } from "./Provided.ts"
import { type EndReason, info, isEnding, type Session } from "./Session.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { SessionStore } from "./SessionStore.ts"
import { recoverAtStartup } from "./Sessions/End.ts"
import { makeLiveSessions, type SessionDeps, sessionDeps, sessionError } from "./Sessions/Live.ts"
import { type LiveIndex, newRecord } from "./Sessions/Open.ts"
import { cancelTurn, startTurn } from "./Sessions/Turns.ts"
import { SitePolicies } from "./SitePolicies.ts"
import { type Claimer, ToolRouter } from "./ToolRouter.ts"

/** A live session as the user sees it: what its page sees, and when it last did something. */
export type SessionOverview = SessionInfo & { readonly lastActivityAt: number }

export class Sessions extends Context.Service<
  Sessions,
  {
    readonly create: (origin: Origin, input: CreateSessionInput) => Effect.Effect<SessionInfo, PedelecError>
    readonly resume: (origin: Origin, sessionId: SessionId) => Effect.Effect<SessionInfo, PedelecError>
    /** Events after `afterSeq`; holding the stream holds the lease (and the tool claim, by `claimer`, when asked). */
    readonly subscribe: (
      origin: Origin,
      sessionId: SessionId,
      afterSeq: number,
      claimTools: boolean,
      claimer?: Claimer
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
    /** The user's view (desktop role): live sessions of every origin, or the one named, with their last activity. */
    readonly overview: (sessionId?: SessionId) => Effect.Effect<ReadonlyArray<SessionOverview>>
    /** The user ends any origin's live session, as its owner would; not live is `SESSION_NOT_FOUND`. */
    readonly endById: (sessionId: SessionId) => Effect.Effect<void, PedelecError>
    /** Core's stop: every live session ends as `shutdown`, its processes with it (also when the layer closes). */
    readonly endAll: Effect.Effect<void>
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

/** What the user sees of a live session: its info, and its latest activity (a turn, or an event since this start). */
const overviewOf = Effect.fnUntraced(function* (session: Session) {
  const record = yield* Ref.get(session.record)
  const lastEventAt = (yield* SessionEvents).lastEventAt(session.sessionId) ?? 0
  const base = yield* info(session)
  return { ...base, lastActivityAt: Math.max(record.createdAt, record.lastActiveAt, lastEventAt) }
})

/** The user's end of any origin's session: only a live one, and as `requested`, like its owner's. */
const endById = Effect.fn("Sessions.endById")(function* (
  index: LiveIndex,
  endNow: (session: Session, reason: EndReason) => Effect.Effect<void>,
  sessionId: SessionId
) {
  const running = index.bySession.get(sessionId)
  if (running === undefined || (yield* isEnding(running))) {
    return yield* Effect.fail(sessionError("SESSION_NOT_FOUND", sessionId))
  }
  yield* endNow(running, "requested")
})

/** An agent's session while it is live and not ending; `SESSION_ENDED` after. */
const liveSession = Effect.fnUntraced(function* (index: LiveIndex, sessionId: SessionId) {
  const session = index.bySession.get(sessionId)
  if (session === undefined || (yield* isEnding(session))) {
    return yield* Effect.fail(sessionError("SESSION_ENDED", sessionId))
  }
  return session
})

/** Core's stop: every live session at once, as `shutdown`. */
const endEveryone = (index: LiveIndex, endNow: (session: Session, reason: EndReason) => Effect.Effect<void>) =>
  Effect.suspend(() =>
    Effect.forEach([...index.bySession.values()], (session) => endNow(session, "shutdown"), {
      concurrency: "unbounded",
      discard: true
    })
  )

const make = Effect.gen(function* () {
  const context = Context.pick(...sessionDeps)(yield* Effect.context<SessionDeps>())
  const withDeps = providing(context)
  const store = yield* SessionStore
  const events = yield* SessionEvents
  const tools = yield* ToolRouter
  const policies = yield* SitePolicies

  // Sessions a previous Core left active: their orphaned processes are reaped before anything else runs.
  yield* withDeps(recoverAtStartup)
  const { index, hold, adopt, endNow } = yield* makeLiveSessions(withDeps)
  const access = (origin: Origin, sessionId: SessionId) => Effect.scoped(hold(origin, sessionId))

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

  const subscribe = (origin: Origin, sessionId: SessionId, afterSeq: number, claimTools: boolean, claimer?: Claimer) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const session = yield* hold(origin, sessionId)
        if (claimTools) yield* tools.claim(session, claimer)
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

  // The site's policy first (SitePolicies), so a refused create makes nothing. Creates of an origin whose policy
  // bounds its live sessions run one at a time: two at once would both count the same sessions.
  const bounded = yield* Semaphore.make(1)
  const create = Effect.fn("Sessions.create")(function* (origin: Origin, input: CreateSessionInput) {
    const make = Effect.gen(function* () {
      yield* policies.check(origin, input, (yield* liveOf(origin)).length)
      const record = yield* withDeps(newRecord(origin, input))
      return yield* withDeps(info(yield* adopt(record)))
    })
    return yield* (yield* policies.limitsSessions(origin)) ? bounded.withPermits(1)(make) : make
  })

  const overview = Effect.fn("Sessions.overview")(function* (sessionId?: SessionId) {
    const live = yield* liveOf(undefined)
    const named = sessionId === undefined ? live : live.filter((session) => session.sessionId === sessionId)
    return yield* Effect.forEach(named, (session) => withDeps(overviewOf(session)))
  })

  const revokeOrigin = Effect.fn("Sessions.revokeOrigin")(function* (origin: Origin) {
    const owned = yield* liveOf(origin)
    yield* Effect.forEach(owned, (session) => endNow(session, "revoked"), { discard: true })
    return { ended: owned.length }
  })

  const endAll = endEveryone(index, endNow)
  // Before the RcMap closes; CoreServer's stop has usually ended them already, this ends any opened since.
  yield* Effect.addFinalizer(() => endAll)

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
    overview,
    endById: (sessionId) => endById(index, endNow, sessionId),
    endAll,
    byCapability: (capability) => index.byCapability.get(capability as SessionCapability),
    live: (sessionId) => liveSession(index, sessionId),
    access
  })
})
