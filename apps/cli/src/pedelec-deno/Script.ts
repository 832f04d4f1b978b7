/**
 * Script — everything before a script runs: its path (workspace-relative, really inside the workspace), its module
 * graph (`deno info`: every module a `file:` of the workspace, else SCRIPT_IMPORT_DENIED naming it), a private copy
 * of that graph (a 0700 temp dir outside the workspace), the graph of the copy checked again (every module inside
 * the copy, and one of those checked), and the `deno run` command for the copy. Deno does not check the permissions
 * of a script's static imports (research/toolchain.md §7): the checks here, on the very files that run, close that.
 * A file changed between the check and the copy is caught by the second check; one changed later is not what runs.
 *
 * An unchanged graph skips both checks (Script/GraphCache): the modules of the graph last checked for this
 * workspace, entry and Deno are copied as always, and the copy runs only if every one was there and the bytes
 * copied hash to what was checked. The race stays closed the same way: the hashes are of the bytes written into
 * the private copy (read once from the opened file, written once, 0400, where the script cannot write), and the
 * run reads only the copy, so a workspace file changed during or after the copy is either not what runs or, when
 * copied changed, a hash that differs and a full check of a fresh copy. Anything else (a new or removed import is a
 * changed file, a missing module, a tampered entry, another entry or Deno) is the full path, which caches anew.
 * Measured (`npx tsx tools/bench/run.ts deno`, 2 cores shared with other work, hello world behind bubblewrap):
 * bare `deno run` 41-48 ms; cached 171 ms (3.6x) at a load of 5, from 243 ms (5.9x) before the set-up below went
 * synchronous and off the disk; under heavier load every row slows and the ratio grows. 2x is out of reach for a
 * node front: node starts in 44-52 ms (1.1-1.3x), the built-ins a run needs (net, child_process, crypto) add 8 ms
 * of CPU, and the sandboxed run of a fresh Deno state takes 52-55 ms against the bare 41-43 (bubblewrap's
 * namespaces, an empty DENO_DIR): about 2.6x before pedelec-deno does anything. Above that: Core's hello and
 * deno.prepare (5 ms), finding, trusting and copying (5-6 ms), spawning (4 ms). A front on the pinned Deno is not
 * 2x either: `deno` starts in about the bare run's own time and the sandbox adds ~10 ms to the run, a floor of about
 * 2.2x for any second JS runtime; it would have to use Deno's own APIs, since loading node:fs, net, child_process or
 * crypto costs it 40 ms or more (a prototype of the cached path on Deno's APIs: 2.8x where this one was 4.5x, load 8).
 * The private dir is in memory where it can be (/dev/shm), Deno's state a tmpfs of the sandbox, so making and
 * removing them costs well under a ms. A cached run starts no thread pool and loads no fs/promises (the script's
 * path is resolved synchronously when it is plain), and main makes its local set-up while Core answers: its own
 * work (besides node's start and the sandboxed Deno) 46 -> 41.5 ms, the bench's cached ratio 3.8x -> 3.4x
 * (medians of 3 alternating runs each, load 1.2-1.6).
 * Reading the graph is Script/Graph's; copying and hashing Script/Copy's; the private dir Script/PrivateDir's.
 */
import { mkdirSync, realpathSync, rmSync, statSync } from "node:fs"
import path from "node:path"
import { isInside } from "@pedelec/path-guard/Inside"
import { errnoOf } from "../Reach.ts"
import { Refused, refuse } from "./Failure.ts"
import type { Launch } from "./Processes.ts"
import { launchDeno, outwardLinks, type Wall } from "./Sandbox.ts"
import { copyGraph, type Hashes } from "./Script/Copy.ts"
import { graph, NO_OUTSIDE_CODE } from "./Script/Graph.ts"
import { denoIdentity, type GraphCache, type GraphId, lookup, store, usableFor } from "./Script/GraphCache.ts"
import { listable, privateDir, privateLayout, removeDir } from "./Script/PrivateDir.ts"
import { heapFlag, type ResourceCaps } from "./Watchdog.ts"

/** Core's word on a run (the workspace, a real path; the deadline; the output cap) and pedelec-deno's own caps. */
export interface Policy extends ResourceCaps {
  readonly workspace: string
  readonly timeoutMs: number
  readonly outputBytes: number
}

export interface ScriptRequest {
  readonly deno: string
  readonly wall: Wall
  readonly policy: Policy
  /** Workspace-relative, as the agent passed it. */
  readonly script: string
  readonly args: ReadonlyArray<string>
  /** Where checked graphs are kept (main: the home of the Core that answered); none: every run is checked in full. */
  readonly cache?: GraphCache
}

/** Test seams, between the steps the race runs through; never set in production. */
export interface PrepareHooks {
  /** After the workspace's graph was checked, before it is copied. */
  readonly afterCheck?: () => Promise<void>
  /** After the copy was verified (its graph checked, or its hashes those of a cached checked graph), before it runs. */
  readonly afterCopy?: () => Promise<void>
}

