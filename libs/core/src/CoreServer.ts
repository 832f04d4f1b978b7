/**
 * CoreServer — the Core IPC endpoint: a Unix socket under `run/` (directory 0700, socket 0600; the short per-user
 * directory when the path is too long; a named pipe on Windows), serving the hello, host, desktop and agent RPC groups
 * with NDJSON, requests concurrently, behind the hello gate (CoreServer/HelloGate: deadline, pre-hello line cap,
 * connection cap, coded refusals). It writes `run/core.json` (0600) once it listens and removes it and the socket when
 * it stops. What the methods do is the services'; who may call them is CoreAuth's.
 */

import path from "node:path"
import { NodeSocketServer } from "@effect/platform-node"
import { AgentRpcs } from "@pedelec/contracts/node/AgentLink"
import { type CoreRuntimeInfo, HelloRpcs } from "@pedelec/contracts/node/CoreLink"
import { DesktopRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import { layerNdjson } from "@pedelec/core-client/Ndjson"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type { PlatformError } from "effect/PlatformError"
import { type RpcGroup, RpcSchema, RpcServer } from "effect/rpc"
import * as Schema from "effect/Schema"
import { AgentAuthLive, CoreSecret, DesktopAuthLive, HostAuthLive } from "./CoreAuth.ts"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { makeHelloGate } from "./CoreServer/HelloGate.ts"
import { AgentHandlers } from "./FromAgent.ts"
import { DesktopHandlers } from "./FromDesktop.ts"
import { CoreHostRpcs, HostHandlers } from "./FromHost.ts"
import { mintLaunchSecret } from "./Mint.ts"
import { Sessions } from "./Sessions.ts"
import { writeFileAtomic } from "./SettingsStore.ts"

// Core decodes session.create's input itself (FromHost): effect/rpc would strip unknown argsSchema keywords.
const ServedRpcs = HelloRpcs.merge(CoreHostRpcs, DesktopRpcs, AgentRpcs)

type Served = RpcGroup.Rpcs<typeof ServedRpcs>
const served = <Tag extends Served["_tag"]>(tag: Tag) => ServedRpcs.requests.get(tag) as Extract<Served, { _tag: Tag }>
const subscribe = served("session.subscribe")
const subscribeRefs = served("session.subscribe_refs")

/**
 * What Core sends on every tool call (the session's events, the agent's answer) goes out as Core built it. Core made
 * each of them itself from decoded or Core-made plain JSON (no transformation in their schemas), so encoding them
 * again only walked every value, the largest result included: ~5% of Core's CPU per MCP tool call. Their errors
 * still encode; every client still decodes them strictly.
 */
export const CoreRpcs = ServedRpcs.omit("session.subscribe", "session.subscribe_refs", "tool.call").add(
  subscribe.setSuccess(RpcSchema.Stream(Schema.Any, subscribe.successSchema.error)),
  subscribeRefs.setSuccess(RpcSchema.Stream(Schema.Any, subscribeRefs.successSchema.error)),
  served("tool.call").setSuccess(Schema.Any)
)

const HelloHandlers = HelloRpcs.toLayer(
  Effect.gen(function* () {
    const config = yield* CoreConfig
    return HelloRpcs.of({
      "core.hello": ({ protocolVersion }) =>
        protocolVersion === PROTOCOL_VERSION
          ? Effect.succeed({ protocolVersion: PROTOCOL_VERSION, coreVersion: config.version, pid: process.pid })
          : Effect.fail(
              PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", "core", {
                details: { actual: protocolVersion, expected: PROTOCOL_VERSION }
              })
            )
    })
  })
)

const isPipe = (socketPath: string) => socketPath.startsWith("\\\\.\\pipe\\")

/** Core cannot serve: a file it needs under `run/` (or the socket's folder) could not be made or changed. */
const cannot = (doing: string, file: string) => (error: PlatformError) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "core", {
    details: { reason: `Core could not ${doing} ${file} (${error.reason._tag})`, path: file },
    message: `Pedelec Core could not ${doing} ${file}: ${error.message}. Check that this user owns the Pedelec home.`
  })

/** A folder only this user may enter, whatever the umask or an earlier owner left. */
const privateDir = (fs: FileSystem.FileSystem, dir: string) =>
  fs
    .makeDirectory(dir, { recursive: true, mode: 0o700 })
    .pipe(Effect.andThen(fs.chmod(dir, 0o700)), Effect.mapError(cannot("create the private folder", dir)))

