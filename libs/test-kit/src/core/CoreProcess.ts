/**
 * CoreProcess — the built headless Core (`apps/core-daemon/bin/pedelec-core`) as a child process of a test, the
 * self-test or a bench: started for one home with pedelec-cli first on its agents' PATH, ready once it has announced
 * itself in `run/core.json` (decoded by core-client, as every client reads it), and stopped with SIGTERM, then
 * SIGKILL after a grace period. Also stops a Core someone else started for a home (a native host's detached one),
 * by its announced pid. What the Core is configured with (the scripted agent, settings) is the caller's business.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { NodeFileSystem } from "@effect/platform-node"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { type CorePathsShape, pathsForHome } from "@pedelec/core-client/HomeLayout"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import { readRuntimeInfo } from "@pedelec/core-client/RuntimeFile"
import * as Effect from "effect/Effect"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** The built programs in this checkout: `npx nx run core-daemon:build` and `npx nx run cli:build` make them. */
export const BUILT = {
  coreBin: path.join(root, "apps/core-daemon/bin/pedelec-core"),
  cliBinDir: path.join(root, "apps/cli/bin")
} as const

const READY_TIMEOUT_MS = 15_000
const GRACE_MS = 10_000
const POLL_MS = 50

export interface CoreProcessOptions {
  readonly home: string
  /** On top of this process's environment and `PEDELEC_BIN_DIR` (the built pedelec-cli). */
  readonly env?: Readonly<Record<string, string>>
  /** Kept for failure reports (the default), or passed through to this process's stderr (benches). */
  readonly stderr?: "keep" | "inherit"
}

export interface CoreProcess {
  readonly home: string
  readonly paths: CorePathsShape
  readonly child: ChildProcess
  /** Its announcement, as read once it was ready. */
  readonly info: CoreRuntimeInfo
  /** What it wrote to stderr so far (empty with `stderr: "inherit"`). */
  readonly stderr: () => string
  /** Sends `signal` (SIGTERM by default: a clean stop) and waits for the exit; SIGKILL after `graceMs`. */
  readonly stop: (options?: { readonly signal?: NodeJS.Signals; readonly graceMs?: number }) => Promise<void>
}

/** The announcement in a home's `run/core.json`, decoded; undefined when there is none a client would use. */
export const announcement = (home: string): Promise<CoreRuntimeInfo | undefined> =>
  Effect.runPromise(
    readRuntimeInfo(pathsForHome(home).runtimeFile).pipe(
      Effect.provide(NodeFileSystem.layer),
      Effect.orElseSucceed(() => undefined)
    )
  )

/**
 * The `pid` of whatever a home's `run/core.json` holds, an announcement or not: for a suite that planted a stale,
 * partial file and checks it was left alone. Clients never read it this way (`announcement`).
 */
export const plantedPid = async (home: string): Promise<number | undefined> => {
  try {
    const json: unknown = JSON.parse(await readFile(pathsForHome(home).runtimeFile, "utf8"))
    return typeof json === "object" && json !== null && "pid" in json && typeof json.pid === "number"
      ? json.pid
      : undefined
  } catch {
    return undefined
  }
}

/** The announcement of a Core that runs now for `home` (started by anyone: a test, a native host, the desktop app). */
export const liveCore = async (home: string): Promise<CoreRuntimeInfo | undefined> => {
  const info = await announcement(home)
  return info !== undefined && isProcessAlive(info.pid) ? info : undefined
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Signals a pid that is not our child (a detached Core) and polls until it is gone; SIGKILL after `graceMs`. */
export const terminate = async (pid: number, graceMs = GRACE_MS, signal: NodeJS.Signals = "SIGTERM") => {
  if (!isProcessAlive(pid)) return
  process.kill(pid, signal)
  for (let waited = 0; waited < graceMs && isProcessAlive(pid); waited += POLL_MS) await sleep(POLL_MS)
  if (isProcessAlive(pid)) process.kill(pid, "SIGKILL")
}

/** Stops whatever Core serves `home` now, by its announced pid: a detached Core outlives whoever started it. */
export const stopLiveCore = async (home: string, graceMs = GRACE_MS) => {
  const live = await liveCore(home)
  if (live !== undefined) await terminate(live.pid, graceMs)
}

const stopChild =
  (child: ChildProcess) =>
  async (options: Parameters<CoreProcess["stop"]>[0] = {}) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exit = exited(child)
    child.kill(options.signal ?? "SIGTERM")
    const graceMs = options.graceMs ?? GRACE_MS
    const timer = sleep(graceMs).then(() => "late" as const)
    if ((await Promise.race([exit, timer])) === "late") child.kill("SIGKILL")
    await exit
  }

/** Its announcement once `run/core.json` names this child; undefined if it exits or stays silent first. */
const ready = async (child: ChildProcess, home: string, timeoutMs: number) => {
  for (let waited = 0; waited < timeoutMs; waited += POLL_MS) {
    const info = await announcement(home)
    if (info !== undefined && info.pid === child.pid) return info
    if (child.exitCode !== null || child.signalCode !== null) return undefined
    await sleep(POLL_MS)
  }
  return undefined
}

/** Starts the built Core for `options.home` and resolves once it has announced itself; throws with its stderr. */
export const startCoreProcess = async (options: CoreProcessOptions): Promise<CoreProcess> => {
  const keep = options.stderr !== "inherit"
  const child = spawn(process.execPath, [BUILT.coreBin, "--home", options.home], {
    env: { ...process.env, PEDELEC_BIN_DIR: BUILT.cliBinDir, ...options.env },
    stdio: ["ignore", "ignore", keep ? "pipe" : "inherit"]
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const stop = stopChild(child)
  const info = await ready(child, options.home, READY_TIMEOUT_MS)
  if (info === undefined) {
    await stop({ signal: "SIGKILL" })
    throw new Error(`pedelec-core did not start for ${options.home} (built? npx nx run core-daemon:build):\n${stderr}`)
  }
  return { home: options.home, paths: pathsForHome(options.home), child, info, stderr: () => stderr, stop }
}
