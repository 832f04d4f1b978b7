/**
 * Sandbox — the second wall around Deno's own permissions. On Linux with bubblewrap, every Deno process pedelec-deno
 * starts sees a fresh root: /usr, the dynamic loader's files and the Deno binary read-only, the folders it is given
 * (the workspace, the private copy) at their own absolute paths (so Deno's permission flags stay valid), a tmpfs
 * /tmp and one for each of Deno's own state folders (DENO_DIR, HOME, TMPDIR: fresh, off the disk, gone with the
 * sandbox), /dev/null, and nothing else: no /proc, no /home, no network, no other processes (`--unshare-all`), dying
 * with its parent. Where bubblewrap is missing or cannot start here, the first wall stands alone, and `outwardLinks`
 * names the symlinks of the workspace that lead out so Deno's flags can deny them (Deno checks a path as written,
 * not where a symlink takes it).
 */
import { accessSync, constants, lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs"
import path from "node:path"
import { isInside } from "@pedelec/path-guard/Inside"
import type { Collected, Launch } from "./Processes.ts"

export type Wall = { readonly kind: "bwrap"; readonly bwrap: string } | { readonly kind: "none" }

/** Folders a Deno process gets besides the system's: read-write, then read-only (which may lie inside them). */
export interface Mounts {
  readonly rw: ReadonlyArray<string>
  readonly ro: ReadonlyArray<string>
  /**
   * Deno's own state (DENO_DIR, HOME, TMPDIR), fresh for every process: behind bubblewrap an empty tmpfs each at
   * that path (nothing written to disk, no sqlite fsync, nothing to remove, gone with the sandbox); behind the first
   * wall alone, read-write like `rw`.
   */
  readonly scratch: ReadonlyArray<string>
}

/** Synchronous: a few calls at the start of a run, each of which would cost an event loop turn. */
const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** bubblewrap from the system's usual places, then PATH; none off Linux. */
export const findWall = async (env: Readonly<Record<string, string | undefined>> = process.env): Promise<Wall> => {
  if (process.platform !== "linux") return { kind: "none" }
  const onPath = (env.PATH ?? "").split(path.delimiter).filter((dir) => path.isAbsolute(dir))
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin", ...onPath]) {
    const candidate = path.join(dir, "bwrap")
    if (executable(candidate)) return { kind: "bwrap", bwrap: candidate }
  }
  return { kind: "none" }
}

/** What every sandbox gets: the system's libraries and loader, read-only, as this machine lays them out. */
const systemMounts = (): Array<string> => {
  const args = ["--ro-bind", "/usr", "/usr"]
  for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
    const entry = lstatOrUndefined(top)
    if (entry?.isSymbolicLink()) args.push("--symlink", readlinkSync(top), top)
    else if (entry?.isDirectory()) args.push("--ro-bind", top, top)
  }
  for (const file of ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"])
    args.push("--ro-bind-try", file, file)
  return args
}

const lstatOrUndefined = (file: string) => {
  try {
    return lstatSync(file)
  } catch {
    return undefined
  }
}

let system: Array<string> | undefined

/** The command that runs `deno <args>` behind the wall, with `mounts`, in `cwd`, with exactly `env`. */
export const launchDeno = (
  wall: Wall,
  deno: string,
  args: ReadonlyArray<string>,
  options: { readonly env: Readonly<Record<string, string>>; readonly cwd: string; readonly mounts: Mounts }
): Launch => {
  if (wall.kind === "none") return { command: deno, args, env: options.env, cwd: options.cwd }
  system ??= systemMounts()
  const bwrapArgs = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    ...system,
    "--dir",
    "/dev",
    "--dev-bind",
    "/dev/null",
    "/dev/null",
    "--tmpfs",
    "/tmp",
    ...["--ro-bind", deno, deno],
    ...options.mounts.scratch.flatMap((dir) => ["--tmpfs", dir]),
    ...options.mounts.rw.flatMap((dir) => ["--bind", dir, dir]),
    ...options.mounts.ro.flatMap((dir) => ["--ro-bind", dir, dir]),
    "--chdir",
    options.cwd,
    "--",
    deno,
    ...args
  ]
  return { command: wall.bwrap, args: bwrapArgs, env: options.env, cwd: options.cwd }
}

/**
 * bubblewrap itself failed (no user namespaces here, a mount it cannot make) or Deno cannot load inside it: the run
 * goes on behind the first wall alone. Deno's own answers (even failures) are not this.
 */
export const wallBroken = (wall: Wall, result: Collected): boolean =>
  wall.kind === "bwrap" &&
  result.code !== 0 &&
  (result.spawnError !== undefined ||
    /^bwrap: /m.test(result.stderr) ||
    /error while loading shared libraries/.test(result.stderr))

/** How many entries of a workspace `outwardLinks` looks at before it gives up. */
export const SCAN_LIMIT = 200_000

export type Scan =
  | { readonly _tag: "Links"; readonly links: ReadonlyArray<string> }
  | { readonly _tag: "TooMany"; readonly seen: number }

/**
 * Every symlink under `root` that leads out of it, or nowhere (a later write through it could create a file
 * wherever it points). Symlinks are not followed; one that stays inside is fine.
 */
export const outwardLinks = (root: string, limit = SCAN_LIMIT): Scan => {
  const links: Array<string> = []
  const stack = [root]
  let seen = 0
  while (stack.length > 0) {
    const dir = stack.pop()!
    let entries: Array<import("node:fs").Dirent>
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      if (++seen > limit) return { _tag: "TooMany", seen }
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) stack.push(full)
      else if (entry.isSymbolicLink()) {
        let real: string | undefined
        try {
          real = realpathSync(full)
        } catch {
          real = undefined
        }
        if (real === undefined || !isInside(root, real)) links.push(full)
      }
    }
  }
  return { _tag: "Links", links }
}
