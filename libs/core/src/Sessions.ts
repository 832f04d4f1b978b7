/**
 * Sessions — the life of every session: creation (provider, model, effort snapshot, workspace, tools), resume after
 * a restart, the status machine, turns (send, prepare, cancel), subscriptions with the disconnect lease, and the end
 * that leaves no process and no managed workspace behind. Ownership is by origin, decided here alone. It does not
 * parse provider output (TurnRunner, adapters), route tool calls (ToolRouter) or store files (the stores).
 */
import path from "node:path"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionCapability, SessionId, TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput, SessionInfo, TurnKind } from "@pedelec/contracts/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { type LiveSession, SessionSetup } from "./SessionSetup.ts"
import { SessionStore } from "./SessionStore.ts"
import { ToolRouter } from "./ToolRouter.ts"
import type { TurnOutcome } from "./TurnRunner.ts"
import { Workspaces } from "./Workspaces.ts"

type EndReason = "requested" | "disconnected" | "revoked" | "shutdown" | "failed"

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
    /** Checks that a live session belongs to the origin (for the asset and tool methods of other services). */
    readonly access: (origin: Origin, sessionId: SessionId) => Effect.Effect<LiveSession, PedelecError>
  }
>()("pedelec/core/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function* () {
      const setup = yield* SessionSetup
      const events = yield* SessionEvents
      const tools = yield* ToolRouter
      const store = yield* SessionStore
      const workspaces = yield* Workspaces
      const config = yield* CoreConfig
      const paths = yield* CorePaths
      const fs = yield* FileSystem.FileSystem
      const layerScope = yield* Effect.scope
      const live = new Map<SessionId, LiveSession>()
      const capabilities = new Map<SessionCapability, SessionId>()

      const infoOf = (session: LiveSession) =>
        Effect.map(events.lastSeq(session.record.sessionId).pipe(Effect.orElseSucceed(() => 0)), (lastSeq) =>
          setup.info(session, lastSeq)
        )

      const setStatus = (
        session: LiveSession,
        status: LiveSession["status"],
        turn?: { turnId: TurnId; kind: TurnKind }
      ) =>
        Effect.gen(function* () {
          if (session.status === status) return
          const previous = session.status
          session.status = status
          yield* events
            .publish(session.record.sessionId, {
              type: "status_changed",
              status,
              previous,
              ...(turn ? { turnId: turn.turnId, turnKind: turn.kind } : {})
            })
            .pipe(Effect.ignore)
        })

      const adopt = (session: LiveSession) => {
        live.set(session.record.sessionId, session)
        capabilities.set(session.capability, session.record.sessionId)
        return session
      }

      /** Loads a session from memory or, after a Core restart, from its record. */
      const load = Effect.fn("Sessions.load")(function* (sessionId: SessionId) {
        const found = live.get(sessionId)
        if (found) return found
        const record = yield* store.load(sessionId)
        if (record.state === "ended") return yield* Effect.fail(error("SESSION_ENDED", sessionId))
        const session = adopt(yield* setup.revive(record, onToolActivity))
        yield* armLease(session)
        return session
      })

      const access = Effect.fn("Sessions.access")(function* (origin: Origin, sessionId: SessionId) {
        const session = yield* load(sessionId)
        if (session.record.origin !== origin) return yield* Effect.fail(error("SESSION_ACCESS_DENIED", sessionId))
        if (session.ending) return yield* Effect.fail(error("SESSION_ENDED", sessionId))
        return session
      })

      const onToolActivity = (sessionId: SessionId, pending: boolean) =>
        Effect.gen(function* () {
          const session = live.get(sessionId)
          if (!session) return
          session.toolActivity = { pending, changedAt: Date.now() }
          if (session.turn && session.status !== "ended") {
            yield* setStatus(session, pending ? "waiting_tool_result" : "running")
          }
        })

      const create = Effect.fn("Sessions.create")(function* (origin: Origin, input: CreateSessionInput) {
        const session = yield* setup.create(origin, input, onToolActivity)
        adopt(session)
        // A session nobody ever subscribes to is as abandoned as one whose subscribers all left.
        yield* armLease(session)
        return yield* infoOf(session)
      })

      const resume = Effect.fn("Sessions.resume")(function* (origin: Origin, sessionId: SessionId) {
        return yield* infoOf(yield* access(origin, sessionId))
      })

      const startTurn = Effect.fn("Sessions.startTurn")(function* (
        origin: Origin,
        sessionId: SessionId,
        kind: TurnKind,
        text: string
      ) {
        const session = yield* access(origin, sessionId)
        if (session.turn) return yield* Effect.fail(error("SESSION_BUSY", sessionId))
        const turnId = setup.mintTurn()
        session.turn = { turnId, kind, fiber: undefined }
        // Saved with the turn's first process record: a Core that dies mid-turn still owes it a completion.
        session.record = { ...session.record, activeTurn: { turnId, kind } }
        yield* setStatus(session, "running", { turnId, kind })
        const fiber = yield* setup.runTurn(session, turnId, kind, text).pipe(
          Effect.onExit((exit) => completeTurn(session, turnId, kind, exit)),
          Effect.forkIn(session.scope)
        )
        if (session.turn?.turnId === turnId) session.turn.fiber = fiber
        return { turnId }
      })

      /** Exactly one completion per turn: completed, failed (after its error event) or cancelled. */
      const completeTurn = (session: LiveSession, turnId: TurnId, kind: TurnKind, exit: Exit.Exit<TurnOutcome>) =>
        Effect.gen(function* () {
          const sessionId = session.record.sessionId
          yield* tools.cancelAll(sessionId, "TOOL_CANCELLED")
          // Free the session before announcing the completion: a client may send its next text the moment it hears it.
          if (session.turn?.turnId === turnId) session.turn = undefined
          const { activeTurn: _, ...settled } = session.record
          session.record = settled
          session.toolActivity = { pending: false, changedAt: Date.now() }
          const base = { type: "turn_completed" as const, turnId, turnKind: kind }
          const outcome = Exit.isSuccess(exit) ? exit.value : undefined
          if (outcome?.reason === "completed") {
            yield* events.publish(sessionId, { ...base, reason: "completed", text: outcome.text }).pipe(Effect.ignore)
          } else if (outcome?.reason === "failed") {
            const wire = outcome.error.toWire()
            yield* events.publish(sessionId, { type: "error", turnId, error: wire }).pipe(Effect.ignore)
            yield* events.publish(sessionId, { ...base, reason: "failed", text: "", error: wire }).pipe(Effect.ignore)
          } else {
            yield* events.publish(sessionId, { ...base, reason: "cancelled", text: "" }).pipe(Effect.ignore)
          }
          // A turn the client started in between keeps the session running.
          if (!session.ending && session.turn === undefined) yield* setStatus(session, "idle")
          yield* setup.persistAfterTurn(session).pipe(Effect.ignore)
        })

      const sendText = (origin: Origin, sessionId: SessionId, text: string) =>
        startTurn(origin, sessionId, "user", text)
      const prepare = (origin: Origin, sessionId: SessionId) => startTurn(origin, sessionId, "prepare", "")

      const cancel = Effect.fn("Sessions.cancel")(function* (origin: Origin, sessionId: SessionId) {
        const session = yield* access(origin, sessionId)
        const fiber = session.turn?.fiber
        if (!fiber) return { cancelled: false }
        yield* tools.cancelAll(sessionId, "TOOL_CANCELLED")
        yield* Fiber.interrupt(fiber)
        return { cancelled: true }
      })

      const endSession = Effect.fn("Sessions.endSession")(function* (session: LiveSession, reason: EndReason) {
        if (session.ending) return
        session.ending = true
        const sessionId = session.record.sessionId
        const fiber = session.turn?.fiber
        if (fiber) yield* Fiber.interrupt(fiber)
        yield* tools.unregister(sessionId)
        // Closing the session's scope interrupts, then kills, every process it started.
        yield* Scope.close(session.scope, Exit.void)
        yield* setStatus(session, "ended")
        yield* events.publish(sessionId, { type: "ended", reason }).pipe(Effect.ignore)
        yield* events.close(sessionId)
        capabilities.delete(session.capability)
        live.delete(sessionId)
        yield* setup.persistEnded(session).pipe(Effect.ignore)
        if (session.record.workspace.managed) yield* workspaces.removeManaged(sessionId).pipe(Effect.ignore)
        // pedelec-agent's conversations hold the page's tool results: they go with the session.
        yield* fs.remove(path.join(paths.agentDir, sessionId), { recursive: true, force: true }).pipe(Effect.ignore)
      })

      const end = Effect.fn("Sessions.end")(function* (origin: Origin, sessionId: SessionId) {
        const session = live.get(sessionId)
        if (session?.ending) return
        // Idempotent (SPEC §2): the owner ending a session that has already ended succeeds.
        if (session === undefined) {
          const record = yield* store.load(sessionId).pipe(Effect.option)
          if (record._tag === "Some" && record.value.state === "ended" && record.value.origin === origin) return
        }
        yield* endSession(yield* access(origin, sessionId), "requested")
      })

      const armLease = (session: LiveSession) =>
        Effect.gen(function* () {
          if (!session.record.autoEndOnDisconnect || session.leaseTimer || session.ending) return
          session.leaseTimer = yield* Effect.sleep(config.leaseMs).pipe(
            Effect.andThen(
              Effect.suspend(() => (session.subscribers === 0 ? endSession(session, "disconnected") : Effect.void))
            ),
            Effect.forkIn(layerScope)
          )
        })

      const holdLease = (session: LiveSession) =>
        Effect.acquireRelease(
          Effect.gen(function* () {
            session.subscribers++
            const timer = session.leaseTimer
            session.leaseTimer = undefined
            if (timer) yield* Fiber.interrupt(timer)
          }),
          () =>
            Effect.suspend(() => {
              session.subscribers--
              return session.subscribers === 0 ? armLease(session) : Effect.void
            })
        )

      const subscribe = (origin: Origin, sessionId: SessionId, afterSeq: number, claimTools: boolean) =>
        Stream.unwrap(
          Effect.gen(function* () {
            const session = yield* access(origin, sessionId)
            yield* holdLease(session)
            if (claimTools) yield* tools.claim(sessionId)
            return events.subscribe(sessionId, afterSeq)
          })
        )

      const list = Effect.fn("Sessions.list")(function* (origin: Origin | undefined) {
        const matching = [...live.values()].filter(
          (s) => !s.ending && (origin === undefined || s.record.origin === origin)
        )
        return yield* Effect.forEach(matching, infoOf)
      })

      const revokeOrigin = Effect.fn("Sessions.revokeOrigin")(function* (origin: Origin) {
        const owned = [...live.values()].filter((s) => s.record.origin === origin && !s.ending)
        yield* Effect.forEach(owned, (session) => endSession(session, "revoked"), { discard: true })
        return { ended: owned.length }
      })

      const byCapability = (capability: string) => capabilities.get(capability as SessionCapability)

      // Sessions a previous Core left active: their orphaned processes are reaped before anything else runs.
      yield* setup.recoverAtStartup

      // On shutdown (SIGTERM) every live session ends and its processes die with it.
      yield* Effect.addFinalizer(() =>
        Effect.forEach([...live.values()], (session) => endSession(session, "shutdown").pipe(Effect.ignore), {
          discard: true
        })
      )

      return Sessions.of({
        create,
        resume,
        subscribe,
        sendText,
        prepare,
        cancel,
        end,
        list,
        revokeOrigin,
        byCapability,
        access
      })
    })
  )
}