export interface Prepared {
  /** The private temp dir: the copy (`src/`), DENO_DIR, HOME and TMPDIR. Removed by `dispose`. */
  readonly dir: string
  /** The wall the run goes behind (bubblewrap may have turned out not to work here). */
  readonly wall: Wall
  readonly run: Launch
  readonly policy: Policy
  /** How many modules were copied. */
  readonly modules: number
  /** How the copy was verified: both `deno info` checks, or the hashes of the graph they last passed. */
  readonly graph: "checked" | "cached"
}

/** The errno code of a failed file system call, or the failure itself when it has none. */
const codeOf = (cause: unknown) => errnoOf(cause) ?? String(cause)

function pathInvalid(script: string, reason: string): never {
  return refuse(
    "SCRIPT_PATH_INVALID",
    `Script ${JSON.stringify(script)} cannot be run: ${reason}. Pass the path of a script file relative to the workspace (your working folder), e.g. \`pedelec-deno run scripts/job.ts\`.`,
    { path: script, reason }
  )
}

/** Why a script path is refused, in the words SCRIPT_PATH_INVALID carries. */
const REFUSALS = {
  nul: "it contains a NUL byte",
  absolute: "it is absolute",
  climbs: "it climbs out of the workspace with `..`",
  outside: "a symbolic link along it leads outside the workspace",
  // Deno would find nothing there either.
  dangling: "it does not exist"
} as const

/**
 * The common case, synchronously: a path with no `..` segment, NUL or leading `/` whose real path is a regular file
 * inside `root`. Anything else (undefined) goes to resolveInside, whose refusals are worded. Not resolveInside
 * itself: its awaited realpaths start libuv's thread pool (no other call of a cached run needs it) and load
 * fs/promises, 2-3 ms of a run's set-up measured under load.
 */
const plainScript = (root: string, script: string): string | undefined => {
  if (script === "" || script.includes("\0") || path.isAbsolute(script) || script.split(/[\\/]/).includes(".."))
    return undefined
  try {
    const real = realpathSync.native(path.join(root, script))
    return isInside(root, real) && statSync(real).isFile() ? real : undefined
  } catch {
    return undefined
  }
}

/** The script's real path, a regular file inside the workspace (`root`, a real path); SCRIPT_PATH_INVALID otherwise. */
export const resolveScript = async (root: string, script: string): Promise<string> => {
  const plain = plainScript(root, script)
  if (plain !== undefined) return plain
  const { resolveInside } = await import("@pedelec/path-guard/RealPath")
  const resolved = await resolveInside(root, script).catch((cause: unknown) =>
    pathInvalid(script, `it cannot be read (${codeOf(cause)})`)
  )
  if (resolved._tag === "Refused") return pathInvalid(script, REFUSALS[resolved.refusal])
  if (!resolved.exists) return pathInvalid(script, "it does not exist")
  if (!statSync(resolved.path).isFile()) return pathInvalid(script, "it is not a file")
  return resolved.path
}

/**
 * Behind the first wall alone, the symlinks of the workspace that lead out, to be denied by name (Deno checks paths
 * as written); `script` names the run in a refusal. Behind bubblewrap their targets do not exist: none.
 */
const deniedLinks = (wall: Wall, root: string, script: string): ReadonlyArray<string> => {
  if (wall.kind !== "none") return []
  const scan = outwardLinks(root)
  if (scan._tag === "TooMany")
    return pathInvalid(
      script,
      `the workspace has more than ${scan.seen - 1} files to check for symbolic links and bubblewrap is not available to wall it in; ask the user to install bubblewrap or to use a smaller workspace`
    )
  if (scan.links.some((link) => !listable(link)) || scan.links.join(",").length > 64 * 1024)
    pathInvalid(
      script,
      "the workspace has symbolic links leading out of it that Deno's permission flags cannot list; remove them, or ask the user to install bubblewrap"
    )
  return scan.links
}

/** `deno run` of the copy's entry: everything denied but reading the workspace and the copy, writing the workspace. */
const runArgs = (
  root: string,
  copy: string,
  entry: string,
  denied: ReadonlyArray<string>,
  args: ReadonlyArray<string>,
  caps: ResourceCaps
) => [
  "run",
  "--no-prompt",
  // DENO_DIR is fresh for every run: a V8 code cache written there is never read, only paid for at exit.
  "--no-code-cache",
  heapFlag(caps),
  ...NO_OUTSIDE_CODE,
  "--deny-import",
  "--deny-net",
  "--deny-env",
  "--deny-run",
  "--deny-ffi",
  "--deny-sys",
  `--allow-read=${root},${copy}`,
  `--allow-write=${root}`,
  ...(denied.length === 0 ? [] : [`--deny-read=${denied.join(",")}`, `--deny-write=${denied.join(",")}`]),
  entry,
  ...args
]

