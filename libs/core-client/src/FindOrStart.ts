/**
 * FindOrStart — a running Core for a home, found from `run/core.json` (a file whose pid is dead counts as none) or
 * started: the given `pedelec-core` runs with `--detach --on-demand` (it puts itself in its own session, so whoever
 * started it may die and leave it running) and is waited for ≤ 10 s. Used by the native host and pedelec-cli, and
 * by the desktop app when it attaches to a Core. Connecting to the Core found is CoreClient's job.
 */
import { spawn } from "node:child_process"
import path from "node:path"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Component } from "@pedelec/contracts/Protocol"
import * as Effect from "effect/Effect"
import type { CorePathsShape } from "./HomeLayout.ts"
import { runningCore } from "./RuntimeFile.ts"

const START_TIMEOUT_MS = 10_000
const POLL_MS = 50

export interface StartOptions {
  /** The absolute path of the `pedelec-core` to run, when none runs; undefined or relative: do not start one. */
  readonly command: string | undefined
  /** What to tell the user when there is no command to run (how to get one). */
  readonly noCommand: string
  /** Who raises the errors. */
  readonly source: Component
  /** Where progress goes (the native host's log; never its stdout, which carries frames). */
  readonly log: (line: string) => void
  readonly timeoutMs?: number
  /**
   * The started Core's environment (default: this process's). The desktop app passes `ELECTRON_RUN_AS_NODE=1` so that
   * its own runtime runs Core; it cannot set that on itself, since Electron's helper processes read the same variable.
   */
  readonly env?: NodeJS.ProcessEnv
  /** Whether the started Core stops when idle (default true: a native host's Core should not outlive its use). */
  readonly onDemand?: boolean
}

const unavailable = (source: Component, reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", source, { details: { reason } })

/**
 * Runs the Core command (with `--on-demand` unless told otherwise). Its own `--detach` returns once the background Core answers; we still poll core.json
 * ourselves, since a second client racing us makes our launcher lose the lock while the winner's Core serves.
 */
const launch = (command: string, options: StartOptions) =>
  Effect.sync(() => {
    const { log } = options
    const args = [command, "--detach", ...(options.onDemand === false ? [] : ["--on-demand"])]
    // Run with this process's own runtime: the command's `#!/usr/bin/env node` line would look node up on PATH.
    const launcher = spawn(process.execPath, args, {
      env: options.env ?? process.env,
      // Its stdout says "running in the background"; only the caller's own output may reach ours.
      stdio: ["ignore", "ignore", "inherit"],
      windowsHide: true
    })
    launcher.on("error", (error) => log(`could not run ${command}: ${error.message}`))
    launcher.unref()
  })

const announced = (paths: CorePathsShape) =>
  Effect.gen(function* () {
    while (true) {
      const info = yield* runningCore(paths)
      if (info !== undefined) return info
      yield* Effect.sleep(POLL_MS)
    }
  })

const start = Effect.fnUntraced(function* (paths: CorePathsShape, options: StartOptions) {
  const { command, source } = options
  if (command === undefined || command.length === 0 || !path.isAbsolute(command)) {
    return yield* unavailable(source, options.noCommand)
  }
  options.log(`no Core is running; starting ${command}`)
  yield* launch(command, options)
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS
  return yield* announced(paths).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () =>
        Effect.fail(
          unavailable(
            source,
            `${command} did not start within ${timeoutMs / 1000} s; see ${path.join(paths.logsDir, "core.log")}`
          )
        )
    })
  )
})

/** The live Core's announcement: the one running, or one started now; CORE_RUNTIME_UNAVAILABLE saying why not. */
export const findOrStart = Effect.fn("FindOrStart.findOrStart")(function* (
  paths: CorePathsShape,
  options: StartOptions
) {
  return (yield* runningCore(paths)) ?? (yield* start(paths, options))
})
