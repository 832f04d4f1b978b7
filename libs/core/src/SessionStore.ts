/**
 * SessionStore — owns the session records `$PEDELEC_HOME/sessions/<sessionId>.json` (folder 0700, files 0600,
 * written atomically), so `resumeSession` works after a Core restart and the start-up sweep and reaper know what
 * ran. It does NOT hold live state (Sessions does), decide what a record's fields mean, or keep any secret: the
 * session capability is minted fresh per Core launch and never written. A record that is not one is moved aside as
 * `<id>.json.corrupt` and treated as unknown; one the disk will not read (EIO) is a coded failure and left in place;
 * either way one bad file never blocks the others. A write the disk refuses is a coded failure (StorageFailure) and
 * leaves the previous record whole; an ended record that cannot be written is removed instead, so an ended session
 * never comes back.
 *
 * What a save guarantees: once it returns, a Core crash finds the new record; whatever crashes (Core or the
 * machine), a record is never torn (its content is fsynced before the rename). The folder is fsynced only where a
 * power loss must not undo the rename: a record's first write by this Core (else it could vanish) and an ended one
 * (else it could come back). The folder is made once, and again only when it has gone.
 *
 * A save that changes only the turn state (`activeTurn`, `lastActiveAt`, `lastSeq`: every turn's start) and the
 * processes leaves the record alone and writes its turn note instead (SessionStore/TurnNote: microseconds, no rename,
 * no fsync). A Core crash finds the note at once; a power loss may lose or tear it, and the record then reads as it
 * was before that turn, which the event log (never fsynced either) matches, with processes a power loss ended anyway.
 */
import path from "node:path"
import { Origin, SessionId, TurnId } from "@pedelec/contracts/Ids"
import { jsonDepthExceeded } from "@pedelec/contracts/JsonPointer"
import { PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import { EffortLevel, EffortProfile, ModelName, ProviderCode } from "@pedelec/contracts/Provider"
import { TurnKind, WorkspaceInfo } from "@pedelec/contracts/Session"
import { Skills } from "@pedelec/contracts/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { CorePaths } from "./CorePaths.ts"
import {
  digestOf,
  dropNote,
  removeNote,
  SessionProcess,
  turnStateless,
  withNote,
  writeNote
} from "./SessionStore/TurnNote.ts"
import { writeFileAtomic } from "./SettingsStore.ts"
import { orStorageFailure, readIfPresent, type StorageFailure } from "./StorageFailure.ts"

const Millis = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Core-private: what survives a Core restart. Never a capability, key or other secret. */
export const SessionRecord = Schema.Struct({
  sessionId: SessionId,
  origin: Origin,
  provider: ProviderCode,
  model: Schema.NullOr(ModelName),
  effortLevel: EffortLevel,
  /** Snapshot taken at creation: later settings edits do not change a live session. */
  effortProfile: EffortProfile,
  workspace: WorkspaceInfo,
  autoEndOnDisconnect: Schema.Boolean,
  skills: Schema.optionalKey(Skills),
  createdAt: Millis,
  lastActiveAt: Millis,
  state: Schema.Literals(["active", "ended"]),
  endedAt: Schema.optionalKey(Millis),
  /** The provider's own conversation id, for resuming it. */
  providerSessionId: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 1024))),
  /** Whether the current provider session already got the runtime rules and tool index. */
  promptInjected: Schema.Boolean,
  lastSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  /** Process groups to reap at start-up if Core crashed while they ran. */
  processes: Schema.Array(SessionProcess),
  /** The turn running when this was written: a Core that crashed mid-turn completes it as failed at restart. */
  activeTurn: Schema.optionalKey(Schema.Struct({ turnId: TurnId, kind: TurnKind }))
})
export interface SessionRecord extends Schema.Schema.Type<typeof SessionRecord> {}

const RECORD_SUFFIX = ".json"
const DIR_MODE = 0o700
const FILE_MODE = 0o600
/** Records carry skills (≤ 128 tools with their schemas); anything far larger is not one of ours. */
const MAX_RECORD_BYTES = 32 * 1024 * 1024

const isSessionId = Schema.is(SessionId)
const strict = { onExcessProperty: "error" } as const
const decodeRecord = Schema.decodeUnknownExit(SessionRecord)

const notFound = (sessionId: SessionId): PedelecErrorOf<"SESSION_NOT_FOUND"> =>
  PedelecError.fromCode("SESSION_NOT_FOUND", "core", { details: { sessionId } })

/** The record in `text`, or undefined when it is not one (bad JSON, too deep, wrong shape, another session's). */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const parseRecord = (sessionId: SessionId, text: string): SessionRecord | undefined => {
  if (text.length > MAX_RECORD_BYTES) return undefined
  const parsed = parseJson(text)
  if (parsed === undefined || jsonDepthExceeded(parsed) !== undefined) return undefined
  const exit = decodeRecord(parsed, strict)
  return Exit.isSuccess(exit) && exit.value.sessionId === sessionId ? exit.value : undefined
}

