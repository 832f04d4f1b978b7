/**
 * ToCore — the host's one connection to Core. Finds the running Core or starts the `pedelec-core` baked into the
 * launcher (`PEDELEC_CORE_COMMAND`), both core-client's FindOrStart, then connects as the host role (CoreClient).
 * Connects lazily, on the first request that needs Core, so a port opened only for extension-local calls wakes
 * nothing. It does not map requests to RPCs: Relay does.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { connectHost, type HostClient } from "@pedelec/core-client/CoreClient"
import { findOrStart } from "@pedelec/core-client/FindOrStart"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import packageJson from "../package.json" with { type: "json" }
import { log } from "./Log.ts"

const CONNECT_TIMEOUT_MS = 5_000

const NO_COMMAND =
  "no Core is running and this native host was installed without PEDELEC_CORE_COMMAND; start the desktop app, or reinstall the host with `pedelec-cli install-native-host`"

const unavailable = (reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "native-host", { details: { reason } })

/** The launcher's Core, for this host's PEDELEC_HOME. */
const findCore = () =>
  findOrStart(resolveCorePaths(), {
    command: process.env.PEDELEC_CORE_COMMAND,
    noCommand: NO_COMMAND,
    source: "native-host",
    log
  }).pipe(Effect.provide(NodeFileSystem.layer))

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
      const scope = yield* Effect.scope
      // One connection attempt at a time: concurrent first requests share it instead of starting Core twice.
      const connecting = yield* Semaphore.make(1)
      let connected: HostClient | undefined

      const connect = Effect.fn("ToCore.connect")(function* () {
        const info = yield* findCore()
        // A child scope, so a failed attempt releases its socket instead of leaving it to the host's exit.
        const attempt = yield* Scope.fork(scope)
        const exit = yield* connectHost(info, { component: "native-host", version: packageJson.version }).pipe(
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

      const connectOnce = connecting.withPermits(1)(
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
      // Once connected, no permit: every request and tool call result asks for the client.
      const client = Effect.suspend(() => (connected !== undefined ? Effect.succeed(connected) : connectOnce))
      return ToCore.of({ client })
    })
  )
}
