/**
 * SessionSetup — everything a session needs before and around its turns: choosing the provider, model and effort
 * profile from the request and the settings, preparing the workspace and the tools, minting the capability, starting
 * the provider's session process in the session's scope, building the turn's prompt, persisting the record, and
 * reaping what a crashed Core left behind. The status machine and the order of events are Sessions'.
 */
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import type { Origin, SessionCapability, SessionId, TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput, SessionInfo, SessionStatus, TurnKind } from "@pedelec/contracts/Session"
import { killTree } from "@pedelec/providers/ProcessTree"
import type { ProviderAdapter, SessionProcess } from "@pedelec/providers/Provider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { EventLog, LOG_RETENTION_MS } from "./EventLog.ts"
import { mintCapability, mintSessionId, mintTurnId } from "./Mint.ts"
import { freshSessionPrompt } from "./Prompt.ts"
import { ProviderChoice } from "./ProviderChoice.ts"
import { Providers } from "./Providers.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { type SessionRecord, SessionStore } from "./SessionStore.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { ToolRouter } from "./ToolRouter.ts"
import { type ToolActivity, type TurnOutcome, TurnRunner } from "./TurnRunner.ts"
import { Workspaces } from "./Workspaces.ts"

/** A session Core is running now. Mutable on purpose: only Sessions and this module touch it, one event at a time. */
export interface LiveSession {
  record: SessionRecord
  readonly capability: SessionCapability
  readonly adapter: ProviderAdapter
  readonly fullAccess: boolean
  status: SessionStatus
  /** Owns the provider's processes: closing it kills them. */
  readonly scope: Scope.Closeable
  process: SessionProcess | undefined
  turn:
    | { readonly turnId: TurnId; readonly kind: TurnKind; fiber: Fiber.Fiber<unknown, unknown> | undefined }
    | undefined
  toolActivity: ToolActivity
  subscribers: number
  leaseTimer: Fiber.Fiber<void> | undefined
  ending: boolean
}

export type OnToolActivity = (sessionId: SessionId, pending: boolean) => Effect.Effect<void>

/** Sessions unused this long are ended and swept at start-up. */
export const IDLE_SESSION_MS = 7 * 24 * 60 * 60_000

/** How often a running turn's processes are compared with the session file (what the crash reaper reads). */
const PROCESS_RECORD_INTERVAL_MS = 250

const PREPARE_TEXT = "Pedelec is warming this session up. Reply with the single word: ready."

export class SessionSetup extends Context.Service<
  SessionSetup,
  {
    readonly create: (
      origin: Origin,
      input: CreateSessionInput,
      onToolActivity: OnToolActivity
    ) => Effect.Effect<LiveSession, PedelecError>
    readonly revive: (record: SessionRecord, onToolActivity: OnToolActivity) => Effect.Effect<LiveSession, PedelecError>
    readonly info: (session: LiveSession, lastSeq: number) => SessionInfo
    readonly mintTurn: () => TurnId
    /** Never fails: a turn that cannot run is a `failed` outcome. Interrupting it cancels the turn. */
    readonly runTurn: (session: LiveSession, turnId: TurnId, kind: TurnKind, text: string) => Effect.Effect<TurnOutcome>
    readonly persistAfterTurn: (session: LiveSession) => Effect.Effect<void, PedelecError>
    readonly persistEnded: (session: LiveSession) => Effect.Effect<void, PedelecError>
    readonly recoverAtStartup: Effect.Effect<void>
  }