/** What every step works with: Core's folders, the file system, and one lock per session seen. */
interface Records {
  readonly paths: CorePaths["Service"]
  readonly fs: FileSystem.FileSystem
  readonly locks: Map<SessionId, Semaphore.Semaphore>
  /**
   * The record on disk of each session read from the folder or written by this Core with its folder's fsync (so its
   * directory entry is durable): its digest, and what a turn note may not change.
   */
  readonly onDisk: Map<SessionId, { readonly digest: string; readonly rest: string }>
  folderMade: boolean
}

// Every write of one session holds its lock, so an update never loses a concurrent save or update.
const locked = (records: Records, sessionId: SessionId) => {
  let lock = records.locks.get(sessionId)
  if (lock === undefined) {
    lock = Semaphore.makeUnsafe(1)
    records.locks.set(sessionId, lock)
  }
  return lock.withPermits(1)
}

const fileOf = (records: Records, sessionId: SessionId) => {
  // The id becomes a file name: a branded type is a promise, this is the check.
  if (!isSessionId(sessionId)) throw new Error(`not a session id: ${String(sessionId)}`)
  return path.join(records.paths.sessionsDir, `${sessionId}${RECORD_SUFFIX}`)
}

const makeFolder = Effect.fnUntraced(function* ({ fs, paths }: Records) {
  yield* fs.makeDirectory(paths.sessionsDir, { recursive: true, mode: DIR_MODE })
  yield* fs.chmod(paths.sessionsDir, DIR_MODE)
})

/**
 * `given` is the record as the caller holds it, `valid` its decoded copy (the schema's key order): what a note may
 * not change is remembered in the caller's order, which its next save keeps (a spread), and a field added after the
 * record was made (`providerSessionId`, a warm agent's first turn) does not make every later turn a whole write.
 */
const writeRecord = Effect.fnUntraced(function* (records: Records, valid: SessionRecord, given: SessionRecord) {
  const { sessionId } = valid
  const text = `${JSON.stringify(valid)}\n`
  const atomic = (syncDirectory: boolean) =>
    writeFileAtomic(records.fs, fileOf(records, sessionId), text, FILE_MODE, { syncDirectory })
  yield* Effect.gen(function* () {
    if (!records.folderMade) yield* makeFolder(records)
    records.folderMade = true
    yield* atomic(!records.onDisk.has(sessionId) || valid.state === "ended").pipe(
      // Removed under a running Core (a user cleaning up): made again, as a save before this one would have, and
      // the record is new to the new folder.
      Effect.catchReason("PlatformError", "NotFound", () => Effect.andThen(makeFolder(records), atomic(true)))
    )
  }).pipe(orStorageFailure("writing a session record"))
  records.onDisk.set(sessionId, { digest: digestOf(text), rest: turnStateless(given) })
  dropNote(fileOf(records, sessionId))
})

const write = Effect.fnUntraced(function* (records: Records, record: SessionRecord) {
  const onDisk = records.onDisk.get(record.sessionId)
  // Everything but the turn state equals a text decoded before it was written: the note's own schema checks the
  // rest, and the record is not decoded whole again (0.5 ms of a turn's start with a page's tools in it).
  if (onDisk !== undefined && record.state === "active" && onDisk.rest === turnStateless(record)) {
    // A note the disk refuses (or the note's schema) is no failure yet: the whole record is written instead, and
    // reports its own.
    const noted = yield* writeNote(fileOf(records, record.sessionId), onDisk.digest, record).pipe(
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    )
    if (noted) return
  }
  const valid = yield* Schema.decodeUnknownEffect(SessionRecord)(record, strict).pipe(Effect.orDie)
  yield* writeRecord(records, valid, record)
})

const read = Effect.fnUntraced(function* (records: Records, sessionId: SessionId) {
  const { fs } = records
  const file = fileOf(records, sessionId)
  // A record the disk will not give back (EIO) is left where it is: it may read fine once the disk recovers.
  const text = yield* fs.readFileString(file).pipe(readIfPresent("reading a session record"))
  if (text === undefined) return yield* Effect.fail(notFound(sessionId))
  const record = parseRecord(sessionId, text)
  if (record !== undefined) {
    const digest = digestOf(text)
    records.onDisk.set(sessionId, { digest, rest: turnStateless(record) })
    return yield* withNote(fs, file, record, digest)
  }
  // Kept for a human to inspect, out of the way of list() and the next save.
  yield* fs.rename(file, `${file}.corrupt`).pipe(Effect.ignore)
  return yield* Effect.fail(notFound(sessionId))
})

const save = Effect.fn("SessionStore.save")(function* (records: Records, record: SessionRecord) {
  yield* locked(records, record.sessionId)(write(records, record))
})

