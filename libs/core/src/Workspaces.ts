/**
 * Workspaces — owns where agents work: managed workspaces (`$PEDELEC_HOME/workspaces/<sessionId>`, created 0700,
 * deleted at end and by the start-up sweep) and the rules an explicit `workspace.path` must pass (SPEC §6), plus the
 * `.pedelec-runtime/{assets,logs,skills,tmp}/` folders Core adds to either kind. It does NOT decide whether an origin
 * was granted a path (the extension's second grant, SPEC §12) nor which sessions are live (SessionStore's records
 * are the sweep's input), and it never writes, moves or deletes anything of an explicit workspace outside
 * `.pedelec-runtime/`. The textual rules are Workspaces/PathRules'.
 */
import os from "node:os"
import path from "node:path"
import { SessionId } from "@pedelec/contracts/Ids"
import { PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import type { WorkspaceInfo } from "@pedelec/contracts/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import { CorePaths } from "./CorePaths.ts"
import { orStorageFailure, type StorageFailure, storageFailure } from "./StorageFailure.ts"
import { type PathContext, pathRuleViolation, type RuleViolation } from "./Workspaces/PathRules.ts"

export const RUNTIME_DIR = ".pedelec-runtime"
export const RUNTIME_SUBDIRS = ["assets", "logs", "skills", "tmp"] as const
const PRIVATE_DIR = 0o700

const isSessionId = Schema.is(SessionId)

const pathInvalid = (candidate: string, violation: RuleViolation): PedelecErrorOf<"WORKSPACE_PATH_INVALID"> =>
  PedelecError.fromCode("WORKSPACE_PATH_INVALID", "core", {
    details: { path: candidate, rule: violation.rule, reason: violation.reason }
  })

const createFailed = (reason: string): PedelecErrorOf<"WORKSPACE_CREATE_FAILED"> =>
  PedelecError.fromCode("WORKSPACE_CREATE_FAILED", "core", { details: { reason } })

const FAILURE_WORDS: Partial<Record<string, string>> = {
  NotFound: "a parent folder is missing",
  PermissionDenied: "permission denied",
  AlreadyExists: "something else already has that name",
  BadResource: "a part of the path is not a folder",
  Busy: "the folder is busy"
}

/** In words, without the path: the page sees this error and need not learn where the Pedelec home is. */
const describeFailure = (error: PlatformError.PlatformError): string => {
  const { reason } = error
  if (reason._tag === "BadArgument") return "invalid argument"
  const words = FAILURE_WORDS[reason._tag] ?? "input/output error"
  return reason.syscall === undefined ? words : `${words} (${reason.syscall})`
}

/** What every step works with: Core's folders and the file system. */
interface Disk {
  readonly paths: CorePaths["Service"]
  readonly fs: FileSystem.FileSystem
}

const realOrSelf = (disk: Disk, target: string) => disk.fs.realPath(target).pipe(Effect.orElseSucceed(() => target))

/** mkdir that tolerates an existing real directory and refuses anything else, symlinks above all. */
const ensureDirectory = Effect.fnUntraced(function* ({ fs }: Disk, dir: string) {
  yield* fs
    .makeDirectory(dir, { mode: PRIVATE_DIR })
    .pipe(Effect.catchReason("PlatformError", "AlreadyExists", () => Effect.void))
  const info = yield* fs.lstat(dir)
  return info.type === "Directory"
})

/** The runtime folders of `root`; the first one that is not a directory, if any. */
const ensureRuntime = Effect.fnUntraced(function* (disk: Disk, root: string) {
  for (const dir of [RUNTIME_DIR, ...RUNTIME_SUBDIRS.map((sub) => path.join(RUNTIME_DIR, sub))]) {
    if (!(yield* ensureDirectory(disk, path.join(root, dir)))) return dir
  }
  return undefined
})

/** A full disk is the disk's failure (free space), anything else the workspace's. */
const createFailure = (error: PlatformError.PlatformError, what: string) => {
  const storage = storageFailure(error, what)
  return storage.code === "STORAGE_FULL" ? storage : createFailed(describeFailure(error))
}

const createManaged = Effect.fn("Workspaces.createManaged")(function* (disk: Disk, sessionId: SessionId) {
  if (!isSessionId(sessionId)) return yield* Effect.die(new Error(`not a session id: ${String(sessionId)}`))
  const { fs, paths } = disk
  const root = path.join(paths.workspacesDir, sessionId)
  const failure = yield* Effect.gen(function* () {
    // The home holds secrets and logs: created private when it is new, left alone when it is not.
    yield* fs.makeDirectory(paths.home, { recursive: true, mode: PRIVATE_DIR })
    yield* fs.makeDirectory(paths.workspacesDir, { recursive: true, mode: PRIVATE_DIR })
    yield* fs.chmod(paths.workspacesDir, PRIVATE_DIR)
    if (!(yield* ensureDirectory(disk, root))) return createFailed(`${sessionId} exists and is not a directory`)
    yield* fs.chmod(root, PRIVATE_DIR)
    const planted = yield* ensureRuntime(disk, root)
    return planted === undefined ? undefined : createFailed(`${planted} is not a directory`)
  }).pipe(Effect.catch((error) => Effect.succeed(createFailure(error, "creating a workspace"))))
  if (failure === undefined) return { path: root, managed: true }
  // Half a workspace is still a workspace no session owns: gone with the failure (the id is new, so it is ours).
  yield* removeEntry(disk, sessionId).pipe(Effect.ignore)
  return yield* Effect.fail(failure)
})

const contextOf = Effect.fnUntraced(function* (disk: Disk): Effect.fn.Return<PathContext> {
  const { paths } = disk
  const homes = [paths.home, yield* realOrSelf(disk, paths.home)]
  const managed = [paths.workspacesDir, yield* realOrSelf(disk, paths.workspacesDir)]
  return { platform: process.platform, homedir: os.homedir(), pedelecHomes: homes, managedRoots: managed }
})

/** Walks down from the root with lstat, so a symlink anywhere in the path is seen, not followed. */
const diskViolation = Effect.fnUntraced(function* (
  { fs }: Disk,
  canonical: string
): Effect.fn.Return<RuleViolation | undefined> {
  const { root } = path.parse(canonical)
  const parts = canonical
    .slice(root.length)
    .split(path.sep)
    .filter((part) => part !== "")
  let current = root
  for (const [index, part] of parts.entries()) {
    current = path.join(current, part)
    const info = yield* fs.lstat(current).pipe(Effect.option)
    if (info._tag === "None") return { rule: "exists", reason: `${current} does not exist or cannot be read` }
    if (info.value.type === "SymbolicLink") return { rule: "no-symlink", reason: `${current} is a symbolic link` }
    if (info.value.type !== "Directory") {
      const last = index === parts.length - 1
      return last
        ? { rule: "directory", reason: "it is not a directory" }
        : { rule: "exists", reason: `${current} is not a directory` }
    }
  }
  const real = yield* fs.realPath(canonical).pipe(Effect.option)
  if (real._tag === "None") return { rule: "exists", reason: "it cannot be resolved" }
  return real.value === canonical
    ? undefined
    : { rule: "no-symlink", reason: `it resolves to ${real.value} (a link or mount alias)` }
})

const checkExplicit = Effect.fn("Workspaces.checkExplicit")(function* (disk: Disk, candidate: string) {
  const textual = pathRuleViolation(candidate, yield* contextOf(disk))
  if (textual.violation !== undefined) return yield* Effect.fail(pathInvalid(candidate, textual.violation))
  const onDisk = yield* diskViolation(disk, textual.canonical)
  if (onDisk !== undefined) return yield* Effect.fail(pathInvalid(candidate, onDisk))
  return { path: textual.canonical, managed: false }
})

const prepareExplicit = Effect.fn("Workspaces.prepareExplicit")(function* (disk: Disk, candidate: string) {
  const info = yield* checkExplicit(disk, candidate)
  const planted = yield* ensureRuntime(disk, info.path).pipe(
    Effect.catch((error) => Effect.fail(createFailure(error, "preparing a workspace")))
  )
  // A link planted at .pedelec-runtime would let Core write wherever it points.
  if (planted !== undefined)
    return yield* Effect.fail(pathInvalid(candidate, { rule: "no-symlink", reason: `${planted} is not a directory` }))
  return info
})

/** Removes one entry of the managed root; a symlink is unlinked, never followed. */
const removeEntry = Effect.fnUntraced(function* ({ fs, paths }: Disk, name: string) {
  const target = path.join(paths.workspacesDir, name)
  if (!isSessionId(name) || path.dirname(target) !== paths.workspacesDir)
    return yield* Effect.die(new Error(`refusing to remove ${target}: not directly under the managed root`))
  const info = yield* fs.lstat(target).pipe(Effect.option)
  if (info._tag === "None") return false
  yield* fs.remove(target, { recursive: info.value.type === "Directory" })
  return true
})

const removeManaged = Effect.fn("Workspaces.removeManaged")(function* (disk: Disk, sessionId: SessionId) {
  yield* removeEntry(disk, sessionId).pipe(orStorageFailure("removing a workspace"))
})

const sweep = Effect.fn("Workspaces.sweep")(function* (
  disk: Disk,
  input: { readonly liveSessionIds: Iterable<SessionId>; readonly idleSessionIds: Iterable<SessionId> }
) {
  const live = new Set<string>(input.liveSessionIds)
  const idle = new Set<string>(input.idleSessionIds)
  const names = yield* disk.fs.readDirectory(disk.paths.workspacesDir).pipe(Effect.orElseSucceed(() => []))
  // Only names shaped like a session id are Core's; anything else someone put there is left alone.
  const doomed = names.filter((name) => isSessionId(name) && (!live.has(name) || idle.has(name))).sort()
  const removed: Array<SessionId> = []
  for (const name of doomed) {
    const done = yield* removeEntry(disk, name).pipe(
      Effect.catchCause((cause) => Effect.as(Effect.logWarning("workspace sweep could not remove", name, cause), false))
    )
    if (done) removed.push(name as SessionId)
  }
  return removed
})

export class Workspaces extends Context.Service<
  Workspaces,
  {
    /** Creates (or finds) `workspaces/<sessionId>` with its runtime folders; on failure leaves none behind. */
    readonly createManaged: (
      sessionId: SessionId
    ) => Effect.Effect<WorkspaceInfo, PedelecErrorOf<"WORKSPACE_CREATE_FAILED"> | StorageFailure>
    /** Every rule of SPEC §6, without changing anything; the details name the rule that failed. */
    readonly checkExplicit: (
      candidate: string
    ) => Effect.Effect<WorkspaceInfo, PedelecErrorOf<"WORKSPACE_PATH_INVALID">>
    /** Checks again (the disk may have changed since), then adds only `.pedelec-runtime/` and its folders. */
    readonly prepareExplicit: (
      candidate: string
    ) => Effect.Effect<
      WorkspaceInfo,
      PedelecErrorOf<"WORKSPACE_PATH_INVALID" | "WORKSPACE_CREATE_FAILED"> | StorageFailure
    >
    /** Idempotent. Dies (a bug, not an input) for anything that would not be directly under the managed root. */
    readonly removeManaged: (sessionId: SessionId) => Effect.Effect<void, StorageFailure>
    /**
     * Start-up cleanup: removes every managed workspace whose session is not live (ended or unknown) or is idle past
     * retention. Returns the session ids removed; a folder that cannot be removed is logged and left for next time.
     */
    readonly sweep: (input: {
      readonly liveSessionIds: Iterable<SessionId>
      readonly idleSessionIds: Iterable<SessionId>
    }) => Effect.Effect<ReadonlyArray<SessionId>>
  }
>()("pedelec/core/Workspaces") {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function* () {
      const disk: Disk = { paths: yield* CorePaths, fs: yield* FileSystem.FileSystem }
      return Workspaces.of({
        createManaged: (sessionId) => createManaged(disk, sessionId),
        checkExplicit: (candidate) => checkExplicit(disk, candidate),
        prepareExplicit: (candidate) => prepareExplicit(disk, candidate),
        removeManaged: (sessionId) => removeManaged(disk, sessionId),
        sweep: (input) => sweep(disk, input)
      })
    })
  )
}
