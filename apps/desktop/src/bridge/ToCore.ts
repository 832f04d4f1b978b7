/**
 * ToCore — the bridge's one desktop-role connection to Core, made on first use and made again after Core went
 * away: a connection whose call failed at the transport, or whose launch secret a (restarted) Core refused, is
 * dropped, and the next call finds the running Core again (`run/core.json`, through the caller's `locate`, which
 * may also start one) before it connects. It does not decode renderer messages (Bridge.ts).
 */
import { NodeFileSystem } from "@effect/platform-node"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { connectDesktop, type DesktopClient } from "@pedelec/core-client/CoreClient"
import { findOrStart } from "@pedelec/core-client/FindOrStart"
import type { CorePathsShape } from "@pedelec/core-client/HomeLayout"
import { runningCore } from "@pedelec/core-client/RuntimeFile"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"

const CONNECT_TIMEOUT_MS = 5_000

/** The catalog's words tell a page to start the desktop app; in the app, what helps is knowing it is looking. */
export const coreUnavailable = (reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "desktop", {
    details: { reason },
    message: `Pedelec's Core is not reachable: ${reason}. The app keeps looking for it; if this stays, quit and reopen Pedelec.`
  })

export interface ToCoreOptions {
  /** The running Core's announcement, or CORE_RUNTIME_UNAVAILABLE saying why there is none. */
  readonly locate: Effect.Effect<CoreRuntimeInfo, PedelecError>
  /** This app's release, sent in the hello. */
  readonly version: string
}

/** `locate` for a bridge that only attaches: the Core running for the home, whoever started it. */
export const attachOnly = (paths: CorePathsShape): Effect.Effect<CoreRuntimeInfo, PedelecError> =>
  runningCore(paths).pipe(
    Effect.provide(NodeFileSystem.layer),
    Effect.flatMap((info) =>
      info === undefined ? Effect.fail(coreUnavailable(`no Core is running for ${paths.home}`)) : Effect.succeed(info)
    )
  )

/** `locate` that also starts `command` (an absolute `pedelec-core`) when none runs, as the native host does. */
export const findingOrStarting = (paths: CorePathsShape, command: string, log: (line: string) => void) =>
  findOrStart(paths, { command, noCommand: `${command} is not built`, source: "desktop", log }).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

interface Connection {
  readonly client: DesktopClient
  readonly scope: Scope.Closeable
}

export class ToCore extends Context.Service<
  ToCore,
  {
    /** The connected client; CORE_RUNTIME_UNAVAILABLE when no Core can be reached now (the next call tries again). */
    readonly client: Effect.Effect<DesktopClient, PedelecError>
    /** Forgets `client` (if it is still the current one) and closes its socket. */
    readonly drop: (client: DesktopClient) => Effect.Effect<void>
  }
>()("pedelec/desktop/bridge/ToCore") {
  static readonly layer = (options: ToCoreOptions) =>
    Layer.effect(
      ToCore,
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        // One attempt at a time: the renderer's first screen asks several things at once.
        const connecting = yield* Semaphore.make(1)
        let current: Connection | undefined
        const client = connecting.withPermits(1)(
          Effect.suspend(() =>
            current !== undefined
              ? Effect.succeed(current.client)
              : connect(scope, options).pipe(
                  Effect.tap((made) => Effect.sync(() => (current = made))),
                  Effect.map((made) => made.client)
                )
          )
        )
        const drop = (stale: DesktopClient) =>
          Effect.suspend(() => {
            if (current === undefined || current.client !== stale) return Effect.void
            const closing = current.scope
            current = undefined
            return Scope.close(closing, Exit.void)
          })
        return ToCore.of({ client, drop })
      })
    )
}

/** A connection in its own child scope, so dropping it (or a failed attempt) closes exactly its socket. */
const connect = Effect.fnUntraced(function* (parent: Scope.Scope, options: ToCoreOptions) {
  const info = yield* options.locate
  const scope = yield* Scope.fork(parent)
  const exit = yield* connectDesktop(info, { component: "desktop", version: options.version }).pipe(
    Effect.timeoutOrElse({
      duration: CONNECT_TIMEOUT_MS,
      orElse: () => Effect.fail(coreUnavailable(`Core (pid ${info.pid}) did not answer on ${info.socketPath}`))
    }),
    Scope.provide(scope),
    Effect.exit
  )
  if (Exit.isSuccess(exit)) return { client: exit.value, scope }
  yield* Scope.close(scope, exit)
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
  if (error instanceof PedelecError && error.code !== "UNAUTHORIZED") return yield* Effect.fail(error)
  return yield* Effect.fail(coreUnavailable(`Core (pid ${info.pid}) could not be reached on ${info.socketPath}`))
})
