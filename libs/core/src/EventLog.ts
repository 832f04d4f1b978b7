/**
 * EventLog — owns the durable per-session event log `$PEDELEC_HOME/logs/<sessionId>.jsonl` (folder 0700, files 0600,
 * one JSON event per line): appends serialized per session through one open handle each, replay of what came after
 * a `seq`, and retention. It does NOT assign `seq`, buffer recent events for fast replay or decide what a gap means
 * (SessionEvents does), and it never stores anything but the events it is given: tool arguments and results may be
 * private, which is why the log lives in the home and not in a workspace an agent can read.
 *
 * An append is one blocking `write` on the session's descriptor, on purpose: every event waits for its line before
 * it is delivered (the events published together share one write), a line is a few hundred bytes into the page
 * cache (microseconds), and a thread-pool round trip per event cost a loaded 2-core machine up to 1.5 ms, five times
 * a turn (issue 15, warm ollama turns). An append of 256 KiB or more is the exception: it goes to the thread pool,
 * because copying it stalls every socket of Core (a 3.6 MB message is three such lines, ~10 ms each to write here,
 * and the host's copy of the delta before them left Core only between them).
 */
import { closeSync, fstatSync, openSync, readSync, write, writeSync } from "node:fs"
import path from "node:path"
import { SessionEvent } from "@pedelec/contracts/Events"
import { SessionId } from "@pedelec/contracts/Ids"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { CorePaths } from "./CorePaths.ts"
import { blocking, fileError, orStorageFailure, type StorageFailure } from "./StorageFailure.ts"

/** SPEC §6: logs are kept 7 days after their last write. */
export const LOG_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

const LOG_SUFFIX = ".jsonl"
const LOG_DIR_MODE = 0o700
const LOG_FILE_MODE = 0o600
const NEWLINE = 0x0a

/** What a read found: the events after the given `seq`, and what it had to leave out. */
export interface LogScan {
  readonly events: ReadonlyArray<SessionEvent>
  /** Lines that were complete but not a valid event of this session in `seq` order. */
  readonly skipped: number
  /** The last line had no newline: a write cut short by a crash. Ignored, never counted as bad. */
  readonly tornTail: boolean
}

interface Handle {
  readonly fd: number
  readonly scope: Scope.Closeable
}

/** One per session seen; its lock keeps one writer at a time, so lines never interleave. */
interface Slot {
  readonly lock: Semaphore.Semaphore
  handle: Handle | undefined
}

const isSessionId = Schema.is(SessionId)
const decodeEvent = Schema.decodeUnknownExit(SessionEvent)
const encoder = new TextEncoder()

interface ScanState {
  rest: string
  skipped: number
  lastSeq: number
  readonly events: Array<SessionEvent>
}

/** Adds the complete lines of `text` to the scan; the part after the last newline waits for the next chunk. */
const scanChunk = (sessionId: SessionId, afterSeq: number) => (state: ScanState, text: string) => {
  const lines = (state.rest + text).split("\n")
  state.rest = lines.pop() ?? ""
  for (const line of lines) {
    if (line.trim() === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      state.skipped++
      continue
    }
    // Cheap filter first: most replays want the tail of a long log.
    const seq = typeof parsed === "object" && parsed !== null && "seq" in parsed ? parsed.seq : undefined
    if (typeof seq === "number" && seq <= afterSeq) continue
    const exit = decodeEvent(parsed)
    if (Exit.isFailure(exit) || exit.value.sessionId !== sessionId || exit.value.seq <= state.lastSeq) {
      state.skipped++
      continue
    }
    state.lastSeq = exit.value.seq
    state.events.push(exit.value)
  }
  return state
}

/** What every step works with: Core's folders, the file system, and one slot per session seen. */
interface Logs {
  readonly paths: CorePaths["Service"]
  readonly fs: FileSystem.FileSystem
  /** Handles live in children of the layer's scope: closing the layer closes every file. */
  readonly scope: Scope.Scope
  readonly slots: Map<SessionId, Slot>
}

const slotOf = (logs: Logs, sessionId: SessionId): Slot => {
  const existing = logs.slots.get(sessionId)
  if (existing !== undefined) return existing
  const slot: Slot = { lock: Semaphore.makeUnsafe(1), handle: undefined }
  logs.slots.set(sessionId, slot)
  return slot
}

