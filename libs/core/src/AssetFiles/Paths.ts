/**
 * AssetFiles/Paths — where an AssetPath is inside a workspace's `.pedelec-runtime/`, checked part by part with lstat
 * so that no symlink (a folder on the way or the file itself) leads anywhere else, and the folder the file is in
 * resolves to where it is spelled; in `write` mode missing folders are created (0700). Also the refusals and the
 * errno-to-INTERNAL_ERROR rule every file system call of AssetFiles goes through. It does not read or write a
 * file's bytes (AssetFiles, AssetFiles/Receive).
 */
import { lstat, mkdir, realpath } from "node:fs/promises"
import path from "node:path"
import type { AssetPath } from "@pedelec/contracts/Assets"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { rulesOf, samePath } from "@pedelec/path-guard/Inside"
import * as Effect from "effect/Effect"
import { RUNTIME_DIR } from "../Workspaces.ts"

const FOLDER_MODE = 0o700
/** Real paths compared as this platform's file systems compare names. */
const RULES = rulesOf(process.platform)

export const pathInvalid = (assetPath: string, reason: string) =>
  PedelecError.fromCode("ASSET_PATH_INVALID", "core", { details: { path: assetPath, reason } })
export const notFound = (assetPath: string) =>
  PedelecError.fromCode("ASSET_NOT_FOUND", "core", { details: { path: assetPath } })
export const internal = (reason: string) =>
  PedelecError.fromCode("INTERNAL_ERROR", "core", { details: { component: "core", reason } })

export const HARD_LINKED = "it has another hard link, which may be outside the workspace"

/**
 * A second name for the same inode can be anywhere on the file system (a hard link to a file outside the workspace
 * looks like any regular file), so a file with more than one link is neither served nor replaced.
 */
export const hasOtherLinks = (stats: { readonly nlink: number }) => stats.nlink > 1

/** A file system call; an unexpected failure is INTERNAL_ERROR, its errno code the reason (no path: a page sees it). */
export const io = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => internal(`${what} failed (${(cause as NodeJS.ErrnoException).code ?? "unknown error"})`)
  })

export const lstatOrUndefined = (file: string) =>
  io("lstat", () =>
    lstat(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined
      throw error
    })
  )

/**
 * `read`: every part must exist. `plan`: missing folders are fine (an upload will create them). `write`: missing
 * folders are created. In every mode a part that is a symlink or not a folder is refused, and the folder the file is
 * in must resolve to where it is spelled inside the real assets folder.
 */
export type Mode = "read" | "plan" | "write"

/**
 * `.pedelec-runtime/<sub>` of a workspace as a real folder whose real path is where it is spelled; undefined when it
 * does not exist and `create` is false. `shown` names the asset in a refusal.
 */
export const runtimeFolder = Effect.fnUntraced(function* (
  workspace: string,
  sub: string,
  create: boolean,
  shown: string
) {
  const runtime = path.join(workspace, RUNTIME_DIR)
  const folder = path.join(runtime, sub)
  for (const [dir, name] of [
    [runtime, RUNTIME_DIR],
    [folder, `${RUNTIME_DIR}/${sub}`]
  ] as const) {
    let found = yield* lstatOrUndefined(dir)
    if (found === undefined && create) {
      yield* io("mkdir", () => mkdir(dir, { mode: FOLDER_MODE }).catch(() => undefined))
      found = yield* lstatOrUndefined(dir)
    }
    if (found === undefined) return undefined
    if (!found.isDirectory()) return yield* Effect.fail(pathInvalid(shown, `${name} is not a folder`))
  }
  const real = yield* io("realpath", () => realpath(folder))
  const expected = path.join(yield* io("realpath", () => realpath(workspace)), RUNTIME_DIR, sub)
  if (!samePath(real, expected, RULES))
    return yield* Effect.fail(pathInvalid(shown, `${RUNTIME_DIR}/${sub} resolves outside the workspace`))
  return { folder, real }
})

/** Where `assetPath` is: its absolute name and what is there now (undefined: nothing yet). */
export const locate = Effect.fnUntraced(function* (workspace: string, assetPath: AssetPath, mode: Mode) {
  const root = yield* runtimeFolder(workspace, "assets", mode === "write", assetPath)
  if (root === undefined)
    return mode === "read"
      ? yield* Effect.fail(notFound(assetPath))
      : { target: path.join(workspace, RUNTIME_DIR, "assets", ...assetPath.split("/")), stats: undefined }
  const segments = assetPath.split("/")
  const fileName = segments.pop() as string
  let current = root.folder
  let missing = false
  for (const [index, segment] of segments.entries()) {
    current = path.join(current, segment)
    const shown = segments.slice(0, index + 1).join("/")
    let found = missing ? undefined : yield* lstatOrUndefined(current)
    if (found === undefined && mode === "write") {
      yield* io("mkdir", () => mkdir(current, { mode: FOLDER_MODE }).catch(() => undefined))
      found = yield* lstatOrUndefined(current)
    }
    if (found === undefined) {
      if (mode === "read") return yield* Effect.fail(notFound(assetPath))
      missing = true
      continue
    }
    if (found.isSymbolicLink()) return yield* Effect.fail(pathInvalid(assetPath, `${shown} is a symbolic link`))
    if (!found.isDirectory()) return yield* Effect.fail(pathInvalid(assetPath, `${shown} is not a folder`))
  }
  const target = path.join(current, fileName)
  if (missing) return { target, stats: undefined }
  const realParent = yield* io("realpath", () => realpath(current))
  if (!samePath(realParent, path.join(root.real, ...segments), RULES))
    return yield* Effect.fail(pathInvalid(assetPath, "it resolves outside the assets folder"))
  const stats = yield* lstatOrUndefined(target)
  if (stats === undefined) return mode === "read" ? yield* Effect.fail(notFound(assetPath)) : { target, stats }
  if (stats.isSymbolicLink()) return yield* Effect.fail(pathInvalid(assetPath, "it is a symbolic link"))
  if (stats.isDirectory()) return yield* Effect.fail(pathInvalid(assetPath, "it is a folder"))
  if (!stats.isFile()) return yield* Effect.fail(pathInvalid(assetPath, "it is not a regular file"))
  if (hasOtherLinks(stats)) return yield* Effect.fail(pathInvalid(assetPath, HARD_LINKED))
  return { target, stats }
})
