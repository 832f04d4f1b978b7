/**
 * Script/Graph — a script's module graph as `deno info` lists it, behind the same wall the run will have: every
 * module a built-in or a `file:` inside the folder checked (the workspace, or the private copy), at most LIMITS of
 * them, and for the copy nothing the workspace's graph did not have; SCRIPT_IMPORT_DENIED naming the module
 * otherwise. It does not copy modules or run the script (Script).
 */
import path from "node:path"
import { fileURLToPath } from "node:url"
import { isInside } from "@pedelec/path-guard/Inside"
import { denoUnavailable, Refused, refuse } from "../Failure.ts"
import { collect } from "../Processes.ts"
import { launchDeno, type Mounts, type Wall, wallBroken } from "../Sandbox.ts"

export const LIMITS = {
  /** `deno info` on a local graph takes well under a second; this stops one reading a device or a FIFO. */
  checkTimeoutMs: 15_000,
  infoBytes: 64 * 1024 * 1024,
  modules: 10_000,
  graphBytes: 64 * 1024 * 1024
} as const

/** The flags both Deno commands share: no config, lock file, remote or npm modules. */
export const NO_OUTSIDE_CODE = ["--no-config", "--no-lock", "--no-remote", "--no-npm"]

export function importDenied(specifier: string, reason: string): never {
  return refuse(
    "SCRIPT_IMPORT_DENIED",
    `Script imports ${specifier}, which ${reason}. Import only files of the workspace (no npm:, jsr:, https: or paths outside it); read other data at run time with Deno.readTextFile.`,
    { specifier, reason }
  )
}

interface Module {
  readonly specifier: string
  readonly kind?: string
  readonly error?: string
}

const modulesOf = (stdout: string): ReadonlyArray<Module> | undefined => {
  try {
    const parsed = JSON.parse(stdout) as { modules?: unknown }
    if (!Array.isArray(parsed.modules)) return undefined
    return parsed.modules.filter(
      (m): m is Module => typeof m === "object" && m !== null && typeof (m as Module).specifier === "string"
    )
  } catch {
    return undefined
  }
}

/** Node's built-in modules are Deno's own code, gated by the same permissions; anything else must be a file. */
const isBuiltin = (module: Module) => module.kind === "node" || module.specifier.startsWith("node:")

/**
 * The workspace-relative path of every module of the graph rooted at `entry`, each a file inside `root` (the
 * workspace, or the copy). `known`, for the copy: the modules the workspace's graph had; any other is refused.
 */
export const graph = async (
  step: { readonly deno: string; readonly wall: Wall; readonly env: Record<string, string>; readonly mounts: Mounts },
  root: string,
  entry: string,
  known?: ReadonlySet<string>
): Promise<{ readonly files: ReadonlyArray<string>; readonly wall: Wall }> => {
  const run = (wall: Wall) =>
    collect(
      launchDeno(wall, step.deno, ["info", "--json", ...NO_OUTSIDE_CODE, entry], {
        env: step.env,
        cwd: root,
        mounts: step.mounts
      }),
      { timeoutMs: LIMITS.checkTimeoutMs, maxStdout: LIMITS.infoBytes }
    )
  let wall = step.wall
  let result = await run(wall)
  if (wallBroken(wall, result)) {
    wall = { kind: "none" }
    result = await run(wall)
  }
  if (result.spawnError !== undefined)
    throw new Refused(denoUnavailable(`its Deno runtime did not start (${result.spawnError})`, { path: step.deno }))
  if (result.timedOut)
    refuse(
      "SCRIPT_TIMEOUT",
      `Checking the script's imports took longer than ${LIMITS.checkTimeoutMs} ms and was stopped (does it import a device or a pipe?). Import only ordinary files of the workspace.`,
      { timeoutMs: LIMITS.checkTimeoutMs, phase: "check" }
    )
  const modules = result.code === 0 ? modulesOf(result.stdout) : undefined
  if (modules === undefined)
    refuse(
      "SCRIPT_FAILED",
      `Deno could not list the script's imports (deno info exited ${result.code ?? result.signal}${result.overflow ? ", its answer was too large" : ""}). Check that the script is JavaScript or TypeScript.`,
      { exitCode: result.code ?? -1, phase: "check" }
    )
  if (modules.length > LIMITS.modules)
    importDenied(`${modules.length} modules`, `is more than the ${LIMITS.modules} modules a script may have`)
  const files: Array<string> = []
  for (const module of modules) {
    if (isBuiltin(module)) continue
    if (!module.specifier.startsWith("file:"))
      importDenied(module.specifier, "is remote or from a package registry, and scripts run without network")
    const file = fileURLToPath(module.specifier)
    if (!isInside(root, file)) importDenied(module.specifier, "is outside the workspace")
    const relative = path.relative(root, file)
    if (known !== undefined && !known.has(relative))
      importDenied(
        relative,
        "was not among the imports pedelec-deno checked (a file changed while it checked the script); run it again once nothing edits it"
      )
    files.push(relative)
  }
  return { files, wall }
}
