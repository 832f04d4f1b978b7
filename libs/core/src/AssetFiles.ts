/**
 * AssetFiles — owns the files of a session's `<workspace>/.pedelec-runtime/assets/`: resolving an AssetPath there so
 * that no symlink (a folder on the way or the file itself) nor a hard link leads anywhere else, streaming an upload into
 * `.pedelec-runtime/tmp/` with its size enforced as it arrives and renaming it into place (a failed upload leaves no
 * file behind), opening a file to stream it back, and listing the folder with content types. It does not decide who
 * may do any of this (AssetTickets, Sessions), speak HTTP (AssetServer) or create workspaces (Workspaces). Resolving
 * a path is AssetFiles/Paths', receiving an upload's bytes AssetFiles/Receive'.
 *
 * Residual race: a folder swapped for a symlink between the final check and the rename (or the open) is not caught;
 * the file itself is opened with O_NOFOLLOW and a rename replaces a link rather than writing through it.
 */
import { randomBytes } from "node:crypto"
import { constants, type Stats } from "node:fs"
import { type FileHandle, open, readdir, rename } from "node:fs/promises"
import path from "node:path"
import type { Readable } from "node:stream"
import { type AssetInfo, AssetPath } from "@pedelec/contracts/Assets"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import {
  HARD_LINKED,
  hasOtherLinks,
  internal,
  io,
  locate,
  lstatOrUndefined,
  notFound,
  pathInvalid,
  runtimeFolder
} from "./AssetFiles/Paths.ts"
import { writeVia } from "./AssetFiles/Receive.ts"
import { RUNTIME_DIR } from "./Workspaces.ts"

/** At most this many files are listed (in path order): an `asset.list` answer stays far below the IPC line cap. */
export const MAX_LISTED = 10_000

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  tsv: "text/tab-separated-values; charset=utf-8",
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  json: "application/json",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  svg: "image/svg+xml",
  ico: "image/x-icon",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  webm: "video/webm",
  woff2: "font/woff2"
}

/** From the extension alone (never sniffed); `application/octet-stream` when it is not in the table. */
export const contentTypeOf = (assetPath: string): string => {
  const dot = assetPath.lastIndexOf(".")
  const extension = dot > assetPath.lastIndexOf("/") ? assetPath.slice(dot + 1).toLowerCase() : ""
  return CONTENT_TYPES[extension] ?? "application/octet-stream"
}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
/** Read in large chunks: a download is one file to one socket. */
const READ_CHUNK = 256 * 1024
const isAssetPath = Schema.is(AssetPath)

const infoOf = (assetPath: AssetPath, stats: Stats): AssetInfo => ({
  path: assetPath,
  bytes: stats.size,
  contentType: contentTypeOf(assetPath),
  modifiedAt: Math.max(0, Math.floor(stats.mtimeMs))
})

/** An open asset: what it is and its bytes, readable until the scope closes the file. */
export interface OpenAsset {
  readonly info: AssetInfo
  readonly stream: Readable
}

const checkUpload = Effect.fn("AssetFiles.checkUpload")(function* (workspace: string, assetPath: AssetPath) {
  yield* locate(workspace, assetPath, "plan")
})

const stat = Effect.fn("AssetFiles.stat")(function* (workspace: string, assetPath: AssetPath) {
  const { stats } = yield* locate(workspace, assetPath, "read")
  if (stats === undefined) return yield* Effect.fail(notFound(assetPath))
  return infoOf(assetPath, stats)
})

const write = Effect.fn("AssetFiles.write")(function* (
  workspace: string,
  assetPath: AssetPath,
  body: Readable,
  bytes: number
) {
  yield* locate(workspace, assetPath, "plan")
  const tmp = yield* runtimeFolder(workspace, "tmp", true, assetPath)
  if (tmp === undefined) return yield* Effect.fail(internal("the workspace's tmp folder could not be created"))
  const file = path.join(tmp.folder, `${randomBytes(12).toString("base64url")}.upload`)
  yield* writeVia(file, body, bytes, (written) =>
    Effect.gen(function* () {
      // Checked again: the folders may have changed while the body arrived.
      const { target } = yield* locate(workspace, assetPath, "write")
      yield* io("rename", () => rename(written, target))
    })
  )
  return yield* stat(workspace, assetPath)
})