const removeFile = (records: Records, sessionId: SessionId) =>
  records.fs.remove(fileOf(records, sessionId), { force: true }).pipe(
    Effect.andThen(removeNote(records.fs, fileOf(records, sessionId))),
    Effect.tap(() => Effect.sync(() => records.onDisk.delete(sessionId))),
    orStorageFailure("removing a session record")
  )

// An atomic write needs room for a whole new copy; an unlink needs none and frees the old one. A session without
// a record cannot be resumed either, so on a full disk the removal is what keeps the end's promise.
const saveEnded = Effect.fn("SessionStore.saveEnded")(function* (records: Records, record: SessionRecord) {
  if (record.state !== "ended") return yield* Effect.die(new Error("saveEnded of a record that is not ended"))
  yield* locked(
    records,
    record.sessionId
  )(
    write(records, record).pipe(
      Effect.catch((failure) =>
        Effect.logWarning("session record: the ended state could not be written, removing the record", failure).pipe(
          Effect.andThen(removeFile(records, record.sessionId))
        )
      )
    )
  )
})

const load = Effect.fn("SessionStore.load")(function* (records: Records, sessionId: SessionId) {
  return yield* locked(records, sessionId)(read(records, sessionId))
})

const list = Effect.fn("SessionStore.list")(function* (records: Records) {
  const names = yield* records.fs.readDirectory(records.paths.sessionsDir).pipe(
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed([])),
    Effect.orDie
  )
  // Only `<id>.json`: temp files of an interrupted write and `.corrupt` files are not records.
  const ids = names
    .filter((name) => name.endsWith(RECORD_SUFFIX))
    .map((name) => name.slice(0, -RECORD_SUFFIX.length))
    .filter(isSessionId)
    .sort()
  const found = yield* Effect.forEach(ids, (sessionId) => Effect.option(load(records, sessionId)), { concurrency: 8 })
  return found.flatMap((record) => (record._tag === "Some" ? [record.value] : []))
})

const update = Effect.fn("SessionStore.update")(function* (
  records: Records,
  sessionId: SessionId,
  f: (record: SessionRecord) => SessionRecord
) {
  return yield* locked(
    records,
    sessionId
  )(
    Effect.gen(function* () {
      const next = f(yield* read(records, sessionId))
      if (next.sessionId !== sessionId) return yield* Effect.die(new Error("update changed the session id"))
      yield* write(records, next)
      return next
    })
  )
})

const remove = Effect.fn("SessionStore.remove")(function* (records: Records, sessionId: SessionId) {
  yield* locked(records, sessionId)(removeFile(records, sessionId))
})

export class SessionStore extends Context.Service<
  SessionStore,
  {
    /**
     * Writes the whole record; a disk that cannot take it is `STORAGE_FULL` / `STORAGE_UNAVAILABLE` (the old record
     * stays whole). Dies on a record that does not decode: Core built it, so that is a bug.
     */
    readonly save: (record: SessionRecord) => Effect.Effect<void, StorageFailure>
    /**
     * Writes an ended record, or, when the disk cannot take it, removes the record: either way the session can
     * never be resumed. Fails only when even the removal fails.
     */
    readonly saveEnded: (record: SessionRecord) => Effect.Effect<void, StorageFailure>
    /** Missing or not a record (then moved aside) → `SESSION_NOT_FOUND`; a read the disk refuses → StorageFailure. */
    readonly load: (
      sessionId: SessionId
    ) => Effect.Effect<SessionRecord, PedelecErrorOf<"SESSION_NOT_FOUND"> | StorageFailure>
    /** Every readable record, in id order; unreadable ones are moved aside. */
    readonly list: Effect.Effect<ReadonlyArray<SessionRecord>>
    /** Read-modify-write, one at a time per session; returns what was written. */
    readonly update: (
      sessionId: SessionId,
      f: (record: SessionRecord) => SessionRecord
    ) => Effect.Effect<SessionRecord, PedelecErrorOf<"SESSION_NOT_FOUND"> | StorageFailure>
    /** Idempotent. */
    readonly remove: (sessionId: SessionId) => Effect.Effect<void, StorageFailure>
  }
>()("pedelec/core/SessionStore") {
  static readonly layer = Layer.effect(
    SessionStore,
    Effect.gen(function* () {
      const records: Records = {
        paths: yield* CorePaths,
        fs: yield* FileSystem.FileSystem,
        locks: new Map(),
        onDisk: new Map(),
        folderMade: false
      }
      return SessionStore.of({
        save: (record) => save(records, record),
        saveEnded: (record) => saveEnded(records, record),
        load: (sessionId) => load(records, sessionId),
        list: list(records),
        update: (sessionId, f) => update(records, sessionId, f),
        remove: (sessionId) => remove(records, sessionId)
      })
    })
  )
}
