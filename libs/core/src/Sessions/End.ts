/**
 * Sessions/End — the steps that end a live session, in order, when its scope closes: pending calls answered first
 * (so pedelec-cli hears `SESSION_ENDED` and exits), the running turn cancelled, every provider process killed, then
 * `ended` published, the record marked ended, and the managed workspace and pedelec-agent's conversation removed.
 * Nothing is left running or on disk. Start-up recovery of what a crashed Core left behind is here too. Why a
 * session ends (request, lease, revoke, shutdown) is Sessions'.
 */
import path from "node:path"
import type { SessionId } from "@pedelec/contracts/Ids"
import { taggedStrays } from "@pedelec/providers/AgentProcess/Tag"
import { lookNow } from "@pedelec/providers/AgentProcess/Watch"
import { killTree } from "@pedelec/providers/ProcessTree"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberHandle from "effect/FiberHandle"
import * as FileSystem from "effect/FileSystem"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { CorePaths } from "../CorePaths.ts"
import { EventLog, LOG_RETENTION_MS } from "../EventLog.ts"
import { type Session, setStatus, updateRecord } from "../Session.ts"
import { SessionEvents } from "../SessionEvents.ts"
import { type SessionRecord, SessionStore } from "../SessionStore.ts"
import { ToolRouter } from "../ToolRouter.ts"
import { Workspaces } from "../Workspaces.ts"
import type { LiveIndex } from "./Open.ts"

/** Sessions unused this long are ended and swept at start-up. */
export const IDLE_SESSION_MS = 7 * 24 * 60 * 60_000

export const endSession = Effect.fnUntraced(function* (session: Session, index: LiveIndex) {
  const { sessionId } = session
  const reason = (yield* Ref.get(session.ending)) ?? "disconnected"
  const events = yield* SessionEvents
  const store = yield* SessionStore
  // Durable before anything is torn down: no crash or full disk below may revive a session its page ended. The
  // processes stay in the record until they are dead, for the start-up reaper.
  const endedAt = yield* Clock.currentTimeMillis
  const ended = yield* updateRecord(session, (record) => ({ ...record, state: "ended", endedAt }))
  yield* store.saveEnded(ended).pipe(Effect.ignore)
  // As a cancelled turn's (Turns): an agent whose call ends may exit and orphan what it started.
  yield* lookNow
  yield* (yield* ToolRouter).cancelAll(session, "SESSION_ENDED")
  yield* FiberHandle.clear(session.turnFiber)
  yield* Scope.close(session.processScope, Exit.void)
  yield* setStatus(session, "ended")
  yield* events.publish(sessionId, { type: "ended", reason }).pipe(Effect.ignore)
  yield* events.close(sessionId)
  const record = yield* updateRecord(session, (record) => ({ ...record, processes: [] }))
  yield* store.save(record).pipe(Effect.ignore)
  // Only now: until the record says ended, the index is what keeps a resume from reviving the session.
  index.byCapability.delete(session.capability)
  index.bySession.delete(sessionId)
  yield* removeLeftovers(record)
})

/** What a session leaves on disk: its managed workspace, and pedelec-agent's conversation (the page's results). */
const removeLeftovers = Effect.fnUntraced(function* (record: SessionRecord) {
  if (record.workspace.managed) yield* (yield* Workspaces).removeManaged(record.sessionId).pipe(Effect.ignore)
  const fs = yield* FileSystem.FileSystem
  const agentDir = path.join((yield* CorePaths).agentDir, record.sessionId)
  yield* fs.remove(agentDir, { recursive: true, force: true }).pipe(Effect.ignore)
})

/** A record that never became live (its lookup failed): ended on disk, its workspace removed. */
export const discardRecord = Effect.fnUntraced(function* (record: SessionRecord) {
  const endedAt = yield* Clock.currentTimeMillis
  yield* (yield* SessionStore).saveEnded({ ...record, state: "ended", endedAt, processes: [] }).pipe(Effect.ignore)
  yield* removeLeftovers(record)
})

/** Sessions a previous Core left active: their orphaned processes are reaped before anything else runs. */
export const recoverAtStartup = Effect.gen(function* () {
  const store = yield* SessionStore
  const now = yield* Clock.currentTimeMillis
  for (const record of yield* store.list) {
    if (record.processes.length > 0) {
      // What the file names, and what its agents started that nothing but their tag links to them.
      const strays = yield* taggedStrays(record.processes)
      yield* killTree([...record.processes, ...strays], { graceMs: 1_000 })
    }
    const idle = record.state === "active" && now - record.lastActiveAt > IDLE_SESSION_MS
    if (record.processes.length > 0 || idle) {
      yield* store.save(
        idle ? { ...record, processes: [], state: "ended", endedAt: now } : { ...record, processes: [] }
      )
    }
  }
  const liveIds: Array<SessionId> = (yield* store.list).filter((r) => r.state === "active").map((r) => r.sessionId)
  yield* (yield* Workspaces).sweep({ liveSessionIds: liveIds, idleSessionIds: [] })
  yield* (yield* EventLog).prune({ olderThanMs: LOG_RETENTION_MS })
}).pipe(
  // A start-up that cannot tidy up still serves: the next start tries again.
  Effect.catchCause((cause) => Effect.logWarning("start-up recovery failed", cause)),
  Effect.withSpan("Sessions.recoverAtStartup")
)
