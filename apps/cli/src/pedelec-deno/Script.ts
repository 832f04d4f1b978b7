/**
 * Script — everything before a script runs: its path (workspace-relative, really inside the workspace), its module
 * graph (`deno info`: every module a `file:` of the workspace, else SCRIPT_IMPORT_DENIED naming it), a private copy
 * of that graph (a 0700 temp dir outside the workspace), the graph of the copy checked again (every module inside
 * the copy, and one of those checked), and the `deno run` command for the copy. Deno does not check the permissions
 * of a script's static imports (research/toolchain.md §7): the checks here, on the very files that run, close that.
 * A file changed between the check and the copy is caught by the second check; one changed later is not what runs.
 * Reading the graph is Script/Graph's.
 */
import { constants } from "node:fs"
import { mkdir, mkdtemp, open, realpath, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { isInside } from "@pedelec/path-guard/Inside"
import { resolveInside } from "@pedelec/path-guard/RealPath"
import { errnoOf } from "../Reach.ts"
import { denoUnavailable, Refused, refuse } from "./Failure.ts"
import type { Launch } from "./Processes.ts"
import { launchDeno, outwardLinks, type Wall } from "./Sandbox.ts"
import { graph, importDenied, LIMITS, NO_OUTSIDE_CODE } from "./Script/Graph.ts"
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
}

/** Test seams, between the steps the race runs through; never set in production. */
export interface PrepareHooks {
  /** After the workspace's graph was checked, before it is copied. */
  readonly afterCheck?: () => Promise<void>
  /** After the copy's graph was checked, before it runs. */
  readonly afterCopy?: () => Promise<void>
}