const fileOf = (logs: Logs, sessionId: SessionId) => {
  // The id becomes a file name: a branded type is a promise, this is the check.
  if (!isSessionId(sessionId)) throw new Error(`not a session id: ${String(sessionId)}`)
  return path.join(logs.paths.logsDir, `${sessionId}${LOG_SUFFIX}`)
}

/** All of `bytes` at the end of the file: a write may take only part of them. */
const writeAllAt = (fd: number, bytes: Uint8Array) =>
  blocking("write", () => {
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written)
  })

/** Appends at least this long go out on the thread pool (see the header). */
const OFF_THREAD_BYTES = 256 * 1024

/**
 * `writeAllAt` on the thread pool: Core's event loop keeps its sockets moving while a large line is copied. Not
 * interruptible, as the blocking write is not: the lock and the descriptor must outlive the write in flight.
 */
const writeAllOffThread = (fd: number, bytes: Uint8Array) =>
  Effect.callback<void, PlatformError.PlatformError>((resume) => {
    const next = (from: number) =>
      write(fd, bytes, from, bytes.length - from, null, (cause, written) => {
        if (cause !== null) resume(Effect.fail(fileError("write", cause)))
        else if (from + written < bytes.length) next(from + written)
        else resume(Effect.void)
      })
    next(0)
  }).pipe(Effect.uninterruptible)

const openHandle = Effect.fnUntraced(function* (logs: Logs, sessionId: SessionId) {
  const { fs, paths } = logs
  const file = fileOf(logs, sessionId)
  yield* fs.makeDirectory(paths.logsDir, { recursive: true, mode: LOG_DIR_MODE })
  yield* fs.chmod(paths.logsDir, LOG_DIR_MODE)
  const scope = yield* Scope.fork(logs.scope)
  return yield* Effect.gen(function* () {
    const fd = yield* blocking("open", () => openSync(file, "a+", LOG_FILE_MODE))
    // A descriptor that will not close holds nothing more to lose.
    yield* Scope.addFinalizer(scope, Effect.ignore(blocking("close", () => closeSync(fd))))
    yield* fs.chmod(file, LOG_FILE_MODE)
    // After a crash the last line may be cut short: end it, or the next event would be glued onto it and lost.
    const size = yield* blocking("fstat", () => fstatSync(fd).size)
    const last = new Uint8Array(1)
    if (size > 0 && (yield* blocking("read", () => readSync(fd, last, 0, 1, size - 1))) === 1 && last[0] !== NEWLINE)
      yield* writeAllAt(fd, Uint8Array.of(NEWLINE))
    return { fd, scope }
  }).pipe(Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void)))
})

const closeSlot = (slot: Slot) =>
  Effect.suspend(() => {
    const handle = slot.handle
    slot.handle = undefined
    return handle === undefined ? Effect.void : Scope.close(handle.scope, Exit.void)
  })

// Untraced: every batch of events is appended (two per tool call), and a span would cost more than the write.
const append = Effect.fnUntraced(function* (logs: Logs, events: ReadonlyArray<SessionEvent>) {
  const sessionId = events[0]?.sessionId
  if (sessionId === undefined) return
  if (events.some((event) => event.sessionId !== sessionId)) throw new Error("one session's events per append")
  const slot = slotOf(logs, sessionId)
  const line = encoder.encode(events.map((event) => `${JSON.stringify(event)}\n`).join(""))
  yield* slot.lock.withPermits(1)(
    Effect.gen(function* () {
      slot.handle ??= yield* openHandle(logs, sessionId)
      // A full disk may have taken part of the line: the next open ends it with a newline, so nothing is glued on.
      const writeLine = line.length >= OFF_THREAD_BYTES ? writeAllOffThread : writeAllAt
      yield* writeLine(slot.handle.fd, line).pipe(Effect.tapError(() => closeSlot(slot)))
    })
  )
}, orStorageFailure("writing the event log"))

// No lock: a line being appended meanwhile has no newline yet, so it reads as a torn tail and is left out;
// the caller has that event from its buffer.
const scan = Effect.fn("EventLog.scan")(function* (logs: Logs, sessionId: SessionId, afterSeq: number) {
  const initial = (): ScanState => ({ rest: "", skipped: 0, lastSeq: afterSeq, events: [] })
  const state = yield* logs.fs.stream(fileOf(logs, sessionId)).pipe(
    Stream.decodeText(),
    Stream.runFold(initial, scanChunk(sessionId, afterSeq)),
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(initial()))
  )
  return { events: state.events, skipped: state.skipped, tornTail: state.rest.trim() !== "" }
}, orStorageFailure("reading the event log"))