>()("pedelec/core/SessionSetup") {
  static readonly layer = Layer.effect(
    SessionSetup,
    Effect.gen(function* () {
      const settings = yield* SettingsStore
      const providers = yield* Providers
      const choice = yield* ProviderChoice
      const workspaces = yield* Workspaces
      const tools = yield* ToolRouter
      const events = yield* SessionEvents
      const store = yield* SessionStore
      const log = yield* EventLog
      const runner = yield* TurnRunner
      const config = yield* CoreConfig
      const paths = yield* CorePaths

      const makeLive = Effect.fn("SessionSetup.makeLive")(function* (
        record: SessionRecord,
        adapter: ProviderAdapter,
        fullAccess: boolean,
        onToolActivity: OnToolActivity
      ) {
        const session: LiveSession = {
          record,
          capability: mintCapability(),
          adapter,
          fullAccess,
          status: "idle",
          scope: yield* Scope.make(),
          process: undefined,
          turn: undefined,
          toolActivity: { pending: false, changedAt: Date.now() },
          subscribers: 0,
          leaseTimer: undefined,
          ending: false
        }
        const sessionId = record.sessionId
        yield* tools.register(sessionId, record.skills, {
          workspace: record.workspace.path,
          currentTurn: Effect.sync(() => session.turn?.turnId),
          onPendingChange: (pending) => onToolActivity(sessionId, pending)
        })
        return session
      })

      const create = Effect.fn("SessionSetup.create")(function* (
        origin: Origin,
        input: CreateSessionInput,
        onToolActivity: OnToolActivity
      ) {
        const chosen = yield* choice.resolve(input)
        const sessionId = mintSessionId()
        const explicit = input.workspace?.path
        // prepareExplicit runs every check of checkExplicit first, and returns the canonical path.
        const workspace = explicit
          ? yield* workspaces.prepareExplicit(explicit)
          : yield* workspaces.createManaged(sessionId)
        const now = Date.now()
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
        const fullAccess = chosen.fullAccessOrigins.includes(origin)
        const session = yield* makeLive(record, chosen.adapter, fullAccess, onToolActivity).pipe(
          Effect.tapError(() =>
            workspace.managed ? workspaces.removeManaged(sessionId).pipe(Effect.ignore) : Effect.void
          )
        )
        yield* events.open(sessionId, 0)
        yield* store.save(record)
        return session
      })

      const revive = Effect.fn("SessionSetup.revive")(function* (
        record: SessionRecord,
        onToolActivity: OnToolActivity
      ) {
        const adapter = yield* providers.adapter(record.provider)
        const current = yield* settings.get
        // The log may hold events the record's lastSeq missed (a crash between the two writes).
        const logged = yield* log.readAfter(record.sessionId, record.lastSeq)
        const lastSeq = logged.at(-1)?.seq ?? record.lastSeq
        const session = yield* makeLive(
          record,
          adapter,
          current.fullAccessOrigins.includes(record.origin),
          onToolActivity
        )
        yield* events.open(record.sessionId, lastSeq)
        if (record.activeTurn) yield* completeInterruptedTurn(session, record.activeTurn)
        return session
      })

      /** Every turn ends with one completion, even one whose Core died under it: failed, then idle. */
      const completeInterruptedTurn = Effect.fnUntraced(function* (
        session: LiveSession,
        turn: { readonly turnId: TurnId; readonly kind: TurnKind }
      ) {
        const sessionId = session.record.sessionId
        const error = PedelecError.fromCode("INTERNAL_ERROR", "core", {
          details: { component: "core", reason: "the Pedelec Core stopped while this turn ran" }
        }).toWire()
        yield* events.publish(sessionId, { type: "error", turnId: turn.turnId, error })
        yield* events.publish(sessionId, {
          type: "turn_completed",
          turnId: turn.turnId,
          turnKind: turn.kind,
          reason: "failed",
          text: "",
          error
        })
        yield* events.publish(sessionId, { type: "status_changed", status: "idle", previous: "running" })
        const { activeTurn: _, ...settled } = session.record
        session.record = { ...settled, lastSeq: yield* events.lastSeq(sessionId) }
        yield* store.save(session.record)
      })

      const info = (session: LiveSession, lastSeq: number): SessionInfo => ({
        sessionId: session.record.sessionId,
        origin: session.record.origin,
        provider: session.record.provider,
        model: session.record.model,
        effortLevel: session.record.effortLevel,
        workspace: session.record.workspace,
        status: session.status,
        autoEndOnDisconnect: session.record.autoEndOnDisconnect,
        lastSeq,
        createdAt: session.record.createdAt
      })

      /** pedelec-deno sits beside pedelec-cli; without it the agent is never told to run scripts (SPEC §9). */
      const denoAvailable = () => config.binDir !== undefined && existsSync(join(config.binDir, "pedelec-deno"))

      const agentEnv = (session: LiveSession): Record<string, string> => {
        const inherited = Object.fromEntries(
          Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined)
        )
        const path = config.binDir ? `${config.binDir}${delimiter}${process.env.PATH ?? ""}` : (process.env.PATH ?? "")
        return {
          ...inherited,
          ...session.record.effortProfile.env,
          PATH: path,
          PEDELEC_THREAD_ID: session.record.sessionId,
          PEDELEC_SESSION_CAP: session.capability,
          PEDELEC_HOME: paths.home
        }
      }

      const processOf = Effect.fn("SessionSetup.processOf")(function* (session: LiveSession) {
        if (session.process) return session.process
        const started = yield* session.adapter
          .start({
            sessionId: session.record.sessionId,
            workspace: session.record.workspace.path,
            env: agentEnv(session),
            model: session.record.model ?? undefined,
            effort: session.record.effortProfile,
            fullAccess: session.fullAccess
          })
          .pipe(Scope.provide(session.scope))
        session.process = started
        return started
      })

      const recordProcesses = (session: LiveSession) =>
        Effect.gen(function* () {
          const processes = session.process ? yield* session.process.processes : []
          session.record = { ...session.record, processes: [...processes], lastActiveAt: Date.now() }
          yield* store.save(session.record)
        })

      /** Writes the turn's process tree to the session file whenever it changes (a new agent, a grandchild). */
      const keepProcessesRecorded = (session: LiveSession) =>
        Effect.gen(function* () {
          let recorded = ""
          while (true) {
            yield* Effect.sleep(PROCESS_RECORD_INTERVAL_MS)
            const processes = session.process ? yield* session.process.processes : []
            const current = processes.map((p) => `${p.pid}:${p.startTime}`).join(",")
            if (current !== recorded) {
              recorded = current
              yield* recordProcesses(session)
            }
          }
        })

      const runTurn = (session: LiveSession, turnId: TurnId, kind: TurnKind, text: string) =>
        Effect.gen(function* () {
          const fresh = session.record.providerSessionId === undefined || !session.record.promptInjected
          // A prepare turn on a provider session that already knows the rules has nothing to do.
          if (kind === "prepare" && !fresh) return { reason: "completed", text: "" } satisfies TurnOutcome
          const process = yield* processOf(session)
          const userText = kind === "prepare" ? PREPARE_TEXT : text
          const sessionId = session.record.sessionId
          const prompt = fresh
            ? freshSessionPrompt(
                {
                  sessionId,
                  guidance: session.record.skills?.guidance,
                  tools: yield* tools.list(sessionId),
                  denoAvailable: denoAvailable(),
                  toolsAsFunctions: session.adapter.toolsAsFunctions === true
                },
                userText
              )
            : userText
          const resumeFrom = fresh ? undefined : session.record.providerSessionId
          yield* recordProcesses(session)
          // A Core killed mid-turn can only reap what the session file names: keep it current while the turn runs.
          const recording = yield* Effect.forkChild(keepProcessesRecorded(session))
          const outcome = yield* runner.run({
            sessionId,
            turnId,
            kind,
            provider: session.record.provider,
            input: { prompt, providerSessionId: resumeFrom, kind },
            process,
            toolActivity: () => session.toolActivity,
            onProviderSession: (providerSessionId) =>
              Effect.gen(function* () {
                // Only a session that got the rules in this very turn counts as having them.
                session.record = {
                  ...session.record,
                  providerSessionId,
                  promptInjected: fresh || session.record.promptInjected
                }
                if (resumeFrom !== undefined && providerSessionId !== resumeFrom) {
                  session.record = { ...session.record, promptInjected: false }
                }
                yield* store.save(session.record).pipe(Effect.ignore)
              })
          })
          // (A cancelled turn skips this line; a child fiber ends with its parent anyway.)
          yield* Fiber.interrupt(recording)
          return outcome
        }).pipe(
          Effect.catch((error: PedelecError) => Effect.succeed({ reason: "failed", error } satisfies TurnOutcome))
        )

      const persistAfterTurn = Effect.fn("SessionSetup.persistAfterTurn")(function* (session: LiveSession) {
        const lastSeq = yield* events
          .lastSeq(session.record.sessionId)
          .pipe(Effect.orElseSucceed(() => session.record.lastSeq))
        session.record = { ...session.record, lastSeq }
        yield* recordProcesses(session)
      })

      const persistEnded = Effect.fn("SessionSetup.persistEnded")(function* (session: LiveSession) {
        session.record = { ...session.record, state: "ended", endedAt: Date.now(), processes: [] }
        yield* store.save(session.record)
      })

      const recoverAtStartup = Effect.gen(function* () {
        const records = yield* store.list
        const now = Date.now()
        for (const record of records) {
          if (record.processes.length > 0) {
            yield* killTree(record.processes, { graceMs: 1_000 })
          }
          const idle = record.state === "active" && now - record.lastActiveAt > IDLE_SESSION_MS
          if (record.processes.length > 0 || idle) {
            const next: SessionRecord = idle
              ? { ...record, processes: [], state: "ended", endedAt: now }
              : { ...record, processes: [] }
            yield* store.save(next)
          }
        }
        const liveIds = (yield* store.list).filter((r) => r.state === "active").map((r) => r.sessionId)
        yield* workspaces.sweep({ liveSessionIds: liveIds, idleSessionIds: [] })
        yield* log.prune({ olderThanMs: LOG_RETENTION_MS })
      }).pipe(
        // A start-up that cannot tidy up still serves: the next start tries again.
        Effect.catchCause((cause) => Effect.logWarning("start-up recovery failed", cause)),
        Effect.withSpan("SessionSetup.recoverAtStartup")
      )

      return SessionSetup.of({
        create,
        revive,
        info,
        mintTurn: mintTurnId,
        runTurn,
        persistAfterTurn,
        persistEnded,
        recoverAtStartup
      })
    })
  )
}
