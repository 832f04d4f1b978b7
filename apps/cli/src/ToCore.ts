/**
 * ToCore — pedelec-cli's effect/rpc link to Core for the host commands (settings, providers): finds the running
 * Core through `run/core.json` (CorePaths), connects to its socket (NDJSON), says `core.hello` (PROTOCOL_VERSION)
 * and proves the host role (core.json's launch secret) on every request with a client middleware. Every way of not
 * reaching Core becomes a CliFailure in Reach's words. The agent commands use AgentWire instead.
 */

import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { AUTH_HEADERS, CoreRuntimeInfo, HelloRpcs, HostAuth, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import type { PublicSettings, SecretName, Settings } from "@pedelec/contracts/Settings"
import { type CorePathsShape, resolveCorePaths } from "@pedelec/core/CorePaths"
import { layerNdjson } from "@pedelec/core/Ndjson"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import * as RpcClient from "effect/rpc/RpcClient"
import type { RpcClientError } from "effect/rpc/RpcClientError"
import * as RpcMiddleware from "effect/rpc/RpcMiddleware"
import * as Schema from "effect/Schema"
import * as Socket from "effect/socket/Socket"
import { CliFailure } from "./CliFailure.ts"
import {
  dropped,
  type Endpoint,
  garbled,
  HELLO_TIMEOUT_MS,
  helloTimeout,
  invalidRuntime,
  mismatch,
  OPEN_TIMEOUT_MS,
  openFailure,
  PROTOCOL_VERSION,
  type Refusal,
  readRuntimeJson
} from "./Reach.ts"

export type { Endpoint } from "./Reach.ts"

export interface Link {
  /** This CLI's version, sent in the hello. */
  readonly version: string
  /** Defaults to this process's `PEDELEC_HOME` (or `~/.pedelec`). */
  readonly paths?: CorePathsShape
}

// ---------------------------------------------------------------------------------------------------------------
// core.json and the socket

const decodeRuntime = Schema.decodeUnknownResult(CoreRuntimeInfo)

const fail = (refusal: Refusal) => Effect.fail(new CliFailure(refusal))

/** Reads `run/core.json` (Reach) and decodes all of it: the host role proves its launch secret. */
const readRuntimeInfo = Effect.fnUntraced(function* (paths: CorePathsShape) {
  const read = yield* Effect.promise(() => readRuntimeJson(paths.runtimeFile))
  if ("error" in read) return yield* fail(read)
  const decoded = decodeRuntime(read.json)
  if (decoded._tag === "Failure") return yield* fail(invalidRuntime(paths.runtimeFile))
  return decoded.success
})

const protocol = (socketPath: string) =>
  RpcClient.layerProtocolSocket().pipe(
    // makeNet dials lazily and cannot fail here; layerNet's type would say it can.
    Layer.provide(
      Layer.effect(
        Socket.Socket,
        NodeSocket.makeNet({ path: socketPath, openTimeout: Duration.millis(OPEN_TIMEOUT_MS) })
      )
    ),
    Layer.provide(layerNdjson)
  )

/** Sends one proof header on every request of the group the middleware guards. */
const proving = <Id extends RpcMiddleware.AnyId, S>(tag: Context.Key<Id, S>, header: string, value: string) =>
  RpcMiddleware.layerClient(tag, ({ request, next }) =>
    next({ ...request, headers: Headers.set(request.headers, header, value) })
  )

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** The hello got no answer: something holds the socket but does not speak. */
interface HelloTimeout {
  readonly _tag: "HelloTimeout"
}

type ClientFailure = PedelecError | RpcClientError | HelloTimeout

/** One mapping for everything a call can fail with. */
const toFailure =
  (at: Endpoint) =>
  (error: ClientFailure): CliFailure =>
    error._tag === "PedelecError" ? CliFailure.of(error.code, error.message, error.details) : connectFailure(error, at)

/** Not reaching Core, by cause, in Reach's words. Exported for the unit test of the EPERM case. */
export const connectFailure = (error: RpcClientError | HelloTimeout, at: Endpoint): CliFailure => {
  if (error._tag === "HelloTimeout") return new CliFailure(helloTimeout(at))
  const reason = error.reason
  if (reason._tag === "SocketOpenError") return new CliFailure(openFailure(reason.kind, reason.cause, at))
  if (reason._tag === "RpcClientDefect") return new CliFailure(garbled(at, reason.message))
  return new CliFailure(dropped(at, error.message))
}

const hello = <E>(
  call: (hello: {
    readonly protocolVersion: number
    readonly component: "cli"
    readonly version: string
  }) => Effect.Effect<{ readonly protocolVersion: number }, E>,
  version: string
) =>
  call({ protocolVersion: PROTOCOL_VERSION, component: "cli", version }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(HELLO_TIMEOUT_MS),
      orElse: () => Effect.fail<HelloTimeout>({ _tag: "HelloTimeout" })
    }),
    Effect.flatMap((welcome) =>
      welcome.protocolVersion === PROTOCOL_VERSION ? Effect.void : fail(mismatch(welcome.protocolVersion))
    )
  )

/** The hello can also fail with a CliFailure of its own (a protocol mismatch), which passes through unchanged. */
const asFailure =
  (failure: (error: ClientFailure) => CliFailure) =>
  (error: ClientFailure | CliFailure): CliFailure =>
    error._tag === "CliFailure" ? error : failure(error)

// ---------------------------------------------------------------------------------------------------------------
// Host role

const HostGroup = HelloRpcs.merge(HostRpcs)

export interface HostCoreShape {
  readonly settings: Effect.Effect<PublicSettings, CliFailure>
  readonly setSettings: (settings: Settings) => Effect.Effect<PublicSettings, CliFailure>
  readonly setSecret: (name: SecretName, value: string | null) => Effect.Effect<PublicSettings, CliFailure>
  readonly providers: (rescan: boolean) => Effect.Effect<ReadonlyArray<ProviderInfo>, CliFailure>
}

export class HostCore extends Context.Service<HostCore, HostCoreShape>()("pedelec/cli/HostCore") {
  /** Proves the host role with core.json's per-launch secret, as the native host does. */
  static readonly layer = (options: Link): Layer.Layer<HostCore, CliFailure> =>
    Layer.unwrap(
      Effect.gen(function* () {
        const info = yield* readRuntimeInfo(options.paths ?? resolveCorePaths())
        const failure = toFailure(info)
        const make = Effect.gen(function* () {
          const client = yield* RpcClient.make(HostGroup)
          yield* hello(client["core.hello"], options.version).pipe(Effect.mapError(asFailure(failure)))
          return HostCore.of({
            settings: client["settings.get"]().pipe(Effect.mapError(failure)),
            setSettings: (settings) => client["settings.set"]({ settings }).pipe(Effect.mapError(failure)),
            setSecret: (name, value) => client["settings.set_secret"]({ name, value }).pipe(Effect.mapError(failure)),
            providers: (rescan) => client["providers.list"]({ rescan }).pipe(Effect.mapError(failure))
          })
        })
        return Layer.effect(HostCore, make).pipe(
          Layer.provide(protocol(info.socketPath)),
          Layer.provide(proving(HostAuth, AUTH_HEADERS.launchSecret, info.launchSecret))
        )
      })
    )
}
