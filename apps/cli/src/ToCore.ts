/**
 * ToCore — pedelec-cli's effect/rpc link to Core for the user commands (settings, providers): reads `run/core.json`
 * (core-client's RuntimeFile), connects as the desktop role, the user's own (core-client's CoreClient: NDJSON on
 * the socket, `core.hello`, the launch secret on every request) and maps every way of not reaching Core to a CliFailure in
 * Reach's words. The agent commands use AgentWire instead.
 */

import { NodeFileSystem } from "@effect/platform-node"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import type { PublicSettings, SecretName, Settings } from "@pedelec/contracts/Settings"
import { connectDesktop } from "@pedelec/core-client/CoreClient"
import { type CorePathsShape, resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import { readRuntimeInfo } from "@pedelec/core-client/RuntimeFile"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RpcClientError } from "effect/rpc/RpcClientError"
import { CliFailure } from "./CliFailure.ts"
import {
  dropped,
  type Endpoint,
  garbled,
  HELLO_TIMEOUT_MS,
  helloTimeout,
  invalidRuntime,
  mismatch,
  noRuntime,
  OPEN_TIMEOUT_MS,
  openFailure,
  type Refusal,
  unreadableRuntime
} from "./Reach.ts"

export type { Endpoint } from "./Reach.ts"

export interface Link {
  /** This CLI's version, sent in the hello. */
  readonly version: string
  /** Defaults to this process's `PEDELEC_HOME` (or `~/.pedelec`). */
  readonly paths?: CorePathsShape
}

// ---------------------------------------------------------------------------------------------------------------
// core.json

/** core.json's refusals, in the words the agent commands use for the same file. */
const runtimeRefusal =
  (file: string) =>
  (error: PedelecError): CliFailure => {
    const refusal = (): Refusal => {
      if (error.code === "PROTOCOL_VERSION_MISMATCH") return mismatch(Number(error.details?.expected))
      if (error.details?.problem === "missing") return noRuntime(file)
      if (error.details?.problem === "unreadable") return unreadableRuntime(file, String(error.details.reason))
      return invalidRuntime(file)
    }
    return new CliFailure(refusal())
  }

/** Reads `run/core.json` and decodes all of it: the desktop role proves its launch secret. */
const runtimeInfo = (paths: CorePathsShape) =>
  readRuntimeInfo(paths.runtimeFile, "cli").pipe(
    Effect.mapError(runtimeRefusal(paths.runtimeFile)),
    Effect.provide(NodeFileSystem.layer)
  )

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** The hello got no answer: something holds the socket but does not speak. */
interface HelloTimeout {
  readonly _tag: "HelloTimeout"
}

type ClientFailure = PedelecError | RpcClientError | HelloTimeout

/** One mapping for everything a call can fail with: Core's refusals keep Core's words. */
const toFailure =
  (at: Endpoint) =>
  (error: ClientFailure): CliFailure => {
    if (error._tag !== "PedelecError") return connectFailure(error, at)
    // CoreClient's own check of the welcome (source "cli"): a Core of another release answered the hello.
    if (error.code === "PROTOCOL_VERSION_MISMATCH" && error.source === "cli")
      return new CliFailure(mismatch(Number(error.details?.expected)))
    return CliFailure.of(error.code, error.message, error.details)
  }

/** Not reaching Core, by cause, in Reach's words. Exported for the unit test of the EPERM case. */
export const connectFailure = (error: RpcClientError | HelloTimeout, at: Endpoint): CliFailure => {
  if (error._tag === "HelloTimeout") return new CliFailure(helloTimeout(at))
  const reason = error.reason
  if (reason._tag === "SocketOpenError") return new CliFailure(openFailure(reason.kind, reason.cause, at))
  if (reason._tag === "RpcClientDefect") return new CliFailure(garbled(at, reason.message))
  return new CliFailure(dropped(at, error.message))
}

// ---------------------------------------------------------------------------------------------------------------
// Desktop role

export interface UserCoreShape {
  readonly settings: Effect.Effect<PublicSettings, CliFailure>
  readonly setSettings: (settings: Settings) => Effect.Effect<PublicSettings, CliFailure>
  readonly setSecret: (name: SecretName, value: string | null) => Effect.Effect<PublicSettings, CliFailure>
  readonly providers: (rescan: boolean) => Effect.Effect<ReadonlyArray<ProviderInfo>, CliFailure>
}

export class UserCore extends Context.Service<UserCore, UserCoreShape>()("pedelec/cli/UserCore") {
  /** Proves the desktop role with core.json's per-launch secret, as the desktop app does. */
  static readonly layer = (options: Link): Layer.Layer<UserCore, CliFailure> =>
    Layer.effect(
      UserCore,
      Effect.gen(function* () {
        const info = yield* runtimeInfo(options.paths ?? resolveCorePaths())
        const failure = toFailure(info)
        const client = yield* connectDesktop(info, {
          component: "cli",
          version: options.version,
          openTimeout: Duration.millis(OPEN_TIMEOUT_MS)
        }).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(HELLO_TIMEOUT_MS),
            orElse: () => Effect.fail<HelloTimeout>({ _tag: "HelloTimeout" })
          }),
          Effect.mapError(failure)
        )
        return UserCore.of({
          settings: client["desktop.settings.get"]().pipe(Effect.mapError(failure)),
          setSettings: (settings) => client["desktop.settings.set"]({ settings }).pipe(Effect.mapError(failure)),
          setSecret: (name, value) =>
            (value === null
              ? client["desktop.settings.clear_secret"]({ name })
              : client["desktop.settings.set_secret"]({ name, value })
            ).pipe(Effect.mapError(failure)),
          providers: (rescan) => client["desktop.providers.list"]({ rescan }).pipe(Effect.mapError(failure))
        })
      })
    )
}
