/**
 * FullDisk — the built Core on a disk a test can fill: pedelec-core runs in bubblewrap with a small tmpfs (2 MiB by
 * default) as its PEDELEC_HOME, no root needed, restarted by a shell loop inside the same sandbox so the tmpfs
 * outlives any one Core. This process reaches the home (and the socket in it) through /proc/<pid>/root of the
 * sandbox's shell, fills the tmpfs to its last page and empties it again, and checks that settings.json and the
 * session records are whole. It owns the sandbox's life (start, restart a Core, stop); it does NOT configure Core
 * (settings, the scripted agent's switch: the caller's env and calls) nor decide what a full disk must do.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdir, mkdtemp, open, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { Settings } from "@pedelec/contracts/Settings"
import * as Schema from "effect/Schema"
import { announcement, BUILT, terminate } from "./CoreProcess.ts"

const DEFAULT_BYTES = 2 * 1024 * 1024
const PAGE = 4096
const ANNOUNCE_TIMEOUT_MS = 20_000
const POLL_MS = 50

/** What `wholeFiles` found: how many files it read whole, and which it could not. */
export interface FilesCheck {
  /** Session records (`sessions/<id>.json`) that parse and name their own session. */
  readonly records: number
  /** settings.json parsed and decoded as Settings (false when it is missing: nothing to check). */
  readonly settings: boolean
  /** Every file that is truncated, corrupted or not what its name says, with why. */
  readonly broken: ReadonlyArray<string>
}

export interface FullDisk {
  /** The home as the sandbox sees it (and names it in core.json). */
  readonly home: string
  /** The same home as this process reaches it: through the mount namespace of the sandbox's shell. */
  readonly view: string
  /** What the sandbox (bwrap, the loop, every Core) wrote to stderr so far. */
  readonly stderr: () => string
  /**
   * The announcement of the Core serving the home (other than `notPid`), its socket as this process reaches it;
   * rejects after `timeoutMs` (20 s by default) without one.
   */
  readonly core: (notPid?: number, timeoutMs?: number) => Promise<CoreRuntimeInfo>
  /** Stops the running Core (SIGTERM, or `signal`) and resolves with the one the loop starts next. */
  readonly restart: (signal?: NodeJS.Signals) => Promise<CoreRuntimeInfo>
  /** Fills the tmpfs to its last page; resolves with the bytes the filler took. */
  readonly fill: () => Promise<number>
  /** Removes the filler: the home has room again. */
  readonly unfill: () => Promise<void>
  readonly wholeFiles: () => Promise<FilesCheck>
  /** Ends the loop and the Core, waits for the sandbox to exit and removes its directory. */
  readonly stop: () => Promise<void>
}

export interface FullDiskOptions {
  /** The tmpfs's size; 2 MiB by default. */
  readonly bytes?: number
  /** On top of this process's environment and `PEDELEC_BIN_DIR` (the built pedelec-cli). */
  readonly env?: Readonly<Record<string, string>>
}

/** Whether this machine runs bubblewrap sandboxes (a test skips itself when not). */
export const canSandbox = (): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const probe = spawn("bwrap", ["--dev-bind", "/", "/", "true"], { stdio: "ignore" })
    probe.on("error", () => resolve(false))
    probe.on("exit", (code) => resolve(code === 0))
  })

/** The sandbox's shell, once bwrap reports it (`--info-fd`). */
const shellPid = (bwrap: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let text = ""
    const info = bwrap.stdio[3] as NodeJS.ReadableStream
    info.setEncoding("utf8")
    info.on("data", (chunk: string) => {
      text += chunk
      const match = /"child-pid":\s*(\d+)/.exec(text)
      if (match) resolve(Number(match[1]))
    })
    bwrap.once("exit", () => reject(new Error("bwrap exited before it started the sandbox")))
  })

const isFull = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOSPC"

/** Whole chunks until refused, then whole pages, then a byte (which needs a page of its own). */
const fillFile = async (file: string) => {
  const handle = await open(file, "a")
  let written = 0
  try {
    for (const size of [256 * 1024, PAGE, 1]) {
      const chunk = Buffer.alloc(size, 0x78)
      while (true) {
        try {
          written += (await handle.write(chunk)).bytesWritten
        } catch (error) {
          if (isFull(error)) break
          throw error
        }
      }
    }
  } finally {
    await handle.close()
  }
  return written
}

