/**
 * AssetFiles — owns the files of a session's `<workspace>/.pedelec-runtime/assets/`: resolving an AssetPath there so
 * that no symlink (a folder on the way or the file itself) leads anywhere else, streaming an upload into
 * `.pedelec-runtime/tmp/` with its size enforced as it arrives and renaming it into place (a failed upload leaves no
 * file behind), opening a file to stream it back, and listing the folder with content types. It does not decide who
 * may do any of this (AssetTickets, Sessions), speak HTTP (AssetServer) or create workspaces (Workspaces).
 *
 * Residual race: a folder swapped for a symlink between the final check and the rename (or the open) is not caught;
 * the file itself is opened with O_NOFOLLOW and a rename replaces a link rather than writing through it.
 */
import { randomBytes } from "node:crypto"
import { constants, createWriteStream, type Stats } from "node:fs"
import { type FileHandle, lstat, mkdir, open, readdir, realpath, rename, rm } from "node:fs/promises"
import path from "node:path"
import type { Readable } from "node:stream"
import { type AssetInfo, AssetPath } from "@pedelec/contracts/Assets"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { rulesOf, samePath } from "@pedelec/path-guard/Inside"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
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

const FOLDER_MODE = 0o700
const FILE_MODE = 0o600
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
/** Read in large chunks: a download is one file to one socket. */
const READ_CHUNK = 256 * 1024
/** Real paths compared as this platform's file systems compare names. */
const RULES = rulesOf(process.platform)
const isAssetPath = Schema.is(AssetPath)

const pathInvalid = (assetPath: string, reason: string) =>
  PedelecError.fromCode("ASSET_PATH_INVALID", "core", { details: { path: assetPath, reason } })
const notFound = (assetPath: string) =>
  PedelecError.fromCode("ASSET_NOT_FOUND", "core", { details: { path: assetPath } })
const internal = (reason: string) =>
  PedelecError.fromCode("INTERNAL_ERROR", "core", { details: { component: "core", reason } })

/** A file system call; an unexpected failure is INTERNAL_ERROR, its errno code the reason (no path: a page sees it). */
const io = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => internal(`${what} failed (${(cause as NodeJS.ErrnoException).code ?? "unknown error"})`)
  })

const lstatOrUndefined = (file: string) =>
  io("lstat", () =>
    lstat(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined
      throw error
    })
  )

const infoOf = (assetPath: AssetPath, stats: Stats): AssetInfo => ({
  path: assetPath,
  bytes: stats.size,
  contentType: contentTypeOf(assetPath),
  modifiedAt: Math.max(0, Math.floor(stats.mtimeMs))
})

/**
 * `read`: every part must exist. `plan`: missing folders are fine (an upload will create them). `write`: missing
 * folders are created. In every mode a part that is a symlink or not a folder is refused, and the folder the file is
 * in must resolve to where it is spelled inside the real assets folder.
 */
type Mode = "read" | "plan" | "write"

/**
 * `.pedelec-runtime/<sub>` of a workspace as a real folder whose real path is where it is spelled; undefined when it
 * does not exist and `create` is false. `shown` names the asset in a refusal.
 */
