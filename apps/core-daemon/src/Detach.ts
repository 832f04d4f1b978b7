/**
 * Detach — `pedelec-core --detach`: starts a copy of this program in its own session (so the browser killing the
 * native host's process tree does not kill Core), logging to `logs/core.log`, and returns once the copy has
 * announced itself in `run/core.json` (read by core-client, as every client reads it), or fails after 10 s saying
 * where to look.
 */
import { spawn } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { NodeFileSystem } from "@effect/platform-node"
import { pathsForHome, resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import { readRuntimeInfo } from "@pedelec/core-client/RuntimeFile"
import * as Effect from "effect/Effect"

const READY_TIMEOUT_MS = 10_000

const announcedPid = (runtimeFile: string): Promise<number | undefined> =>
  Effect.runPromise(
    readRuntimeInfo(runtimeFile).pipe(
      Effect.map((info): number | undefined => info.pid),
      Effect.provide(NodeFileSystem.layer),
      Effect.orElseSucceed(() => undefined)
    )
  )

export const detach = async (options: { readonly home: string | undefined; readonly onDemand: boolean }) => {
  const env = options.home ? { ...process.env, PEDELEC_HOME: options.home } : process.env
  const paths = options.home ? pathsForHome(options.home) : resolveCorePaths()
  await mkdir(paths.logsDir, { recursive: true, mode: 0o700 })
  const logFile = path.join(paths.logsDir, "core.log")
  const log = openSync(logFile, "a", 0o600)
  const args = [...process.execArgv, process.argv[1]!, ...(options.home ? ["--home", options.home] : [])]
  if (options.onDemand) args.push("--on-demand")
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", log, log], env })
  closeSync(log)
  let exited = false
  child.once("exit", () => {
    exited = true
  })
  child.unref()
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!exited && Date.now() < deadline) {
    if ((await announcedPid(paths.runtimeFile)) === child.pid) {
      process.stdout.write(`pedelec-core: running in the background (pid ${child.pid})\n`)
      return 0
    }
    await sleep(50)
  }
  process.stderr.write(`pedelec-core: the background Core did not start; see ${logFile}\n`)
  return 1
}
