/**
 * Script/PrivateDir — where a run's private dir goes and what it holds: a 0700 temp dir outside the workspace (in
 * TMPDIR when it is set, else /dev/shm when it is a tmpfs with room, else /tmp or /var/tmp) with the copy (`src/`)
 * and Deno's own DENO_DIR, HOME and TMPDIR, and its removal. It does not copy or check anything (Script, Script/Copy)
 * nor mount anything (Sandbox: behind bubblewrap Deno's state is a tmpfs of the sandbox at those paths).
 * Synchronous: a few calls on small paths, each of which would cost an event loop turn on a run's critical path.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmdirSync, rmSync, statfsSync, unlinkSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { isInside } from "@pedelec/path-guard/Inside"
import { denoUnavailable, Refused } from "../Failure.ts"
import { LIMITS } from "./Graph.ts"

/** The private dirs of this process not yet removed, for a SIGINT/SIGTERM to clean up. */
export const privateDirs = new Set<string>()

/** Deno takes permission lists comma-separated, with no escape for a comma in a path. */
export const listable = (dir: string) => !dir.includes(",")

const TMPFS_MAGIC = 0x01021994

/** What `f` returns, or undefined when it throws (a path that is not there). */
const attempt = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

/**
 * /dev/shm when it is a tmpfs with room for twice the largest graph (a container's is often 64 MiB): making,
 * filling and removing the private dir there takes a fraction of a millisecond, against 2 to 13 ms in a busy /tmp
 * on disk (measured, ext4, 2 cores under load).
 */
const memoryDir = (): ReadonlyArray<string> => {
  if (process.platform !== "linux") return []
  const fs = attempt(() => statfsSync("/dev/shm"))
  return fs !== undefined && fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= 2 * LIMITS.graphBytes
    ? ["/dev/shm"]
    : []
}

/** A temp dir outside the workspace `root`: inside it, a script could change the copy between its check and its run. */
export const privateDir = (root: string): string => {
  const chosen = process.env.TMPDIR ? [os.tmpdir()] : []
  for (const base of [...chosen, ...memoryDir(), os.tmpdir(), "/tmp", "/var/tmp", "/dev/shm"]) {
    const real = attempt(() => realpathSync.native(base))
    if (real === undefined || isInside(root, real) || !listable(real)) continue
    const dir = attempt(() => mkdtempSync(path.join(real, "pedelec-deno-")))
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

/** The private dir's parts, created 0700: the copy, and DENO_DIR, HOME and TMPDIR (Deno's own scratch). */
export const privateLayout = (dir: string) => {
  const copy = path.join(dir, "src")
  const state = { deno: path.join(dir, "deno"), home: path.join(dir, "home"), tmp: path.join(dir, "tmp") }
  for (const sub of [copy, state.deno, state.home, state.tmp]) mkdirSync(sub, { mode: 0o700 })
  const env = {
    DENO_DIR: state.deno,
    HOME: state.home,
    TMPDIR: state.tmp,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PROMPT: "1"
  }
  return { copy, env, scratch: [state.deno, state.home, state.tmp] }
}

/** `dir` and everything under it, symlinks removed not followed; throws on anything it cannot remove. */
const removeTree = (dir: string): void => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) removeTree(full)
    else unlinkSync(full)
  }
  rmdirSync(dir)
}

/**
 * A handful of entries (Deno's state is a tmpfs behind bubblewrap), removed by hand: rmSync's first call loads
 * Node's rimraf, about 1.5 ms after the script has ended. Whatever that cannot remove is rmSync's (it retries).
 */
export const removeDir = (dir: string): void => {
  try {
    removeTree(dir)
  } catch {
    rmSync(dir, { recursive: true, force: true })
  }
  privateDirs.delete(dir)
}
