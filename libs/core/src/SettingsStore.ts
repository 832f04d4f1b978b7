/**
 * SettingsStore — owns `settings.json` (0644) and `secrets.json` (0600) of one Pedelec home: reads them through the
 * contracts schemas on every call, writes them atomically (temp file in the same directory, fsync, rename, fsync of the
 * folder) after validating, and hands out `PublicSettings`, where each secret is only a `secretsSet` flag. A file the
 * disk will not give back (EIO, EACCES) is `STORAGE_UNAVAILABLE`; a half-written one is `SETTINGS_INVALID`. It does NOT
 * resolve effort profiles or check them against a provider's allow-list (adapters do), and it never resets a bad file:
 * an invalid one is reported as `SETTINGS_INVALID` until the user fixes it. Its read and write steps are shared with
 * the other user-owned document of the home, the site policies (SitePolicies).
 */
import { randomBytes } from "node:crypto"
import { closeSync, fchmodSync, fsync, openSync, renameSync, statSync, writeSync } from "node:fs"
import path from "node:path"
import { ERROR_CATALOG } from "@pedelec/contracts/catalog/full"
import { issuesOfExit, jsonDepthExceeded, type PointedIssue } from "@pedelec/contracts/JsonPointer"
import { formatMessage, PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import { DEFAULT_SETTINGS, type PublicSettings, type SecretName, Secrets, Settings } from "@pedelec/contracts/Settings"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { CorePaths } from "./CorePaths.ts"
import { blocking, fileError, orStorageFailure, readIfPresent, type StorageFailure } from "./StorageFailure.ts"

/** Both files are tiny; anything larger is not ours and is not worth parsing. */
const MAX_FILE_BYTES = 1024 * 1024
const SETTINGS_MODE = 0o644
const SECRETS_MODE = 0o600
const HOME_MODE = 0o700

const strict = { onExcessProperty: "error" } as const

/** fsync on the thread pool: a busy disk may take tens of milliseconds, and Core's other sessions do not wait. */
const fsyncOnPool = (fd: number) =>
  Effect.callback<void, PlatformError.PlatformError>((resume) => {
    fsync(fd, (cause) => resume(cause === null ? Effect.void : Effect.fail(fileError("fsync", cause))))
  })

export interface AtomicWriteOptions {
  /**
   * Also fsync the folder, so the rename itself survives a power loss: for a file that is new (without it a power
   * loss may leave no file at all) or whose last state must never roll back. Without it a power loss may leave the
   * previous whole version. Default: true.
   */
  readonly syncDirectory?: boolean
}

/**
 * Writes `text` to `file` so that a reader sees either the old or the new content, never a mix, whatever crashes
 * (Core or the machine): the new content is fsynced before the rename makes it visible. A crash leaves at worst a
 * stray `<file>.<random>.tmp`, which no reader looks at. The open, write and rename are blocking calls (microseconds
 * into the page cache; a thread-pool round trip each cost a loaded 2-core box ~1 ms, ten of them a save, issue 15);
 * only the fsyncs wait on the pool. Shared with SessionStore and the runtime file.
 */
export const writeFileAtomic = Effect.fnUntraced(function* (
  fs: FileSystem.FileSystem,
  file: string,
  text: string,
  mode: number,
  options: AtomicWriteOptions = {}
) {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`
  // `wx`: never follow or reuse something planted under the temp name.
  const fd = yield* blocking("open", () => openSync(temp, "wx", mode))
  const bytes = Buffer.from(text)
  const write = Effect.gen(function* () {
    yield* blocking("write", () => {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written)
    })
    // The open mode is filtered by the umask; fchmod makes the permission exact.
    yield* blocking("fchmod", () => fchmodSync(fd, mode))
    yield* fsyncOnPool(fd)
  }).pipe(Effect.ensuring(Effect.ignore(blocking("close", () => closeSync(fd)))))
  yield* write.pipe(
    Effect.andThen(blocking("rename", () => renameSync(temp, file))),
    Effect.onError(() => Effect.ignore(fs.remove(temp, { force: true })))
  )
  if (options.syncDirectory === false) return
  // Not every platform can open a directory, and then the rename is what we have.
  yield* Effect.ignore(
    Effect.flatMap(
      blocking("open", () => openSync(path.dirname(file), "r")),
      (dir) => fsyncOnPool(dir).pipe(Effect.ensuring(Effect.ignore(blocking("close", () => closeSync(dir)))))
    )
  )
})

// A redactor rewrites an error text so that nothing read from a secrets file survives in it. Deliberately no type
// alias for it: the boundary check reads any alias followed later in the file by a quoted code as a redefinition.
const noRedaction = (text: string): string => text

const invalid = (file: string, issue: PointedIssue, redact: typeof noRedaction): PedelecErrorOf<"SETTINGS_INVALID"> => {
  const reason = redact(issue.reason)
  const where = issue.pointer === "" ? file : `${file} at ${issue.pointer}`
  return PedelecError.fromCode("SETTINGS_INVALID", "core", {
    details: { file, pointer: issue.pointer, reason },
    message: formatMessage(ERROR_CATALOG.SETTINGS_INVALID.message, { reason: `${where}: ${reason}` })
  })
}

// The engine's JSON errors quote the text around the fault, which for secrets.json is the secret: keep the position.
const parseFailure = (error: unknown): PointedIssue => {
  const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined
  return { pointer: "", reason: position === undefined ? "not valid JSON" : `not valid JSON (at position ${position})` }
}

const stringLeaves = (value: unknown): Array<string> => {
  if (typeof value === "string") return [value]
  if (typeof value !== "object" || value === null) return []
  return Object.values(value).flatMap(stringLeaves)
}

/** Schema reasons name what was expected, not what was found; redacting every string of the file keeps it so. */
const redactorFor = (parsed: unknown): typeof noRedaction => {
  const values = stringLeaves(parsed).filter((value) => value.length > 0)
  return (text) => values.reduce((out, value) => out.replaceAll(value, "(hidden)"), text)
}

const validate = <A>(
  file: string,
  schema: Schema.Decoder<A>,
  value: unknown,
  redact: typeof noRedaction
): Effect.Effect<A, PedelecErrorOf<"SETTINGS_INVALID">> => {
  const exit = Schema.decodeUnknownExit(schema)(value, strict)
  if (Exit.isSuccess(exit)) return Effect.succeed(exit.value)
  const first = issuesOfExit(exit)[0] ?? { pointer: "", reason: "invalid" }
  return Effect.fail(invalid(file, first, redact))
}

/** What every step works with: the home's files, the file system, and the one-writer-at-a-time lock. */
export interface Home {
  readonly paths: CorePaths["Service"]
  readonly fs: FileSystem.FileSystem
  /** setSecret is a read-modify-write of secrets.json. */
  readonly writes: Semaphore.Semaphore
}

/** One JSON document of the home through its schema (`fallback` when missing); shared with SitePolicies. */
export const readDocument = Effect.fnUntraced(function* <A>(
  { fs }: Home,
  file: string,
  schema: Schema.Decoder<A>,
  fallback: A,
  sensitive: boolean
) {
  const name = path.basename(file)
  const text = yield* fs.readFileString(file).pipe(readIfPresent(`reading ${name}`))
  if (text === undefined) return fallback
  if (Buffer.byteLength(text) > MAX_FILE_BYTES)
    return yield* Effect.fail(invalid(name, { pointer: "", reason: "larger than 1 MiB" }, noRedaction))
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return yield* Effect.fail(invalid(name, parseFailure(error), noRedaction))
  }
  const redact = sensitive ? redactorFor(parsed) : noRedaction
  const deep = jsonDepthExceeded(parsed)
  if (deep !== undefined)
    return yield* Effect.fail(invalid(name, { pointer: deep, reason: "nested too deeply" }, redact))
  return yield* validate(name, schema, parsed, redact)
})

const readSettings = (home: Home) => readDocument(home, home.paths.settingsFile, Settings, DEFAULT_SETTINGS, false)
const readSecrets = (home: Home) => readDocument(home, home.paths.secretsFile, Secrets, {}, true)

const publicView = (settings: Settings, secrets: Secrets): PublicSettings => ({
  ...settings,
  secretsSet: { ollamaApiKey: secrets.ollamaApiKey !== undefined }
})

/** Writes a validated document atomically, the home created private if new; shared with SitePolicies. */
export const writeDocument = Effect.fnUntraced(function* (
  { fs, paths }: Home,
  file: string,
  value: unknown,
  mode: number
) {
  // The home may be new; created private because secrets.json and the session logs live in it.
  yield* fs.makeDirectory(paths.home, { recursive: true, mode: HOME_MODE }).pipe(orStorageFailure("writing settings"))
  yield* writeFileAtomic(fs, file, `${JSON.stringify(value, null, 2)}\n`, mode).pipe(
    orStorageFailure("writing settings")
  )
})

const get = Effect.fn("SettingsStore.get")(function* (home: Home) {
  return publicView(yield* readSettings(home), yield* readSecrets(home))
})

const getSecrets = Effect.fn("SettingsStore.getSecrets")(function* (home: Home) {
  return yield* readSecrets(home)
})

/**
 * Which secrets.json is on disk, from one blocking stat (microseconds, where a read is several thread-pool round
 * trips): device, inode, size and change time, so any write (ours replace the file, a hand edit changes its ctime)
 * gives a new version.
 */
const secretsVersion = (home: Home) =>
  Effect.sync(() => {
    try {
      const info = statSync(home.paths.secretsFile, { bigint: true })
      return `${info.dev}:${info.ino}:${info.size}:${info.ctimeNs}:${info.mtimeNs}`
    } catch (cause) {
      return (cause as { code?: unknown }).code === "ENOENT" ? "absent" : "unreadable"
    }
  })

/** Validates and writes a whole settings document; the caller holds the writers' lock. */
const store = Effect.fnUntraced(function* (home: Home, settings: Settings) {
  const valid = yield* validate(path.basename(home.paths.settingsFile), Settings, settings, noRedaction)
  // Read secrets first: a broken secrets.json fails the call before anything is written.
  const secrets = yield* readSecrets(home)
  yield* writeDocument(home, home.paths.settingsFile, valid, SETTINGS_MODE)
  return publicView(valid, secrets)
})

const set = Effect.fn("SettingsStore.set")(store, (effect, home) => home.writes.withPermits(1)(effect))

const update = Effect.fn("SettingsStore.update")(
  function* (home: Home, change: (current: Settings) => Settings) {
    return yield* store(home, change(yield* readSettings(home)))
  },
  (effect, home) => home.writes.withPermits(1)(effect)
)

const setSecret = Effect.fn("SettingsStore.setSecret")(
  function* (home: Home, name: SecretName, value: string | null) {
    const current = yield* readSecrets(home)
    const others = Object.fromEntries(Object.entries(current).filter(([key]) => key !== name))
    const next: unknown = value === null ? others : { ...others, [name]: value }
    const redact = value === null ? noRedaction : redactorFor(value)
    const secrets = yield* validate(path.basename(home.paths.secretsFile), Secrets, next, redact)
    const settings = yield* readSettings(home)
    yield* writeDocument(home, home.paths.secretsFile, secrets, SECRETS_MODE)
    return publicView(settings, secrets)
  },
  (effect, home) => home.writes.withPermits(1)(effect)
)

export class SettingsStore extends Context.Service<
  SettingsStore,
  {
    /** What may leave Core: settings plus which secrets are set. An unreadable file is a StorageFailure. */
    readonly get: Effect.Effect<PublicSettings, PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure>
    /** Core-internal: never put the result in an event, a log line, an error or argv. */
    readonly getSecrets: Effect.Effect<Secrets, PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure>
    /** Changes whenever secrets.json does ("absent" while there is none): a reader skips `getSecrets` until then. */
    readonly secretsVersion: Effect.Effect<string>
    /** A disk that cannot take the write is `STORAGE_FULL` / `STORAGE_UNAVAILABLE`, the old file left whole. */
    readonly set: (
      settings: Settings
    ) => Effect.Effect<PublicSettings, PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure>
    /** A read-modify-write of settings.json under the writers' lock, so no concurrent write is lost. */
    readonly update: (
      change: (current: Settings) => Settings
    ) => Effect.Effect<PublicSettings, PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure>
    /** `null` removes the secret. */
    readonly setSecret: (
      name: SecretName,
      value: string | null
    ) => Effect.Effect<PublicSettings, PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure>
  }
>()("pedelec/core/SettingsStore") {
  static readonly layer = Layer.effect(
    SettingsStore,
    Effect.gen(function* () {
      const home: Home = { paths: yield* CorePaths, fs: yield* FileSystem.FileSystem, writes: yield* Semaphore.make(1) }
      return SettingsStore.of({
        get: get(home),
        getSecrets: getSecrets(home),
        secretsVersion: secretsVersion(home),
        set: (settings) => set(home, settings),
        update: (change) => update(home, change),
        setSecret: (name, value) => setSecret(home, name, value)
      })
    })
  )
}