/** The real workspace, one Deno's comma-separated permission lists can name. */
const realWorkspace = async (request: ScriptRequest) => {
  let root: string
  try {
    root = realpathSync.native(request.policy.workspace)
  } catch {
    return pathInvalid(request.script, `the session's workspace ${request.policy.workspace} is gone`)
  }
  if (!listable(root))
    pathInvalid(request.script, "the workspace's path contains a comma, which Deno's permission flags cannot express")
  return root
}

type Layout = ReturnType<typeof privateLayout>

/** The graph checked in the workspace, copied, and the copy's checked again (nothing new in it): the full path. */
const checkedCopy = async (
  request: ScriptRequest,
  root: string,
  entry: string,
  layout: Layout,
  hooks: PrepareHooks
) => {
  const step = { deno: request.deno, env: layout.env, wall: request.wall }
  const checked = await graph({ ...step, mounts: { rw: [], ro: [root], scratch: layout.scratch } }, root, entry)
  await hooks.afterCheck?.()
  const copied = await copyGraph(root, layout.copy, checked.files)
  const script = path.relative(root, entry)
  if (!copied.has(script)) pathInvalid(request.script, "it disappeared while pedelec-deno checked it")
  const { wall } = await graph(
    { ...step, wall: checked.wall, mounts: { rw: [], ro: [layout.copy], scratch: layout.scratch } },
    layout.copy,
    path.join(layout.copy, script),
    new Set(checked.files)
  )
  return { wall, copied, complete: checked.files.every((file) => copied.has(file)) }
}

/**
 * Whether copying the cached graph's modules gave each the bytes that were checked. Any refusal of the copy (a
 * symlink, a module grown too large) just sends the run to the full path, which refuses it in its own words.
 */
const sameCopy = async (root: string, copy: string, known: Hashes) => {
  try {
    const copied = await copyGraph(root, copy, [...known.keys()])
    return copied.size === known.size && [...known].every(([file, hash]) => copied.get(file) === hash)
  } catch (error) {
    if (error instanceof Refused) return false
    throw error
  }
}

/** The cache entry's identity for this run, when a cache may be used for this workspace. */
const graphId = async (request: ScriptRequest, root: string, entry: string): Promise<GraphId | undefined> => {
  if (request.cache === undefined || !usableFor(request.cache, root)) return undefined
  let deno: string
  try {
    deno = denoIdentity(request.deno)
  } catch {
    return undefined
  }
  const wall = request.wall.kind === "bwrap" ? request.wall.bwrap : "none"
  return { workspace: root, entry: path.relative(root, entry), deno, wall }
}

/**
 * The private copy, verified: by hashes equal to a cached checked graph's, else by the full path, whose graph is
 * then cached (only when every module was there to copy, and the wall asked for is the one the check ran behind,
 * so a bubblewrap that failed once is not skipped on every later run).
 */
const verifiedCopy = async (
  request: ScriptRequest,
  root: string,
  entry: string,
  layout: Layout,
  hooks: PrepareHooks
) => {
  const id = await graphId(request, root, entry)
  const cache = id === undefined ? undefined : request.cache
  const known = cache === undefined || id === undefined ? undefined : await lookup(cache, id)
  if (known !== undefined) {
    if (await sameCopy(root, layout.copy, known))
      return { wall: request.wall, modules: known.size, graph: "cached" as const }
    rmSync(layout.copy, { recursive: true, force: true })
    mkdirSync(layout.copy, { mode: 0o700 })
  }
  const checked = await checkedCopy(request, root, entry, layout, hooks)
  if (cache !== undefined && id !== undefined && checked.complete && checked.wall.kind === request.wall.kind)
    await store(cache, id, checked.copied)
  return { wall: checked.wall, modules: checked.copied.size, graph: "checked" as const }
}

/** Verifies the copy (Script/GraphCache, or checks, copies and checks again); the run is for the copy. */
export const prepare = async (request: ScriptRequest, hooks: PrepareHooks = {}): Promise<Prepared> => {
  const root = await realWorkspace(request)
  const entry = await resolveScript(root, request.script)
  const dir = privateDir(root)
  try {
    const layout = privateLayout(dir)
    const { wall, modules, graph: how } = await verifiedCopy(request, root, entry, layout, hooks)
    await hooks.afterCopy?.()
    const denied = deniedLinks(wall, root, request.script)
    const copied = path.join(layout.copy, path.relative(root, entry))
    const run = launchDeno(
      wall,
      request.deno,
      runArgs(root, layout.copy, copied, denied, request.args, request.policy),
      {
        env: layout.env,
        cwd: root,
        mounts: { rw: [root], ro: [layout.copy], scratch: layout.scratch }
      }
    )
    return { dir, wall, run, policy: { ...request.policy, workspace: root }, modules, graph: how }
  } catch (error) {
    removeDir(dir)
    throw error
  }
}

export const dispose = async (prepared: Prepared): Promise<void> => removeDir(prepared.dir)