/** The file at `target`, never through a link (O_NOFOLLOW), closed with the scope. */
const openNoFollow = (target: string, assetPath: AssetPath) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => open(target, constants.O_RDONLY | NO_FOLLOW),
      catch: (cause) => {
        const code = (cause as NodeJS.ErrnoException).code
        if (code === "ENOENT") return notFound(assetPath)
        if (code === "ELOOP") return pathInvalid(assetPath, "it is a symbolic link")
        return internal(`open failed (${code ?? "unknown error"})`)
      }
    }),
    (opened: FileHandle) => Effect.promise(() => opened.close().catch(() => undefined))
  )

const openAsset = Effect.fn("AssetFiles.open")(function* (workspace: string, assetPath: AssetPath) {
  const { target } = yield* locate(workspace, assetPath, "read")
  const handle = yield* openNoFollow(target, assetPath)
  const stats = yield* io("fstat", () => handle.stat())
  if (!stats.isFile()) return yield* Effect.fail(pathInvalid(assetPath, "it is not a regular file"))
  // Checked again on the open file: a link made between the check and the open.
  if (hasOtherLinks(stats)) return yield* Effect.fail(pathInvalid(assetPath, HARD_LINKED))
  // Exactly the bytes `info` announces, even if the file grows while it is sent.
  const stream: Readable = handle.createReadStream({
    autoClose: false,
    highWaterMark: READ_CHUNK,
    start: 0,
    end: Math.max(0, stats.size - 1)
  })
  if (stats.size === 0) stream.destroy()
  yield* Effect.addFinalizer(() => Effect.sync(() => stream.destroy()))
  return { info: infoOf(assetPath, stats), stream }
})

/** Adds the regular files under `dir` to `found`, in name order, until it holds MAX_LISTED. */
const walk = (found: Array<AssetInfo>, dir: string, prefix: string): Effect.Effect<void, PedelecError> =>
  Effect.gen(function* () {
    const entries = yield* io("readdir", () => readdir(dir, { withFileTypes: true }))
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (found.length >= MAX_LISTED) return
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
      if (!isAssetPath(relative)) continue
      // Dirent types come from lstat: a link to a folder or file is neither, and is skipped.
      if (entry.isDirectory()) yield* walk(found, path.join(dir, entry.name), relative)
      else if (entry.isFile()) {
        const stats = yield* lstatOrUndefined(path.join(dir, entry.name))
        if (stats?.isFile() && !hasOtherLinks(stats)) found.push(infoOf(relative, stats))
      }
    }
  })

const list = Effect.fn("AssetFiles.list")(function* (workspace: string) {
  const root = yield* runtimeFolder(workspace, "assets", false, `${RUNTIME_DIR}/assets`)
  if (root === undefined) return []
  const found: Array<AssetInfo> = []
  yield* walk(found, root.folder, "")
  return found
})

export class AssetFiles extends Context.Service<
  AssetFiles,
  {
    /** Refuses a path an upload could not land on (a symlink, a file as a folder, a folder as the file); no change. */
    readonly checkUpload: (workspace: string, assetPath: AssetPath) => Effect.Effect<void, PedelecError>
    /** An existing regular file's info: ASSET_NOT_FOUND, or ASSET_PATH_INVALID for a link or a folder. */
    readonly stat: (workspace: string, assetPath: AssetPath) => Effect.Effect<AssetInfo, PedelecError>
    /**
     * Streams exactly `bytes` bytes of `body` to `tmp/`, then renames the file into place (replacing an older one).
     * More bytes: ASSET_TOO_LARGE as soon as they arrive; fewer: INVALID_INPUT; either way no file is left behind.
     */
    readonly write: (
      workspace: string,
      assetPath: AssetPath,
      body: Readable,
      bytes: number
    ) => Effect.Effect<AssetInfo, PedelecError>
    /** Opens the file without following a link; the file closes with the scope. */
    readonly open: (workspace: string, assetPath: AssetPath) => Effect.Effect<OpenAsset, PedelecError, Scope.Scope>
    /** Every regular file under `assets/` (links, hard-linked files and odd names skipped), in path order, at most MAX_LISTED. */
    readonly list: (workspace: string) => Effect.Effect<ReadonlyArray<AssetInfo>, PedelecError>
  }
>()("pedelec/core/AssetFiles") {
  static readonly layer = Layer.succeed(AssetFiles, AssetFiles.of({ checkUpload, stat, write, open: openAsset, list }))
}