const readAfter = Effect.fn("EventLog.readAfter")(function* (logs: Logs, sessionId: SessionId, afterSeq: number) {
  const result = yield* scan(logs, sessionId, afterSeq)
  if (result.skipped > 0) yield* Effect.logWarning("event log: skipped unreadable lines", sessionId, result.skipped)
  return result.events
})

const close = Effect.fn("EventLog.close")(function* (logs: Logs, sessionId: SessionId) {
  const slot = logs.slots.get(sessionId)
  if (slot !== undefined) yield* slot.lock.withPermits(1)(closeSlot(slot))
})

const removeLog = (logs: Logs, sessionId: SessionId) =>
  slotOf(logs, sessionId).lock.withPermits(1)(
    Effect.andThen(closeSlot(slotOf(logs, sessionId)), logs.fs.remove(fileOf(logs, sessionId), { force: true }))
  )

const remove = Effect.fn("EventLog.remove")(function* (logs: Logs, sessionId: SessionId) {
  yield* removeLog(logs, sessionId)
}, orStorageFailure("removing an event log"))

const prune = Effect.fn("EventLog.prune")(function* (logs: Logs, options: { readonly olderThanMs: number }) {
  const { fs, paths } = logs
  const cutoff = (yield* Clock.currentTimeMillis) - options.olderThanMs
  const names = yield* fs.readDirectory(paths.logsDir).pipe(
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed([])),
    Effect.orDie
  )
  const removed: Array<SessionId> = []
  for (const name of names.sort()) {
    const sessionId = name.endsWith(LOG_SUFFIX) ? name.slice(0, -LOG_SUFFIX.length) : ""
    if (!isSessionId(sessionId)) continue
    const info = yield* fs.stat(path.join(paths.logsDir, name)).pipe(Effect.option)
    const mtime = Option.flatMap(info, (stat) => stat.mtime)
    if (Option.isNone(mtime) || mtime.value.getTime() >= cutoff) continue
    yield* removeLog(logs, sessionId).pipe(Effect.orDie)
    removed.push(sessionId)
  }
  return removed
})

export class EventLog extends Context.Service<
  EventLog,
  {
    /**
     * One line per event, in order, for the events of one session published together: one write for all of them.
     * A disk that cannot take them is a coded failure (the caller decides what the events are worth).
     */
    readonly append: (events: ReadonlyArray<SessionEvent>) => Effect.Effect<void, StorageFailure>
    /**
     * The session's events with `seq > afterSeq`, in order; bad lines are skipped (and logged as a count). A log the
     * disk will not give back (permissions, EIO, too many open files) is a coded failure, as for a write.
     */
    readonly readAfter: (
      sessionId: SessionId,
      afterSeq: number
    ) => Effect.Effect<ReadonlyArray<SessionEvent>, StorageFailure>
    /** `readAfter` with what was left out. */
    readonly scan: (sessionId: SessionId, afterSeq: number) => Effect.Effect<LogScan, StorageFailure>
    /** Whether the session has a log (it may be empty). */
    readonly exists: (sessionId: SessionId) => Effect.Effect<boolean>
    /** Closes the session's handle; a later append opens it again. */
    readonly close: (sessionId: SessionId) => Effect.Effect<void>
    /** Deletes the session's log. Idempotent. */
    readonly remove: (sessionId: SessionId) => Effect.Effect<void, StorageFailure>
    /** Deletes every log last written more than `olderThanMs` ago; returns whose. */
    readonly prune: (options: { readonly olderThanMs: number }) => Effect.Effect<ReadonlyArray<SessionId>>
  }
>()("pedelec/core/EventLog") {
  static readonly layer = Layer.effect(
    EventLog,
    Effect.gen(function* () {
      const logs: Logs = {
        paths: yield* CorePaths,
        fs: yield* FileSystem.FileSystem,
        scope: yield* Effect.scope,
        slots: new Map()
      }
      return EventLog.of({
        append: (events) => append(logs, events),
        readAfter: (sessionId, afterSeq) => readAfter(logs, sessionId, afterSeq),
        scan: (sessionId, afterSeq) => scan(logs, sessionId, afterSeq),
        exists: (sessionId) => logs.fs.exists(fileOf(logs, sessionId)).pipe(Effect.orElseSucceed(() => false)),
        close: (sessionId) => close(logs, sessionId),
        remove: (sessionId) => remove(logs, sessionId),
        prune: (options) => prune(logs, options)
      })
    })
  )
}
