/**
 * CoreServer — the Core IPC endpoint: a Unix socket under `run/` (directory 0700, socket 0600; the short per-user
 * directory when the path is too long; a named pipe on Windows), serving the hello, host and agent RPC groups with
 * NDJSON, requests concurrently. It writes `run/core.json` (0600) once it listens and removes it and the socket when
 * it stops. What the methods do is the services'; who may call them is CoreAuth's.
 */

import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { NodeSocketServer } from "@effect/platform-node"
import { AgentRpcs } from "@pedelec/contracts/node/AgentLink"
import { type CoreRuntimeInfo, HelloRpcs, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RpcServer } from "effect/rpc"
import { AgentAuthLive, CoreSecret, HostAuthLive } from "./CoreAuth.ts"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { AgentHandlers } from "./FromAgent.ts"
import { HostHandlers } from "./FromHost.ts"
import { mintLaunchSecret } from "./Mint.ts"
import { layerNdjson } from "./Ndjson.ts"

export const CoreRpcs = HelloRpcs.merge(HostRpcs, AgentRpcs)

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

/** Private directories before the socket exists: nobody else may even look up the socket's name. */
const prepareSocket = Effect.fn("CoreServer.prepareSocket")(function* () {
  const paths = yield* CorePaths
  yield* Effect.promise(async () => {
    await mkdir(paths.runDir, { recursive: true, mode: 0o700 })
    await chmod(paths.runDir, 0o700)
    if (isPipe(paths.socketPath)) return
    const socketDir = path.dirname(paths.socketPath)
    await mkdir(socketDir, { recursive: true, mode: 0o700 })
    await chmod(socketDir, 0o700)
    // The caller holds the home's lock, so a socket file left here belongs to a dead Core.
    await rm(paths.socketPath, { force: true })
  })
  return paths.socketPath
})

const SocketServerLive = Layer.unwrap(
  Effect.map(prepareSocket(), (socketPath) => NodeSocketServer.layer({ path: socketPath }))
)

const writeRuntimeFile = (file: string, info: CoreRuntimeInfo) =>
  Effect.promise(async () => {
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, `${JSON.stringify(info)}\n`, { mode: 0o600 })
    await rename(temporary, file)
  })

/** Announces the running Core in `run/core.json` once the socket listens, and withdraws it at stop. */
const Announce = Layer.effectDiscard(
  Effect.gen(function* () {
    const paths = yield* CorePaths
    const config = yield* CoreConfig
    const { launchSecret } = yield* CoreSecret
    if (!isPipe(paths.socketPath)) yield* Effect.promise(() => chmod(paths.socketPath, 0o600))
    yield* Effect.acquireRelease(
      writeRuntimeFile(paths.runtimeFile, {
        protocolVersion: PROTOCOL_VERSION,
        coreVersion: config.version,
        pid: process.pid,
        socketPath: paths.socketPath,
        launchSecret,
        startedAt: Date.now()
      }),
      () =>
        Effect.promise(async () => {
          await rm(paths.runtimeFile, { force: true })
          if (!isPipe(paths.socketPath)) await rm(paths.socketPath, { force: true })
        })
    )
  })
)

export const CoreSecretLive = Layer.sync(CoreSecret, () => ({ launchSecret: mintLaunchSecret() }))

/** The server, given the services it exposes (Sessions, ToolRouter, Providers, SettingsStore) and a CoreSecret. */
export const CoreServerLayer = Layer.mergeAll(RpcServer.layer(CoreRpcs, { concurrency: "unbounded" }), Announce).pipe(
  Layer.provide([HelloHandlers, HostHandlers, AgentHandlers, HostAuthLive, AgentAuthLive]),
  Layer.provide(RpcServer.layerProtocolSocketServer),
  Layer.provide(layerNdjson),
  Layer.provide(SocketServerLive)
)
