/**
 * Script/Copy — copying a script's modules from the workspace into its private copy, one opened file at a time,
 * and the SHA-256 of the very bytes each copy holds (what Script/GraphCache compares). It does not decide which
 * modules to copy (Script/Graph's check, or a cached graph) nor whether the copy may run (Script).
 */
import { createHash } from "node:crypto"
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync
} from "node:fs"
import path from "node:path"
import { isInside } from "@pedelec/path-guard/Inside"
import { errnoOf } from "../../Reach.ts"
import { importDenied, LIMITS } from "./Graph.ts"

/** The workspace-relative name of each module copied, with the SHA-256 (hex) of the bytes written. */
export type Hashes = ReadonlyMap<string, string>

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/**
 * Copies one module into the copy: opened first, then its real path must be inside the workspace and be the very
 * file that was opened (a symlink swapped in meanwhile is caught). The bytes hashed are the bytes read from that
 * handle and written, once, into a fresh 0400 file of the private dir: the hash is the copy's, whatever the
 * workspace file becomes later. Missing files are left to Deno (undefined). Synchronous, like the rest of the
 * copy: a few small files, and each awaited call would cost an event loop turn (a millisecond on a busy machine).
 */
const copyModule = (root: string, copy: string, relative: string, budget: { bytes: number }) => {
  const source = path.join(root, relative)
  let fd: number
  try {
    fd = openSync(source, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (cause) {
    if (errnoOf(cause) === "ENOENT" || errnoOf(cause) === "ENOTDIR") return undefined
    return importDenied(relative, `cannot be read (${errnoOf(cause) ?? String(cause)})`)
  }
  try {
    const opened = fstatSync(fd)
    const real = orUndefined(() => realpathSync.native(source))
    const there = real === undefined ? undefined : orUndefined(() => statSync(real))
    if (real === undefined || !isInside(root, real) || there?.ino !== opened.ino || there.dev !== opened.dev)
      importDenied(relative, "is a symbolic link that leads outside the workspace")
    if (!opened.isFile()) importDenied(relative, "is not a regular file")
    budget.bytes -= opened.size
    if (budget.bytes < 0) importDenied(relative, `takes the script's imports over ${LIMITS.graphBytes} bytes`)
    const bytes = readFileSync(fd)
    const target = path.join(copy, relative)
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
    writeFileSync(target, bytes, { flag: "wx", mode: 0o400 })
    return sha256(bytes)
  } finally {
    closeSync(fd)
  }
}

const orUndefined = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

/** The modules `files` names copied from `root` into `copy`, with their hashes; a missing one is not in the map. */
export const copyGraph = async (root: string, copy: string, files: ReadonlyArray<string>): Promise<Hashes> => {
  const budget = { bytes: LIMITS.graphBytes }
  const copied = new Map<string, string>()
  for (const relative of new Set(files)) {
    const hash = copyModule(root, copy, relative, budget)
    if (hash !== undefined) copied.set(relative, hash)
  }
  return copied
}
