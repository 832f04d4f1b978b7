/**
 * SessionStore/TurnNote — the turn note `<id>.json.turn` beside a session record: the turn state (`activeTurn`,
 * `lastActiveAt`, `lastSeq`) and the processes a save that changes nothing else writes instead of the whole record,
 * every turn's start (and the first one's, whose warm agent is new to the record). Processes belong in a note: a
 * power loss that takes the note took them too, and a Core crash finds the note at once.
 * The old note is unlinked and a new file written, with no rename and no fsync: a rename over a file, or a truncate,
 * makes ext4 flush the new data first (1–30 ms on a busy disk, on the turn's critical path, issue 15), an unlink and
 * a new file microseconds. A note names the digest of the record text it amends and applies only over that text, so
 * a note left by a crash after a newer whole record, or torn by a power loss, says nothing. What a note guarantees
 * against which crash is SessionStore's header; this module does not decide when a note will do.
 */
import { createHash } from "node:crypto"
import { existsSync, unlinkSync, writeFileSync } from "node:fs"
import { TurnId } from "@pedelec/contracts/Ids"
import { TurnKind } from "@pedelec/contracts/Session"
import { AGENT_TAG_PATTERN } from "@pedelec/providers/AgentProcess/Tag"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import type { SessionRecord } from "../SessionStore.ts"

/** A process group the session started, told apart from a later process that reuses the pid (providers' ProcessRecord). */
export const SessionProcess = Schema.Struct({
  pid: Schema.Int.check(Schema.isGreaterThan(0)),
  pgid: Schema.Int.check(Schema.isGreaterThan(0)),
  startTime: Schema.String.check(Schema.isBetweenLength(1, 64)),
  /** Absent in a record an older Core wrote, and for a process no agent of Core's started. */
  agentTag: Schema.optionalKey(Schema.String.check(Schema.isPattern(AGENT_TAG_PATTERN)))
})
export interface SessionProcess extends Schema.Schema.Type<typeof SessionProcess> {}

const TurnNote = Schema.Struct({
  /** The digest of the record text this note amends. */
  over: Schema.String.check(Schema.isBetweenLength(1, 128)),
  lastActiveAt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  lastSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  activeTurn: Schema.optionalKey(Schema.Struct({ turnId: TurnId, kind: TurnKind })),
  /** Absent in a note an older Core wrote: the record's own then stand. */
  processes: Schema.optionalKey(Schema.Array(SessionProcess))
})
type TurnNote = Schema.Schema.Type<typeof TurnNote>

const NOTE_SUFFIX = ".turn"
const FILE_MODE = 0o600
const decodeNote = Schema.decodeUnknownExit(TurnNote)

export const digestOf = (text: string): string => createHash("sha256").update(text).digest("hex")

/** What a note may not change: two records equal in it differ only in their turn state and processes. */
export const turnStateless = ({
  activeTurn: _,
  lastActiveAt: __,
  lastSeq: ___,
  processes: ____,
  ...rest
}: SessionRecord): string => JSON.stringify(rest)

const unlinkIfPresent = (file: string) => {
  try {
    unlinkSync(file)
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== "ENOENT") throw cause
  }
}

/** Writes `record`'s turn state as the note over the record text of digest `over`; any refusal is the caller's. */
export const writeNote = (recordFile: string, over: string, record: SessionRecord): Effect.Effect<void, unknown> =>
  Effect.try({
    try: () => {
      // A record removed under a running Core (a user cleaning up) must be written whole again: a note amends none.
      if (!existsSync(recordFile)) throw new Error("the record is gone")
      const note: TurnNote = {
        over,
        lastActiveAt: record.lastActiveAt,
        lastSeq: record.lastSeq,
        ...(record.activeTurn === undefined ? {} : { activeTurn: record.activeTurn }),
        processes: record.processes
      }
      // The record's turn state, never decoded whole on this path (SessionStore): what it would refuse, this does.
      const checked = decodeNote(note, { onExcessProperty: "error" })
      if (Exit.isFailure(checked)) throw new Error("the turn state is not a session record's")
      const file = `${recordFile}${NOTE_SUFFIX}`
      unlinkIfPresent(file)
      writeFileSync(file, `${JSON.stringify(note)}\n`, { flag: "wx", mode: FILE_MODE })
    },
    catch: (cause) => cause
  })

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** `record` (read from text of digest `digest`) with the turn state of the note over exactly that text, if any. */
export const withNote = Effect.fnUntraced(function* (
  fs: FileSystem.FileSystem,
  recordFile: string,
  record: SessionRecord,
  digest: string
) {
  const text = yield* fs.readFileString(`${recordFile}${NOTE_SUFFIX}`).pipe(Effect.orElseSucceed(() => undefined))
  const exit = text === undefined ? undefined : decodeNote(parsed(text), { onExcessProperty: "error" })
  if (exit === undefined || Exit.isFailure(exit) || exit.value.over !== digest) return record
  const { activeTurn: _, ...rest } = record
  const { activeTurn, lastActiveAt, lastSeq, processes } = exit.value
  return {
    ...rest,
    lastActiveAt,
    lastSeq,
    processes: processes ?? record.processes,
    ...(activeTurn === undefined ? {} : { activeTurn })
  }
})

/**
 * After a whole write of the record: its note amends an older text and no longer applies (its digest says so), and
 * is dropped so that a later write of that very text cannot revive it. A note that will not go stays inert.
 */
export const dropNote = (recordFile: string): void => {
  try {
    unlinkIfPresent(`${recordFile}${NOTE_SUFFIX}`)
  } catch {
    // Inert: its digest names a text the record no longer has.
  }
}

/** Removes the note beside `recordFile` (with the record, or a session's end). */
export const removeNote = (fs: FileSystem.FileSystem, recordFile: string) =>
  fs.remove(`${recordFile}${NOTE_SUFFIX}`, { force: true })
