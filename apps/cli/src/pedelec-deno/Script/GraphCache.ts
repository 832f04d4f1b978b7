/**
 * Script/GraphCache — the module graphs pedelec-deno checked, kept so an unchanged script skips its two `deno info`
 * checks: `$PEDELEC_HOME/cache/deno-graphs/` (0700, never inside the workspace), one entry per workspace + entry
 * script + Deno binary + wall, listing each module's workspace-relative name and the SHA-256 of its bytes, sealed
 * with an HMAC under a 32-byte key of that folder (0600). At most MAX_ENTRIES entries of MAX_ENTRY_BYTES each.
 *
 * Why the same hashes mean the same graph: static imports are in the files' bytes, and the graph Deno runs from the
 * private copy depends on nothing else. `--no-config` keeps deno.json, deno.jsonc, import maps and package.json
 * ("imports", dependencies) out of resolution (tried with Deno 2.9.6: `#x`, a bare `foo` and a deno.json import all
 * fail "not a dependency"), the environment is pedelec-deno's own, and a graph that passed both checks has only
 * relative imports (an absolute one cannot be inside both the workspace and the copy), so where the copy lies does
 * not matter. What is left, the Deno binary, is in the key by real path, inode, size, mtime and ctime.
 *
 * Why an entry is trusted: it verifies under the key (a hand-edited or truncated entry just means a full check),
 * and the key is only read from the home of the Core pedelec-deno just talked to (`trustedHome`): the socket that
 * answered must be, by real path, the one that home's layout names, a socket of this user with one link. An agent
 * that points PEDELEC_HOME at a folder of its own therefore gets full checks, not a key it chose.
 * It does not copy or check anything (Script, Script/Copy, Script/Graph).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync
} from "node:fs"
import path from "node:path"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { isInside } from "@pedelec/path-guard/Inside"
import type { Hashes } from "./Copy.ts"
import { NO_OUTSIDE_CODE } from "./Graph.ts"

export const MAX_ENTRIES = 256
export const MAX_ENTRY_BYTES = 1024 * 1024
/** Bumped when what a check proves changes: older entries then never verify. */
const FORMAT = "pedelec-deno-graph/1"

export interface GraphCache {
  readonly dir: string
  readonly key: Buffer
}

/** What a checked graph is valid for; every field is in the entry's name and under its seal. */
export interface GraphId {
  readonly workspace: string
  readonly entry: string
  readonly deno: string
  /** "none", or the bubblewrap the run goes behind. */
  readonly wall: string
}

const uid = process.getuid?.()

/**
 * The home's real path when the Core socket that answered is this home's own; undefined otherwise (no cache). This
 * and `openCache` are synchronous, like `lookup`: a few calls on paths, each of which would cost an event loop turn.
 */
export const trustedHome = async (home: string, socketPath: string): Promise<string | undefined> => {
  if (uid === undefined) return undefined
  try {
    const real = realpathSync.native(home)
    const socket = lstatSync(socketPath)
    if (!socket.isSocket() || socket.uid !== uid || socket.nlink !== 1) return undefined
    return realpathSync.native(socketPath) === pathsForHome(real).socketPath ? real : undefined
  } catch {
    return undefined
  }
}

/**
 * A regular file of this user, not followed through a symlink, of at most `max` bytes; undefined otherwise.
 * Synchronous: one small file on the run's critical path, where each awaited call costs an event loop turn.
 */
const readOwn = (file: string, max: number): Buffer | undefined => {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0))
  } catch {
    return undefined
  }
  try {
    const info = fstatSync(fd)
    if (!info.isFile() || info.uid !== uid || info.size > max || (info.mode & 0o077) !== 0) return undefined
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * fs/promises, loaded on the first write: a cached run only reads (synchronously), and loading it costs about
 * 1.4 ms of every run's start.
 */
const writer = () => import("node:fs/promises")

const temp = (dir: string, name: string) =>
  path.join(dir, `${name}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`)

/** The folder's key: made once (link, so two first runs agree on one), replaced when it is not 32 bytes. */
const keyOf = async (dir: string): Promise<Buffer | undefined> => {
  const file = path.join(dir, "key")
  const found = readOwn(file, 64)
  if (found?.length === 32) return found
  const { link, rename, unlink, writeFile } = await writer()
  const fresh = temp(dir, "key")
  await writeFile(fresh, randomBytes(32), { flag: "wx", mode: 0o600 })
  try {
    if (found === undefined) await link(fresh, file).catch(() => undefined)
    else await rename(fresh, file)
  } finally {
    await unlink(fresh).catch(() => undefined)
  }
  const key = readOwn(file, 64)
  return key?.length === 32 ? key : undefined
}

/** A private folder of this user, not a symlink. */
const ownDir = (dir: string, others: number) => {
  const info = lstatSync(dir)
  return info.isDirectory() && info.uid === uid && (info.mode & others) === 0
}

/** The cache of a trusted home, created 0700; undefined when it cannot be private (then every run is checked). */
export const openCache = async (home: string): Promise<GraphCache | undefined> => {
  if (uid === undefined) return undefined
  const parent = path.join(home, "cache")
  const dir = path.join(parent, "deno-graphs")
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    if (!ownDir(parent, 0o022) || !ownDir(dir, 0o077)) return undefined
    const key = await keyOf(dir)
    return key === undefined ? undefined : { dir, key }
  } catch {
    return undefined
  }
}

