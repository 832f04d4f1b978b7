/**
 * CoreAccess — the Core this app talks to for its `PEDELEC_HOME`: the one already running (the native host may have
 * started it) is attached to; when none runs, the bundled `pedelec-core` is started through core-client's
 * find-or-start and remembered as the app's. When the layer's scope closes (Quit), only a Core the app started is
 * sent SIGTERM, and only while it is still the home's announced Core: a Core someone else started, and its sessions,
 * outlive the app. Core runs detached either way, so an app crash takes no session with it. Speaking to Core is
 * CoreSessions' job and the bridge's; reading `run/core.json` is RuntimeFile's. A start that fails while the home's
 * announcement is a Core of another protocol's is that Core's doing (it holds the home's lock): the error then says
 * PROTOCOL_VERSION_MISMATCH, so the user is told to quit the other release rather than to read the logs.
 *
 * The started Core runs on the app's own runtime (`ELECTRON_RUN_AS_NODE=1` in its environment only: set on this
 * process it would turn Electron's own helper processes into Node) and without `--on-demand`: the app's Core serves
 * for as long as the app runs, not until it has been idle for a while.
 */
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Component } from "@pedelec/contracts/Protocol"
import { findOrStart } from "@pedelec/core-client/FindOrStart"
import type { CorePathsShape } from "@pedelec/core-client/HomeLayout"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import { readRuntimeInfo, runningCore } from "@pedelec/core-client/RuntimeFile"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { coreUnavailable } from "../../bridge/ToCore.ts"

export interface CoreAccessConfig {
  readonly paths: CorePathsShape
  /** The absolute path of the bundled `pedelec-core`, started when no Core serves the home. */
  readonly coreCommand: string
  /** Who raises find-or-start's errors. */
  readonly source: Component
  readonly log: (line: string) => void
  readonly startTimeoutMs?: number
}

export interface CoreAccessShape {
  /** The Core serving the home now: attached, or started now; CORE_RUNTIME_UNAVAILABLE saying why there is none. */
  readonly ensure: Effect.Effect<CoreRuntimeInfo, PedelecError>
  /** Whether the Core `ensure` last returned is one this app started. */
  readonly startedByApp: Effect.Effect<boolean>
}

interface State {
  /** The pid of the last Core this app started. */
  readonly ours: Ref.Ref<number | undefined>
  readonly current: Ref.Ref<CoreRuntimeInfo | undefined>
}

const NO_COMMAND = "the desktop app's pedelec-core is missing: reinstall Pedelec"

/** The catalog's words tell a page to start the desktop app; the app says why its own start failed instead. */
const reworded = (failure: PedelecError) => {
  const reason = failure.details?.reason
  return failure.code === "CORE_RUNTIME_UNAVAILABLE" && typeof reason === "string" ? coreUnavailable(reason) : failure
}

/** A failed start's error, or PROTOCOL_VERSION_MISMATCH when a Core of another release announced itself instead. */
const explained = (config: CoreAccessConfig, failure: PedelecError) =>
  readRuntimeInfo(config.paths.runtimeFile, config.source).pipe(
    Effect.matchEffect({
      onFailure: (read) => Effect.fail(read.code === "PROTOCOL_VERSION_MISMATCH" ? read : reworded(failure)),
      onSuccess: () => Effect.fail(reworded(failure))
    })
  )

const ensure = (config: CoreAccessConfig, fs: FileSystem.FileSystem, state: State) =>
  Effect.gen(function* () {
    const running = yield* runningCore(config.paths)
    const info =
      running ??
      (yield* findOrStart(config.paths, {
        command: config.coreCommand,
        noCommand: NO_COMMAND,
        source: config.source,
        log: config.log,
        env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
        onDemand: false,
        ...(config.startTimeoutMs === undefined ? {} : { timeoutMs: config.startTimeoutMs })
      }).pipe(
        Effect.catch((failure) => explained(config, failure)),
        Effect.tap((started) => Ref.set(state.ours, started.pid))
      ))
    yield* Ref.set(state.current, info)
    return info
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

/** SIGTERM, Core's clean stop, to the Core this app started, if it still serves the home (a reused pid does not). */
const stopOurs = (config: CoreAccessConfig, fs: FileSystem.FileSystem, state: State) =>
  Effect.gen(function* () {
    const ours = yield* Ref.get(state.ours)
    if (ours === undefined) return
    const running = yield* runningCore(config.paths)
    if (running?.pid !== ours || !isProcessAlive(ours)) return
    config.log(`stopping the Core this app started (pid ${ours})`)
    yield* Effect.sync(() => process.kill(ours, "SIGTERM")).pipe(Effect.ignore)
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

export class CoreAccess extends Context.Service<CoreAccess, CoreAccessShape>()("pedelec/desktop/CoreAccess") {
  static readonly layer = (config: CoreAccessConfig) =>
    Layer.effect(
      CoreAccess,
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const state: State = {
          ours: yield* Ref.make<number | undefined>(undefined),
          current: yield* Ref.make<CoreRuntimeInfo | undefined>(undefined)
        }
        yield* Effect.addFinalizer(() => stopOurs(config, fs, state))
        return CoreAccess.of({
          ensure: ensure(config, fs, state).pipe(Effect.withSpan("CoreAccess.ensure")),
          startedByApp: Effect.all([Ref.get(state.ours), Ref.get(state.current)]).pipe(
            Effect.map(([ours, current]) => ours !== undefined && current?.pid === ours)
          )
        })
      })
    )
}
