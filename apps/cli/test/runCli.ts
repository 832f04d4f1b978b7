/**
 * Runs the built pedelec-cli (dist/pedelec-cli.mjs, or bin/pedelec-cli, or another of the app's bins) as a child process with a clean
 * environment, the way an agent shell does, and collects its stdout, stderr and exit code. Asynchronous, so an
 * in-process FakeCore keeps serving while the child talks to it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const BUNDLE = path.join(ROOT, "dist", "pedelec-cli.mjs")
export const BIN = path.join(ROOT, "bin", "pedelec-cli")

export interface CliRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly stdin?: string
  readonly uid?: number
  readonly gid?: number
  /** Run bin/pedelec-cli by path instead of `node dist/pedelec-cli.mjs`. */
  readonly viaBin?: boolean
  /** Run this program of the app instead (bin/pedelec-deno). */
  readonly command?: string
  /** Called once the child has started, e.g. to signal it later. */
  readonly onSpawn?: (child: ChildProcess) => void
}

export const runCli = (args: ReadonlyArray<string>, options: CliOptions = {}): Promise<CliRun> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" }
    for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value
    const [command, argv] =
      options.command !== undefined
        ? [options.command, [...args]]
        : options.viaBin
          ? [BIN, [...args]]
          : [process.execPath, [BUNDLE, ...args]]
    const child = spawn(command, argv, {
      env,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid })
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    child.stdin.end(options.stdin ?? "")
    options.onSpawn?.(child)
  })

/** The one JSON line an agent command must print: exactly one line, parsed. */
export const oneLine = (run: CliRun): Record<string, unknown> => {
  const lines = run.stdout.split("\n")
  if (lines.length !== 2 || lines[1] !== "")
    throw new Error(`expected exactly one line on stdout, got ${JSON.stringify(run.stdout)} (stderr ${run.stderr})`)
  return JSON.parse(lines[0]!) as Record<string, unknown>
}