/** Whether the cache could be reached by the script (it may write its workspace): then it is not used. */
export const usableFor = (cache: GraphCache, workspace: string): boolean => !isInside(workspace, cache.dir)

/** Everything besides the modules' bytes that decides the graph Deno resolves. */
export const denoIdentity = (deno: string): string => {
  const info = statSync(deno)
  return [deno, info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs].join(":")
}

const canonical = (id: GraphId) => JSON.stringify([FORMAT, NO_OUTSIDE_CODE, id.workspace, id.entry, id.deno, id.wall])
const entryFile = (cache: GraphCache, id: GraphId) =>
  path.join(cache.dir, `${createHash("sha256").update(canonical(id)).digest("hex").slice(0, 40)}.json`)
const seal = (cache: GraphCache, id: GraphId, modules: ReadonlyArray<readonly [string, string]>) =>
  createHmac("sha256", cache.key).update(canonical(id)).update("\0").update(JSON.stringify(modules)).digest()

const isModules = (u: unknown): u is ReadonlyArray<readonly [string, string]> =>
  Array.isArray(u) &&
  u.every((m) => Array.isArray(m) && m.length === 2 && typeof m[0] === "string" && typeof m[1] === "string")

/** The modules of the graph last checked for `id` and their hashes, if its entry verifies under the key. */
export const lookup = async (cache: GraphCache, id: GraphId): Promise<Hashes | undefined> => {
  const bytes = readOwn(entryFile(cache, id), MAX_ENTRY_BYTES)
  if (bytes === undefined) return undefined
  try {
    const { modules, mac } = JSON.parse(bytes.toString("utf8")) as { modules?: unknown; mac?: unknown }
    if (!isModules(modules) || typeof mac !== "string") return undefined
    const expected = seal(cache, id, modules)
    const given = Buffer.from(mac, "hex")
    return given.length === expected.length && timingSafeEqual(given, expected) ? new Map(modules) : undefined
  } catch {
    return undefined
  }
}

/** Records a checked graph (write aside, then rename: a reader sees a whole entry or none), then keeps the bound. */
export const store = async (cache: GraphCache, id: GraphId, hashes: Hashes): Promise<void> => {
  const modules = [...hashes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const text = JSON.stringify({ modules, mac: seal(cache, id, modules).toString("hex") })
  if (Buffer.byteLength(text) > MAX_ENTRY_BYTES) return
  const { rename, unlink, writeFile } = await writer()
  const file = entryFile(cache, id)
  const aside = temp(cache.dir, path.basename(file))
  try {
    await writeFile(aside, text, { flag: "wx", mode: 0o600 })
    await rename(aside, file)
  } catch {
    await unlink(aside).catch(() => undefined)
    return
  }
  await evict(cache)
}

/** Drops the oldest entries over MAX_ENTRIES, and files left aside by a process that died before its rename. */
const evict = async (cache: GraphCache) => {
  const { readdir, stat, unlink } = await writer()
  const names = await readdir(cache.dir).catch(() => [] as Array<string>)
  const now = Date.now()
  for (const name of names.filter((n) => n.endsWith(".tmp"))) {
    const file = path.join(cache.dir, name)
    const info = await stat(file).catch(() => undefined)
    if (info !== undefined && now - info.mtimeMs > 60_000) await unlink(file).catch(() => undefined)
  }
  const entries = names.filter((n) => n.endsWith(".json"))
  if (entries.length <= MAX_ENTRIES) return
  const dated = await Promise.all(
    entries.map(async (name) => {
      const file = path.join(cache.dir, name)
      return { file, mtime: (await stat(file).catch(() => undefined))?.mtimeMs ?? 0 }
    })
  )
  dated.sort((a, b) => a.mtime - b.mtime)
  for (const { file } of dated.slice(0, dated.length - MAX_ENTRIES)) await unlink(file).catch(() => undefined)
}