/** Private directories before the socket exists: nobody else may even look up the socket's name. */
const prepareSocket = Effect.fn("CoreServer.prepareSocket")(function* () {
  const paths = yield* CorePaths
  const fs = yield* FileSystem.FileSystem
  yield* privateDir(fs, paths.runDir)
  if (isPipe(paths.socketPath)) return paths.socketPath
  yield* privateDir(fs, path.dirname(paths.socketPath))
  // The caller holds the home's lock, so a socket file left here belongs to a dead Core.
  yield* fs.remove(paths.socketPath, { force: true }).pipe(Effect.mapError(cannot("remove", paths.socketPath)))
  return paths.socketPath
})

const SocketServerLive = Layer.unwrap(
  Effect.map(prepareSocket(), (socketPath) => NodeSocketServer.layer({ path: socketPath }))
)

/** Withdraws the announcement and the socket at stop; a file already gone is fine, any other failure is logged. */
const withdraw = Effect.fnUntraced(function* (fs: FileSystem.FileSystem, runtimeFile: string, socketPath: string) {
  const files = isPipe(socketPath) ? [runtimeFile] : [runtimeFile, socketPath]
  for (const file of files) {
    yield* fs
      .remove(file, { force: true })
      .pipe(Effect.catch((error) => Effect.logWarning(`could not remove ${file}: ${error.message}`)))
  }
})

/** Announces the running Core in `run/core.json` once the socket listens, and withdraws it at stop. */
const Announce = Layer.effectDiscard(
  Effect.gen(function* () {
    const paths = yield* CorePaths
    const config = yield* CoreConfig
    const fs = yield* FileSystem.FileSystem
    const { launchSecret, startedAt } = yield* CoreSecret
    if (!isPipe(paths.socketPath)) {
      yield* fs.chmod(paths.socketPath, 0o600).pipe(Effect.mapError(cannot("restrict", paths.socketPath)))
    }
    const info: CoreRuntimeInfo = {
      protocolVersion: PROTOCOL_VERSION,
      coreVersion: config.version,
      pid: process.pid,
      socketPath: paths.socketPath,
      launchSecret,
      startedAt
    }
    yield* Effect.acquireRelease(
      writeFileAtomic(fs, paths.runtimeFile, `${JSON.stringify(info)}\n`, 0o600).pipe(
        Effect.mapError(cannot("write", paths.runtimeFile))
      ),
      () => withdraw(fs, paths.runtimeFile, paths.socketPath)
    )
  })
)

export const CoreSecretLive = Layer.effect(
  CoreSecret,
  Effect.map(Clock.currentTimeMillis, (startedAt) => ({ launchSecret: mintLaunchSecret(), startedAt }))
)

/**
 * The server, given the services it exposes (Sessions, SessionEvents, ToolRouter, Providers, ProviderChoice,
 * SettingsStore, OllamaProbe, AssetAccess) and a CoreSecret.
 */
/**
 * No server span per request: Core installs no tracer, so each span was built for nobody (~15 of ~110 us of Core's
 * CPU per warm request, tools/bench ipc on 2 cores).
 */
const RpcServerLive = RpcServer.layer(CoreRpcs, { concurrency: "unbounded", disableTracing: true })

/**
 * Core's stop ends the sessions while the server still serves (this layer is built last, so it is released first):
 * their subscribers hear `ended`, and each agent's tree is whole when it is killed. With the connections closed
 * first, an agent whose pedelec-cli lost its connection could exit before its kill and orphan a setsid grandchild
 * that kill then never found (core-daemon restart.test, 1 run in 7 on Node 24).
 */
const EndSessionsFirst = Layer.effectDiscard(
  Effect.gen(function* () {
    const sessions = yield* Sessions
    yield* Effect.addFinalizer(() => sessions.endAll)
  })
)

export const CoreServerLayer = EndSessionsFirst.pipe(
  Layer.provideMerge(Layer.mergeAll(RpcServerLive, Announce)),
  Layer.provide([
    HelloHandlers,
    HostHandlers,
    DesktopHandlers,
    AgentHandlers,
    HostAuthLive,
    DesktopAuthLive,
    AgentAuthLive
  ]),
  Layer.provide(Layer.effect(RpcServer.Protocol)(makeHelloGate(CoreRpcs.requests))),
  Layer.provide(layerNdjson),
  Layer.provide(SocketServerLive)
)
