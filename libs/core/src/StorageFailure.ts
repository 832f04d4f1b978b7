/**
 * StorageFailure — what a file error of the Pedelec home means to a caller: `STORAGE_FULL` when the disk has no
 * room (ENOSPC, EDQUOT), `STORAGE_UNAVAILABLE` for any other failed write or read (read-only, permissions, I/O), in
 * words that name the operation but never a path (a page may see the error and need not learn where the home is).
 * The stores make their blocking file calls' errors `PlatformError`s here too (`fileError`, `blocking`) and map them
 * through here, so a full disk, or a file the disk will not give back (EIO,
 * EACCES, a directory where the file should be), is a coded failure and never a defect. It does NOT decide what a
 * store does after a failure (retry, fall back, give up) nor what a file's content means: each store says so itself.
 */
import { PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as PlatformError from "effect/PlatformError"

export type StorageFailure = PedelecErrorOf<"STORAGE_FULL" | "STORAGE_UNAVAILABLE">

/** errno codes that mean "no room left", whichever limit (blocks, inodes, a quota) ran out. */
const FULL = new Set(["ENOSPC", "EDQUOT"])

const WORDS: Partial<Record<string, string>> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is exhausted",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EIO: "an input/output error",
  EISDIR: "a folder is where a file should be",
  ENOTDIR: "a file is where a folder should be",
  EMFILE: "too many open files",
  ENFILE: "too many open files"
}

/** The errno code behind a platform error (Node's `err.code`), when it has one. */
const errnoOf = (error: PlatformError.PlatformError): string | undefined => {
  const cause: unknown = error.reason.cause
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return undefined
  return typeof cause.code === "string" ? cause.code : undefined
}

/** The coded failure for a file error met while doing `what` (e.g. "writing a session record"). */
export const storageFailure = (error: PlatformError.PlatformError, what: string): StorageFailure => {
  const errno = errnoOf(error)
  const { reason } = error
  const syscall = reason._tag === "BadArgument" ? undefined : reason.syscall
  const words = (errno === undefined ? undefined : WORDS[errno]) ?? `${reason._tag} (${syscall ?? "io"})`
  const details = { reason: `${words} while ${what}`, ...(errno === undefined ? {} : { errno }) }
  return errno !== undefined && FULL.has(errno)
    ? PedelecError.fromCode("STORAGE_FULL", "core", { details })
    : PedelecError.fromCode("STORAGE_UNAVAILABLE", "core", { details })
}

/** Maps an effect's `PlatformError`s to their coded failure; other failures pass through. */
export const orStorageFailure =
  (what: string) =>
  <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, PlatformError.PlatformError> | StorageFailure, R> =>
    Effect.mapError(effect, (error) =>
      PlatformError.isPlatformError(error)
        ? storageFailure(error, what)
        : (error as Exclude<E, PlatformError.PlatformError>)
    )

/**
 * A read of a file that may not exist yet: `undefined` when it is missing (the caller's default applies), every
 * other file error its coded failure while doing `what`.
 */
export const readIfPresent =
  (what: string) =>
  <A, R>(effect: Effect.Effect<A, PlatformError.PlatformError, R>): Effect.Effect<A | undefined, StorageFailure, R> =>
    effect.pipe(
      Effect.map((value): A | undefined => value),
      Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined)),
      orStorageFailure(what)
    )

/**
 * A failed file call as the PlatformError the stores map: its errno kept (a full disk is STORAGE_FULL), ENOENT
 * NotFound.
 */
export const fileError = (method: string, cause: unknown): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: (cause as { code?: unknown }).code === "ENOENT" ? "NotFound" : "Unknown",
    module: "FileSystem",
    method,
    cause
  })

/** A blocking file call (node:fs `*Sync`) whose error is `fileError`: for the stores' measured hot paths. */
export const blocking = <A>(method: string, call: () => A): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.try({ try: call, catch: (cause) => fileError(method, cause) })

/** Whether a failure is one of this module's: the disk, not the caller. */
export const isStorageFailure = (error: unknown): error is StorageFailure =>
  error instanceof PedelecError && (error.code === "STORAGE_FULL" || error.code === "STORAGE_UNAVAILABLE")
