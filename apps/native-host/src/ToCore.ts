/**
 * ToCore — the host's one connection to Core. Finds the running Core from `run/core.json` (a file whose pid is dead
 * counts as none) or starts the `pedelec-core` baked into the launcher (`PEDELEC_CORE_COMMAND --detach --on-demand`;
 * it puts itself in its own session, so the browser killing the host leaves it running), waits ≤ 10 s for it, then
 * connects as the host role. Connects lazily, on the first request that needs Core, so a port opened only for
 * extension-local calls wakes nothing. It does not map requests to RPCs: Relay does.
 */
import { spawn } from "node:child_process"
import path from "node:path"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { connectHost, type HostClient, readRuntimeInfo } from "@pedelec/core/CoreClient"
import { CorePaths, type CorePathsShape } from "@pedelec/core/CorePaths"
import { isProcessAlive } from "@pedelec/core/ProcessAlive"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import { log } from "./Log.ts"

const START_TIMEOUT_MS = 10_000
const CONNECT_TIMEOUT_MS = 5_000
const POLL_MS = 50

const unavailable = (reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "native-host", { details: { reason } })

/** The live Core's announcement, or undefined when there is none (missing, unreadable, or a dead pid). */
const runningCore = (paths: CorePathsShape) =>
  readRuntimeInfo(paths.runtimeFile).pipe(
    Effect.map((info) => (isProcessAlive(info.pid) ? info : undefined)),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * Runs the launcher's Core command. Its own `--detach` returns once the background Core answers; we still poll
 * core.json ourselves, since a second host racing us makes our launcher lose the lock while the winner's Core serves.
 */
const launch = (command: string) =>
  Effect.sync(() => {
    // Run with this host's own runtime: the launcher baked its absolute path in, and nothing is looked up on PATH
    // (pedelec-core's `#!/usr/bin/env node` line would be).
    const launcher = spawn(process.execPath, [command, "--detach", "--on-demand"], {
      env: process.env,
      // Its stdout says "running in the background"; only frames may reach ours.
      stdio: ["ignore", "ignore", "inherit"],
      windowsHide: true
    })
    launcher.on("error", (error) => log(`could not run ${command}: ${error.message}`))
    launcher.unref()
  })

const startCore = Effect.fnUntraced(function* (paths: CorePathsShape) {
  const command = process.env.PEDELEC_CORE_COMMAND
  if (command === undefined || command.length === 0 || !path.isAbsolute(command)) {
    return yield* Effect.fail(
      unavailable(
        "no Core is running and this native host was installed without PEDELEC_CORE_COMMAND; start the desktop app, or reinstall the host with `pedelec-cli install-native-host`"
      )
    )
  }
  log(`no Core is running; starting ${command}`)
  yield* launch(command)
  const waitForCore = Effect.gen(function* () {
    while (true) {
      const info = yield* runningCore(paths)
      if (info !== undefined) return info
      yield* Effect.sleep(POLL_MS)
    }
  })
  return yield* waitForCore.pipe(
    Effect.timeoutOrElse({
      duration: START_TIMEOUT_MS,
      orElse: () =>
        Effect.fail(
          unavailable(
            `${command} did not start within ${START_TIMEOUT_MS / 1000} s; see ${path.join(paths.logsDir, "core.log")}`
          )
        )
    })
  )
})

const findOrStart = Effect.fnUntraced(function* (paths: CorePathsShape) {
  return (yield* runningCore(paths)) ?? (yield* startCore(paths))
})

export class ToCore extends Context.Service<
  ToCore,
  {
    /** The connected host-role client; CORE_RUNTIME_UNAVAILABLE (retried on the next call) when Core cannot be had. */
    readonly client: Effect.Effect<HostClient, PedelecError>
  }
>()("pedelec/native-host/ToCore") {
  static readonly layer = Layer.effect(
    ToCore,
    Effect.gen(function* () {
      const paths = yield* CorePaths
      const scope = yield* Effect.scope
      // One connection attempt at a time: concurrent first requests share it instead of starting Core twice.
      const connecting = yield* Semaphore.make(1)
      let connected: HostClient | undefined

      const connect = Effect.fn("ToCore.connect")(function* () {
        const info = yield* findOrStart(paths)
        // A child scope, so a failed attempt releases its socket instead of leaving it to the host's exit.
        const attempt = yield* Scope.fork(scope)
        const exit = yield* connectHost(info, "native-host").pipe(
          Effect.timeoutOrElse({
            duration: CONNECT_TIMEOUT_MS,
            orElse: () => Effect.fail(unavailable(`Core (pid ${info.pid}) did not answer on ${info.socketPath}`))
          }),
          Scope.provide(attempt),
          Effect.exit
        )
        if (Exit.isSuccess(exit)) return exit.value
        yield* Scope.close(attempt, exit)
        const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
        if (error instanceof PedelecError) return yield* Effect.fail(error)
        return yield* Effect.fail(unavailable(`Core (pid ${info.pid}) could not be reached on ${info.socketPath}`))
      })

      const client = connecting.withPermits(1)(
        Effect.suspend(() =>
          connected !== undefined
            ? Effect.succeed(connected)
            : connect().pipe(
                Effect.tap((made) =>
                  Effect.sync(() => {
                    connected = made
                  })
                )
              )
        )
      )
      return ToCore.of({ client })
    })
  )
}
