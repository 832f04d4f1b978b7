/**
 * Processes — how pedelec-deno starts Deno (directly or through bubblewrap): each in its own process group with
 * exactly the environment it is given, killed as a group at its deadline. `collect` is for `deno info` (output
 * gathered, capped); Run streams the script's own output.
 */
import { type ChildProcess, spawn } from "node:child_process"

export interface Launch {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The whole environment: nothing of pedelec-deno's own is passed on. */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
}

export interface Collected {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  /** The process could not be started (ENOENT, EACCES…). */
  readonly spawnError?: string
  /** stdout passed its cap and the process was stopped. */
  readonly overflow: boolean
}

/** SIGKILL to the child's whole group (it leads one: `detached`). */
export const killGroup = (child: ChildProcess): void => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch {
    child.kill("SIGKILL")
  }
}

export const start = (launch: Launch, stdin: "ignore" | "inherit"): ChildProcess =>
  spawn(launch.command, [...launch.args], {
    cwd: launch.cwd,
    env: launch.env,
    detached: true,
    windowsHide: true,
    stdio: [stdin, "pipe", "pipe"]
  })

/** Runs to the end (or the deadline) and gathers stdout (up to `maxStdout` bytes) and the start of stderr. */
export const collect = (
  launch: Launch,
  limits: { readonly timeoutMs: number; readonly maxStdout: number }
): Promise<Collected> =>
  new Promise((resolve) => {
    const child = start(launch, "ignore")
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    let outBytes = 0
    let errBytes = 0
    let timedOut = false
    let overflow = false
    let spawnError: string | undefined
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child)
    }, limits.timeoutMs)
    child.stdout?.on("data", (chunk: Buffer) => {
      outBytes += chunk.length
      if (outBytes > limits.maxStdout) {
        overflow = true
        killGroup(child)
      } else out.push(chunk)
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      if (errBytes < 64 * 1024) err.push(chunk)
      errBytes += chunk.length
    })
    child.once("error", (error) => {
      spawnError = (error as NodeJS.ErrnoException).code ?? error.message
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
        overflow,
        ...(spawnError === undefined ? {} : { spawnError })
      })
    })
  })
