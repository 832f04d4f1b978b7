/**
 * Core — the built headless Core (`apps/core-daemon/bin/pedelec-core`) as a child process for one Pedelec home: the
 * scripted provider enabled and made the default on request (written to settings.json before start, which Core
 * reads on every call), pedelec-cli on the agents' PATH, stderr kept for failure reports. Stopping it also stops a
 * Core the native host may have started for the same home, by the pid in run/core.json, so no daemon outlives a run.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { DEFAULT_SETTINGS, type Settings } from "@pedelec/contracts/Settings"
import { LAYOUT } from "./Layout.ts"

export interface CoreOptions {
  readonly home: string
  /** Written into settings.json before Core starts; leaves an existing settings.json alone when undefined. */
  readonly defaultProvider?: Settings["defaultProvider"]
  /** `PEDELEC_ENABLE_SCRIPTED=1`: the scripted test agent exists (tests and the self-test only). */
  readonly enableScripted?: boolean
  readonly env?: Readonly<Record<string, string>>
}

export interface RunningCore {
  readonly home: string
  readonly pid: number
  readonly stderr: () => string
  readonly stop: () => Promise<void>
}

interface RuntimeInfo {
  readonly pid: number
}

export const runtimeInfo = async (home: string): Promise<RuntimeInfo | undefined> => {
  try {
    return JSON.parse(await readFile(path.join(home, "run", "core.json"), "utf8")) as RuntimeInfo
  } catch {
    return undefined
  }
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pid of a live Core serving `home`, if any (started by someone else: the desktop app, a native host). */
export const liveCore = async (home: string): Promise<number | undefined> => {
  const info = await runtimeInfo(home)
  return info !== undefined && isAlive(info.pid) ? info.pid : undefined
}

const writeDefaultProvider = async (home: string, provider: Settings["defaultProvider"]) => {
  await mkdir(home, { recursive: true, mode: 0o700 })
  const settings: Settings = { ...DEFAULT_SETTINGS, defaultProvider: provider }
  await writeFile(path.join(home, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o644 })
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** SIGTERM (a clean stop ends sessions and kills their agents), SIGKILL if it is still there after `graceMs`. */
const terminate = async (pid: number, graceMs: number) => {
  if (!isAlive(pid)) return
  process.kill(pid, "SIGTERM")
  for (let waited = 0; waited < graceMs && isAlive(pid); waited += 50) await sleep(50)
  if (isAlive(pid)) process.kill(pid, "SIGKILL")
}

export const startCore = async (options: CoreOptions): Promise<RunningCore> => {
  if (options.defaultProvider !== undefined) await writeDefaultProvider(options.home, options.defaultProvider)
  const child = spawn(process.execPath, [LAYOUT.coreBin, "--home", options.home], {
    env: {
      ...process.env,
      PEDELEC_HOME: options.home,
      PEDELEC_BIN_DIR: LAYOUT.cliBinDir,
      ...(options.enableScripted ? { PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_SCRIPTED_AGENT: LAYOUT.scriptedAgent } : {}),
      ...options.env
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const stop = async () => {
    if (child.pid !== undefined) await terminate(child.pid, 10_000)
    await exited(child)
    // A Core the native host started on its own (ours had died) is detached: only its pid reaches it.
    const other = await liveCore(options.home)
    if (other !== undefined) await terminate(other, 10_000)
  }
  for (let waited = 0; waited < 15_000; waited += 50) {
    const info = await runtimeInfo(options.home)
    if (info !== undefined && info.pid === child.pid)
      return { home: options.home, pid: info.pid, stderr: () => stderr, stop }
    if (child.exitCode !== null) break
    await sleep(50)
  }
  await stop()
  throw new Error(`pedelec-core did not start for ${options.home}:\n${stderr}`)
}