const runtimeFolder = Effect.fnUntraced(function* (workspace: string, sub: string, create: boolean, shown: string) {
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
const locate = Effect.fnUntraced(function* (workspace: string, assetPath: AssetPath, mode: Mode) {
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
  return { target, stats }
})

/**
 * Writes `body` to a new file; fails with ASSET_TOO_LARGE the moment more than `limit` bytes arrived. Settles only
 * once the file is closed, whatever happened, so the caller can remove it (interruption included).
 */
const receive = (body: Readable, file: string, limit: number) =>
  Effect.callback<number, PedelecError>((resume) => {
    let received = 0
    let ended = false
    let failure: PedelecError | undefined
    // `wx`: refuses to follow or replace anything already at the (random) temp name.
    const sink = createWriteStream(file, { flags: "wx", mode: FILE_MODE })
    const detach = () => {
      body.off("data", onData)
      body.off("end", onEnd)
      body.off("error", onAbort)
      body.off("close", onClose)
    }
    const fail = (error: PedelecError) => {
      failure ??= error
      detach()
      sink.destroy()
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > limit)
        return fail(
          PedelecError.fromCode("ASSET_TOO_LARGE", "core", {
            details: { limit },
            message: `The upload sent more than the ${limit} bytes its ticket was issued for. Ask for a ticket with the file's exact size.`
          })
        )
      if (!sink.write(chunk)) {
        body.pause()
        sink.once("drain", () => {
          if (failure === undefined) body.resume()
        })
      }
    }
    const onEnd = () => {
      ended = true
      detach()
      sink.end()
    }
    const onAbort = () => fail(internal("the upload was interrupted"))
    const onClose = () => {
      if (!ended) onAbort()
    }
    sink.once("error", (error: NodeJS.ErrnoException) => fail(internal(`writing failed (${error.code ?? "error"})`)))
    sink.once("close", () =>
      resume(failure === undefined && ended ? Effect.succeed(received) : Effect.fail(failure ?? internal("closed")))
    )
    body.on("data", onData)
    body.once("end", onEnd)
    body.once("error", onAbort)
    body.once("close", onClose)
    if (body.destroyed) onAbort()
    return Effect.callback<void>((closed) => {
      if (sink.closed) return closed(Effect.void)
      sink.once("close", () => closed(Effect.void))
      fail(internal("the upload was stopped"))
    })
  })

/** A failure mid-way leaves nothing at the temp name; the caller decides what to tell the uploader. */
const writeVia = Effect.fnUntraced(function* (
  tmp: string,
  body: Readable,
  bytes: number,
  commit: (tmp: string) => Effect.Effect<void, PedelecError>
) {
  return yield* Effect.acquireUseRelease(
    Effect.succeed(tmp),
    () =>
      Effect.gen(function* () {
        const received = yield* receive(body, tmp, bytes)
        if (received !== bytes)
          return yield* Effect.fail(
            PedelecError.fromCode("INVALID_INPUT", "core", {
              details: { reason: `the upload ended after ${received} of the ${bytes} bytes its ticket was issued for` }
            })
          )
        yield* commit(tmp)
      }),
    () => Effect.promise(() => rm(tmp, { force: true }))
  )
})

/** An open asset: what it is and its bytes, readable until the scope closes the file. */
export interface OpenAsset {
  readonly info: AssetInfo
  readonly stream: Readable
}

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
    /** Every regular file under `assets/` (links and odd names skipped), in path order, at most MAX_LISTED. */
    readonly list: (workspace: string) => Effect.Effect<ReadonlyArray<AssetInfo>, PedelecError>
  }
>()("pedelec/core/AssetFiles") {
  static readonly layer = Layer.sync(AssetFiles, () => {
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

    const openAsset = Effect.fn("AssetFiles.open")(function* (workspace: string, assetPath: AssetPath) {
      const { target } = yield* locate(workspace, assetPath, "read")
      const handle = yield* Effect.acquireRelease(
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
      const stats = yield* io("fstat", () => handle.stat())
      if (!stats.isFile()) return yield* Effect.fail(pathInvalid(assetPath, "it is not a regular file"))
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

    const list = Effect.fn("AssetFiles.list")(function* (workspace: string) {
      const root = yield* runtimeFolder(workspace, "assets", false, `${RUNTIME_DIR}/assets`)
      if (root === undefined) return []
      const found: Array<AssetInfo> = []
      const walk = (dir: string, prefix: string): Effect.Effect<void, PedelecError> =>
        Effect.gen(function* () {
          const entries = yield* io("readdir", () => readdir(dir, { withFileTypes: true }))
          entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          for (const entry of entries) {
            if (found.length >= MAX_LISTED) return
            const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
            if (!isAssetPath(relative)) continue
            // Dirent types come from lstat: a link to a folder or file is neither, and is skipped.
            if (entry.isDirectory()) yield* walk(path.join(dir, entry.name), relative)
            else if (entry.isFile()) {
              const stats = yield* lstatOrUndefined(path.join(dir, entry.name))
              if (stats?.isFile()) found.push(infoOf(relative, stats))
            }
          }
        })
      yield* walk(root.folder, "")
      return found
    })

    return AssetFiles.of({ checkUpload, stat, write, open: openAsset, list })
  })
}