export interface Prepared {
  /** The private temp dir: the copy (`src/`), DENO_DIR, HOME and TMPDIR. Removed by `dispose`. */
  readonly dir: string
  /** The wall the run goes behind (bubblewrap may have turned out not to work here). */
  readonly wall: Wall
  readonly run: Launch
  readonly policy: Policy
  /** How many modules were checked and copied. */
  readonly modules: number
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

/** Deno takes permission lists comma-separated, with no escape for a comma in a path. */
const listable = (dir: string) => !dir.includes(",")

/** Why a script path is refused, in the words SCRIPT_PATH_INVALID carries. */
const REFUSALS = {
  nul: "it contains a NUL byte",
  absolute: "it is absolute",
  climbs: "it climbs out of the workspace with `..`",
  outside: "a symbolic link along it leads outside the workspace",
  // Deno would find nothing there either.
  dangling: "it does not exist"
} as const

/** The script's real path, a regular file inside the workspace (`root`, a real path); SCRIPT_PATH_INVALID otherwise. */
export const resolveScript = async (root: string, script: string): Promise<string> => {
  const resolved = await resolveInside(root, script).catch((cause: unknown) =>
    pathInvalid(script, `it cannot be read (${codeOf(cause)})`)
  )
  if (resolved._tag === "Refused") return pathInvalid(script, REFUSALS[resolved.refusal])
  if (!resolved.exists) return pathInvalid(script, "it does not exist")
  if (!(await stat(resolved.path)).isFile()) return pathInvalid(script, "it is not a file")
  return resolved.path
}

/** The private dirs of this process not yet removed, for a SIGINT/SIGTERM to clean up. */
export const privateDirs = new Set<string>()

/** A temp dir outside the workspace: inside it, a script could change the copy between its check and its run. */
const privateDir = async (root: string): Promise<string> => {
  for (const base of [os.tmpdir(), "/tmp", "/var/tmp", "/dev/shm"]) {
    const real = await realpath(base).catch(() => undefined)
    if (real === undefined || isInside(root, real) || !listable(real)) continue
    const dir = await mkdtemp(path.join(real, "pedelec-deno-")).catch(() => undefined)
    if (dir !== undefined) {
      privateDirs.add(dir)
      return dir
    }
  }
  throw new Refused(
    denoUnavailable("there is no temporary folder outside the workspace for the script's private copy", {
      workspace: root
    })
  )
}

/**
 * Copies one checked module into the copy: opened first, then its real path must be inside the workspace and be
 * the very file that was opened (a symlink swapped in meanwhile is caught). Missing files are left to Deno.
 */
const copyModule = async (root: string, copy: string, relative: string, budget: { bytes: number }) => {
  const source = path.join(root, relative)
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(source, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (cause) {
    if (errnoOf(cause) === "ENOENT" || errnoOf(cause) === "ENOTDIR") return false
    return importDenied(relative, `cannot be read (${codeOf(cause)})`)
  }
  try {
    const opened = await handle.stat()
    const real = await realpath(source).catch(() => undefined)
    const there = real === undefined ? undefined : await stat(real).catch(() => undefined)
    if (real === undefined || !isInside(root, real) || there?.ino !== opened.ino || there.dev !== opened.dev)
      importDenied(relative, "is a symbolic link that leads outside the workspace")
    if (!opened.isFile()) importDenied(relative, "is not a regular file")
    budget.bytes -= opened.size
    if (budget.bytes < 0) importDenied(relative, `takes the script's imports over ${LIMITS.graphBytes} bytes`)
    const bytes = await handle.readFile()
    const target = path.join(copy, relative)
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
    await writeFile(target, bytes, { flag: "wx", mode: 0o400 })
    return true
  } finally {
    await handle.close()
  }
}

/** The private dir's parts: the copy, and DENO_DIR, HOME and TMPDIR (read-write for Deno), created 0700. */
const privateLayout = async (dir: string) => {
  const copy = path.join(dir, "src")
  const state = { deno: path.join(dir, "deno"), home: path.join(dir, "home"), tmp: path.join(dir, "tmp") }
  for (const sub of [copy, state.deno, state.home, state.tmp]) await mkdir(sub, { mode: 0o700 })
  const env = {
    DENO_DIR: state.deno,
    HOME: state.home,
    TMPDIR: state.tmp,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PROMPT: "1"
  }
  return { copy, env, rw: [state.deno, state.home, state.tmp] }
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

/** The checked graph copied into `copy`; the workspace-relative names of the modules copied. */
const copyGraph = async (root: string, copy: string, files: ReadonlyArray<string>) => {
  const budget = { bytes: LIMITS.graphBytes }
  const copied = new Set<string>()
  for (const relative of new Set(files)) if (await copyModule(root, copy, relative, budget)) copied.add(relative)
  return copied
}

/** The real workspace, one Deno's comma-separated permission lists can name. */
const realWorkspace = async (request: ScriptRequest) => {
  const root = await realpath(request.policy.workspace).catch(() =>
    pathInvalid(request.script, `the session's workspace ${request.policy.workspace} is gone`)
  )
  if (!listable(root))
    pathInvalid(request.script, "the workspace's path contains a comma, which Deno's permission flags cannot express")
  return root
}

/** Checks, copies and checks again; the returned run is for the copy. Throws `Refused` with the reason. */
export const prepare = async (request: ScriptRequest, hooks: PrepareHooks = {}): Promise<Prepared> => {
  const root = await realWorkspace(request)
  const entry = await resolveScript(root, request.script)
  const dir = await privateDir(root)
  try {
    const { copy, env, rw } = await privateLayout(dir)
    const step = { deno: request.deno, env, wall: request.wall }
    const checked = await graph({ ...step, mounts: { rw, ro: [root] } }, root, entry)
    await hooks.afterCheck?.()
    const copied = await copyGraph(root, copy, checked.files)
    const script = path.relative(root, entry)
    if (!copied.has(script)) pathInvalid(request.script, "it disappeared while pedelec-deno checked it")
    const known = new Set(checked.files)
    const { wall } = await graph(
      { ...step, wall: checked.wall, mounts: { rw, ro: [copy] } },
      copy,
      path.join(copy, script),
      known
    )
    await hooks.afterCopy?.()
    const denied = deniedLinks(wall, root, request.script)
    const run = launchDeno(
      wall,
      request.deno,
      runArgs(root, copy, path.join(copy, script), denied, request.args, request.policy),
      {
        env,
        cwd: root,
        mounts: { rw: [...rw, root], ro: [copy] }
      }
    )
    return { dir, wall, run, policy: { ...request.policy, workspace: root }, modules: copied.size }
  } catch (error) {
    await removeDir(dir)
    throw error
  }
}

const removeDir = async (dir: string) => {
  await rm(dir, { recursive: true, force: true })
  privateDirs.delete(dir)
}

export const dispose = (prepared: Prepared): Promise<void> => removeDir(prepared.dir)