const entries = (dir: string) => readdir(dir).catch(() => [] as Array<string>)

const isSettings = Schema.is(Settings)

const recordProblem = async (file: string, sessionId: string): Promise<string | undefined> => {
  try {
    const record: unknown = JSON.parse(await readFile(file, "utf8"))
    const named = typeof record === "object" && record !== null && "sessionId" in record ? record.sessionId : undefined
    return named === sessionId ? undefined : `sessions/${sessionId}.json names ${String(named)}`
  } catch (error) {
    return `sessions/${sessionId}.json: ${String(error).slice(0, 120)}`
  }
}

const settingsProblem = async (file: string): Promise<string | undefined> => {
  try {
    return isSettings(JSON.parse(await readFile(file, "utf8"))) ? undefined : "settings.json: not Settings"
  } catch (error) {
    return `settings.json: ${String(error).slice(0, 120)}`
  }
}

/** Reads every session record and settings.json as a client of the home would: whole, or named as broken. */
const checkFiles = async (view: string): Promise<FilesCheck> => {
  const sessions = path.join(view, "sessions")
  const ids = (await entries(sessions)).filter((name) => name.endsWith(".json")).map((name) => name.slice(0, -5))
  const problems = await Promise.all(ids.map((id) => recordProblem(path.join(sessions, `${id}.json`), id)))
  const settingsFile = path.join(view, "settings.json")
  const hasSettings = (await entries(view)).includes("settings.json")
  const settings = hasSettings ? await settingsProblem(settingsFile) : undefined
  const broken = [...problems, settings].filter((problem): problem is string => problem !== undefined)
  return {
    records: problems.filter((problem) => problem === undefined).length,
    settings: hasSettings && !settings,
    broken
  }
}

const announced = async (home: string, view: string, stderr: () => string, notPid?: number, timeoutMs?: number) => {
  for (let waited = 0; waited < (timeoutMs ?? ANNOUNCE_TIMEOUT_MS); waited += POLL_MS) {
    const info = await announcement(view)
    if (info !== undefined && info.pid !== notPid) {
      return { ...info, socketPath: path.join(view, path.relative(home, info.socketPath)) }
    }
    await sleep(POLL_MS)
  }
  throw new Error(`no Core announced itself in the sandbox:\n${stderr().slice(-2000)}`)
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Starts the sandbox and its first Core; resolves once this process can reach the home. */
export const startFullDisk = async (options: FullDiskOptions = {}): Promise<FullDisk> => {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-disk-")))
  const home = path.join(root, "home")
  const stopFile = path.join(root, "stop")
  await mkdir(home)
  // Restarts Core whenever it exits, until the stop file exists: the tmpfs lives as long as the sandbox.
  const loop = 'while [ ! -e "$1" ]; do "$2" "$3" --home "$4"; sleep 0.1; done'
  const size = String(options.bytes ?? DEFAULT_BYTES)
  const args = ["--dev-bind", "/", "/", "--size", size, "--tmpfs", home, "--info-fd", "3", "--"]
  const bwrap = spawn("bwrap", [...args, "sh", "-c", loop, "sh", stopFile, process.execPath, BUILT.coreBin, home], {
    env: { ...process.env, PEDELEC_BIN_DIR: BUILT.cliBinDir, ...options.env },
    stdio: ["ignore", "ignore", "pipe", "pipe"]
  })
  let stderrText = ""
  bwrap.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderrText += chunk
  })
  const stderr = () => stderrText
  const view = `/proc/${await shellPid(bwrap)}/root${home}`
  const filler = path.join(view, "filler")
  const core = (notPid?: number, timeoutMs?: number) => announced(home, view, stderr, notPid, timeoutMs)
  const restart = async (signal: NodeJS.Signals = "SIGTERM") => {
    const old = await core()
    await terminate(old.pid, 10_000, signal)
    return core(old.pid)
  }
  const stop = async () => {
    await writeFile(stopFile, "")
    const live = await announcement(view)
    if (live !== undefined) await terminate(live.pid)
    await exited(bwrap)
    await rm(root, { recursive: true, force: true })
  }
  await core().catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return {
    home,
    view,
    stderr,
    core,
    restart,
    fill: () => fillFile(filler),
    unfill: () => rm(filler, { force: true }),
    wholeFiles: () => checkFiles(view),
    stop
  }
}
