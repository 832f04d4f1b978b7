/**
 * Sessions/Turns — one turn of a live session: started (one at a time, `SESSION_BUSY` otherwise), run on the
 * provider's session process with the right prompt (the rules and tool index on a fresh provider session), its
 * processes kept in the session file while it runs (what a crash reaper reads), cancelled by clearing the session's
 * turn fiber, and completed exactly once (after the idle status): completed, failed (after its error event) or
 * cancelled. Parsing provider output is TurnRunner's; the end of a session is Sessions/End's.
 */
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import type { TurnId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { TurnKind } from "@pedelec/contracts/Session"
import { lookNow } from "@pedelec/providers/AgentProcess/Watch"
import type { ProcessRecord } from "@pedelec/providers/Provider"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberHandle from "effect/FiberHandle"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { CoreConfig } from "../CoreConfig.ts"
import { CorePaths } from "../CorePaths.ts"
import { mintTurnId } from "../Mint.ts"
import { NodeShim } from "../NodeShim.ts"
import { ProcessRecords } from "../ProcessRecords.ts"
import { freshSessionPrompt } from "../Prompt.ts"
import { isEnding, type Session, setStatus, updateRecord } from "../Session.ts"
import { SessionEvents } from "../SessionEvents.ts"
import { SessionStore } from "../SessionStore.ts"
import { ToolRouter } from "../ToolRouter.ts"
import { type TurnOutcome, TurnRunner } from "../TurnRunner.ts"

const PREPARE_TEXT = "Pedelec is warming this session up. Reply with the single word: ready."

export const startTurn = Effect.fnUntraced(function* (session: Session, kind: TurnKind, text: string) {
  const turnId = mintTurnId()
  const free = yield* Ref.modify(session.turn, (current) =>
    current === undefined ? [true, { turnId, kind }] : [false, current]
  )
  if (!free) {
    return yield* Effect.fail(
      PedelecError.fromCode("SESSION_BUSY", "core", { details: { sessionId: session.sessionId } })
    )
  }
  // On disk before anyone hears of the turn: a Core killed from here on still owes it a completion (Open.ts). Kept
  // in memory only, a kill before the turn's first process record left a turn that never completed (4 of 20 Core
  // kills in the fault suite). A home that cannot take the write refuses the turn with its storage code.
  // With the processes already running (a warm agent): the one write the turn's start costs (ProcessRecords).
  const processes = yield* processesOf(session)
  const now = yield* Clock.currentTimeMillis
  const withTurn = yield* updateRecord(session, (record) => ({
    ...record,
    activeTurn: { turnId, kind },
    processes: [...processes],
    lastActiveAt: now
  }))
  yield* (yield* SessionStore)
    .save(withTurn)
    .pipe(
      Effect.tapError(() =>
        Ref.set(session.turn, undefined).pipe(
          Effect.andThen(updateRecord(session, ({ activeTurn: _, ...settled }) => settled))
        )
      )
    )
  yield* setStatus(session, "running", { turnId, kind })
  yield* FiberHandle.run(
    session.turnFiber,
    runTurn(session, turnId, kind, text).pipe(Effect.onExit((exit) => completeTurn(session, turnId, kind, exit)))
  )
  return { turnId }
})

/** Stops the running turn, its pending calls first (so pedelec-cli hears at once); false when none runs. */
export const cancelTurn = Effect.fnUntraced(function* (session: Session) {
  if ((yield* Ref.get(session.turn)) === undefined) return { cancelled: false }
  // A cancelled call lets the agent run on and exit: what it started must be known while it still has its parent.
  yield* lookNow
  yield* (yield* ToolRouter).cancelAll(session, "TOOL_CANCELLED")
  yield* FiberHandle.clear(session.turnFiber)
  return { cancelled: true }
})

/** Exactly one completion per turn: completed, failed (after its error event) or cancelled. */
const completeTurn = Effect.fnUntraced(function* (
  session: Session,
  turnId: TurnId,
  kind: TurnKind,
  exit: Exit.Exit<TurnOutcome>
) {
  const events = yield* SessionEvents
  const sessionId = session.sessionId
  yield* (yield* ToolRouter).cancelAll(session, "TOOL_CANCELLED")
  // Free the session before announcing the completion: a client may send its next text the moment it hears it.
  yield* Ref.update(session.turn, (turn) => (turn?.turnId === turnId ? undefined : turn))
  // Idle before the completion: whoever acts on `turn_completed` (a page's `await sendText()`) already sees it. A
  // turn started in between keeps the session running.
  if (!(yield* isEnding(session)) && (yield* Ref.get(session.turn)) === undefined) yield* setStatus(session, "idle")
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
  const lastSeq = yield* events.lastSeq(sessionId).pipe(Effect.orElseSucceed(() => 0))
  // The record owes this turn a completion until the completion is logged: a Core killed in between completes it on
  // restart (Open.ts), and one killed after it finds the completion in the log, so it never completes a turn twice.
  // A turn started meanwhile keeps its own.
  const settled = yield* updateRecord(session, ({ activeTurn, ...settled }) => ({
    ...settled,
    ...(activeTurn === undefined || activeTurn.turnId === turnId ? {} : { activeTurn }),
    lastSeq: Math.max(lastSeq, settled.lastSeq)
  }))
  // Written now only when the processes changed (a new agent, one that died): what a reaper reads must be current.
  // Otherwise the next write carries it (the next turn's start, the end): a next turn sent the moment this one
  // completed waited ~9 ms for this write behind its own (issue 15, warm ollama turns).
  if (signatureOf(settled.processes) !== signatureOf(yield* processesOf(session)))
    yield* (yield* ProcessRecords).record(session).pipe(Effect.ignore)
})

/** Never fails: a turn that cannot run is a `failed` outcome. Interrupting it cancels the turn. */
const runTurn = (session: Session, turnId: TurnId, kind: TurnKind, text: string) =>
  Effect.gen(function* () {
    const record = yield* Ref.get(session.record)
    const fresh = record.providerSessionId === undefined || !record.promptInjected
    // A prepare turn on a provider session that already knows the rules has nothing to do.
    if (kind === "prepare" && !fresh) return { reason: "completed", text: "" } satisfies TurnOutcome
    const process = yield* processOf(session)
    const userText = kind === "prepare" ? PREPARE_TEXT : text
    const prompt = fresh ? yield* firstPrompt(session, userText) : userText
    const resumeFrom = fresh ? undefined : record.providerSessionId
    const store = yield* SessionStore
    // A Core killed mid-turn can only reap what the session file names: keep it current while the turn runs (what
    // ran before the turn is in the file since startTurn).
    yield* (yield* ProcessRecords).track(session)
    return yield* (yield* TurnRunner).run({
      sessionId: session.sessionId,
      turnId,
      kind,
      provider: record.provider,
      input: { prompt, providerSessionId: resumeFrom, kind },
      process,
      toolActivity: session.toolActivity,
      onProviderSession: (providerSessionId) =>
        noteProviderSession(session, providerSessionId, fresh, resumeFrom).pipe(
          Effect.provideService(SessionStore, store)
        )
    })
  }).pipe(
    Effect.scoped,
    Effect.catch((error: PedelecError) => Effect.succeed({ reason: "failed", error } satisfies TurnOutcome))
  )

const firstPrompt = Effect.fnUntraced(function* (session: Session, userText: string) {
  const record = yield* Ref.get(session.record)
  const config = yield* CoreConfig
  return freshSessionPrompt(
    {
      sessionId: session.sessionId,
      guidance: record.skills?.guidance,
      tools: (yield* ToolRouter).list(session),
      // pedelec-deno sits beside pedelec-cli; without it the agent is never told to run scripts (SPEC §9).
      denoAvailable: config.binDir !== undefined && existsSync(join(config.binDir, "pedelec-deno")),
      toolsAsFunctions: session.adapter.toolsAsFunctions === true,
      mcpToolsListedAs: session.adapter.toolsAsMcp?.listedAs
    },
    userText
  )
})

/** Only a session that got the rules in this very turn counts as having them. */
const noteProviderSession = Effect.fnUntraced(function* (
  session: Session,
  providerSessionId: string,
  fresh: boolean,
  resumeFrom: string | undefined
) {
  const before = yield* Ref.get(session.record)
  const record = yield* updateRecord(session, (record) => ({
    ...record,
    providerSessionId,
    promptInjected:
      resumeFrom !== undefined && providerSessionId !== resumeFrom ? false : fresh || record.promptInjected
  }))
  // A warm CLI names the same conversation every turn: only a change is worth a write.
  if (record.providerSessionId === before.providerSessionId && record.promptInjected === before.promptInjected) return
  yield* (yield* SessionStore).save(record).pipe(Effect.ignore)
})

const agentEnv = Effect.fnUntraced(function* (session: Session) {
  const config = yield* CoreConfig
  const paths = yield* CorePaths
  const record = yield* Ref.get(session.record)
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined)
  )
  const shim = (yield* NodeShim).dir
  // pedelec-cli first, so the agent runs ours; the node shim last, so a user's own node wins (NodeShim).
  const path = [config.binDir, process.env.PATH, shim]
    .filter((part) => part !== undefined && part !== "")
    .join(delimiter)
  return {
    ...inherited,
    ...record.effortProfile.env,
    PATH: path,
    PEDELEC_THREAD_ID: session.sessionId,
    PEDELEC_SESSION_CAP: session.capability,
    PEDELEC_HOME: paths.home
  }
})

const signatureOf = (processes: ReadonlyArray<ProcessRecord>) =>
  processes.map((p) => `${p.pid}:${p.startTime}`).join(",")

const processesOf = (session: Session) =>
  Effect.flatMap(Ref.get(session.process), (process) => (process ? process.processes : Effect.succeed([])))

/** The session's process, started now if it has none (by its first turn, or as it opens: Sessions/Open). */
export const processOf = Effect.fnUntraced(function* (session: Session) {
  const running = yield* Ref.get(session.process)
  if (running) return running
  const record = yield* Ref.get(session.record)
  const started = yield* session.adapter
    .start({
      sessionId: session.sessionId,
      workspace: session.workspace,
      env: yield* agentEnv(session),
      model: record.model ?? undefined,
      effort: record.effortProfile,
      fullAccess: session.fullAccess,
      ...(record.providerSessionId === undefined ? {} : { providerSessionId: record.providerSessionId })
    })
    .pipe(Scope.provide(session.processScope))
  yield* Ref.set(session.process, started)
  return started
})
