/**
 * ProcessRecords — keeps each session file's list of the processes its turn runs (the agent CLI, its shell,
 * pedelec-cli, a setsid grandchild) current, which is all a start-up after a crash can reap by. One fiber looks at
 * every session with a running turn every RECORD_INTERVAL_MS and saves a record only when its processes changed;
 * with no turn running, nothing runs. It does not find the processes (the provider's AgentProcess/Watch does, from
 * one scan of the process table for all of them) nor kill anything (Sessions/End, and the start-up reaper).
 *
 * Why one loop and not one per session: a loop per running turn cost a fiber and a timer each (issue 15: no
 * per-session polling), and the comparison is in memory, so one pass over all running turns is cheap.
 */
import type { ProcessRecord } from "@pedelec/providers/Provider"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RcRef from "effect/RcRef"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { type Session, updateRecord } from "./Session.ts"
import { SessionStore } from "./SessionStore.ts"
import type { StorageFailure } from "./StorageFailure.ts"

/** How stale a crashed Core's knowledge of a turn's processes may be: a process started since is not reaped. */
const RECORD_INTERVAL_MS = 250

/** A session's process list as one comparable string: pid and start time name a process for good. */
const signatureOf = (processes: ReadonlyArray<ProcessRecord>) =>
  processes.map((p) => `${p.pid}:${p.startTime}`).join(",")

export class ProcessRecords extends Context.Service<
  ProcessRecords,
  {
    /** Writes the session's live processes to its file now. */
    readonly record: (session: Session) => Effect.Effect<void, StorageFailure>
    /** Keeps them written while the caller's scope (the running turn) lasts. */
    readonly track: (session: Session) => Effect.Effect<void, never, Scope.Scope>
  }
>()("pedelec/core/ProcessRecords") {
  static readonly layer = Layer.effect(
    ProcessRecords,
    Effect.gen(function* () {
      const store = yield* SessionStore
      /** Each running turn's session, with the signature last written for it. */
      const tracked = new Map<Session, string>()

      const processesOf = (session: Session): Effect.Effect<ReadonlyArray<ProcessRecord>> =>
        Effect.flatMap(Ref.get(session.process), (process) => (process ? process.processes : Effect.succeed([])))

      const write = Effect.fnUntraced(function* (session: Session, processes: ReadonlyArray<ProcessRecord>) {
        const now = yield* Clock.currentTimeMillis
        const record = yield* updateRecord(session, (record) => ({
          ...record,
          processes: [...processes],
          lastActiveAt: now
        }))
        yield* store.save(record)
      })

      const record = Effect.fn("ProcessRecords.record")(function* (session: Session) {
        const processes = yield* processesOf(session)
        if (tracked.has(session)) tracked.set(session, signatureOf(processes))
        yield* write(session, processes)
      })

      // A save that fails (a full disk) is tried again on the next pass: the signature is kept only once written.
      // Suspended: the sessions are read at each pass, not once when the loop is built.
      const pass = Effect.suspend(() =>
        Effect.forEach(
          [...tracked.keys()],
          (session) =>
            Effect.gen(function* () {
              const processes = yield* processesOf(session)
              const signature = signatureOf(processes)
              if (signature === tracked.get(session)) return
              yield* write(session, processes)
              if (tracked.has(session)) tracked.set(session, signature)
            }).pipe(Effect.ignore),
          { discard: true }
        )
      )
      const sweeping = Effect.forever(Effect.andThen(Effect.sleep(RECORD_INTERVAL_MS), pass), { disableYield: true })
      const sweeper = yield* RcRef.make({ acquire: Effect.asVoid(Effect.forkScoped(sweeping)) })

      // What was last written is the record's own list (the turn's start wrote it): no look at the processes on the
      // way to the turn's prompt, and one that changed since that write is written by the next pass.
      const track = (session: Session) =>
        Effect.gen(function* () {
          yield* RcRef.get(sweeper)
          yield* Effect.acquireRelease(
            Effect.flatMap(Ref.get(session.record), (record) =>
              Effect.sync(() => void tracked.set(session, signatureOf(record.processes)))
            ),
            () => Effect.sync(() => void tracked.delete(session))
          )
        })

      return ProcessRecords.of({ record, track })
    })
  )
}
