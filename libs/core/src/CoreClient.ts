/**
 * CoreClient — the host role's way into a running Core: read `run/core.json`, connect to its socket, say hello,
 * and get a typed RPC client whose requests carry the launch secret. The connection lives as long as the caller's
 * scope. Used by the native host, the bench and the tests; pedelec-cli has its own lighter client.
 */

import { readFile } from "node:fs/promises"
import { NodeSocket } from "@effect/platform-node"
import { AUTH_HEADERS, CoreRuntimeInfo, HelloRpcs, HostAuth, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { type Component, PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import { RpcClient, RpcMiddleware } from "effect/rpc"
import * as Schema from "effect/Schema"
import { layerNdjson } from "./Ndjson.ts"

export const HostClientRpcs = HelloRpcs.merge(HostRpcs)

const unavailable = (reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "native-host", { details: { reason } })

/** The running Core's announcement; CORE_RUNTIME_UNAVAILABLE when there is none or it cannot be read. */
export const readRuntimeInfo = Effect.fn("CoreClient.readRuntimeInfo")(function* (runtimeFile: string) {
  const text = yield* Effect.tryPromise({
    try: () => readFile(runtimeFile, "utf8"),
    catch: () => unavailable(`no Core is running (${runtimeFile} is missing)`)
  })
  return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(CoreRuntimeInfo))(text).pipe(
    Effect.mapError(() => unavailable(`${runtimeFile} is not a Core announcement`))
  )
})

/** A host-role client, connected and greeted, scoped to the caller. */
export const connectHost = Effect.fn("CoreClient.connectHost")(function* (
  info: CoreRuntimeInfo,
  component: Component = "native-host"
) {
  const protocol = RpcClient.layerProtocolSocket().pipe(
    Layer.provide(NodeSocket.layerNet({ path: info.socketPath })),
    Layer.provide(layerNdjson)
  )
  const auth = RpcMiddleware.layerClient(HostAuth, ({ request, next }) =>
    next({ ...request, headers: Headers.set(request.headers, AUTH_HEADERS.launchSecret, info.launchSecret) })
  )
  // Built into the caller's scope, so the socket outlives this constructor.
  const context = yield* Layer.build(Layer.mergeAll(protocol, auth))
  const client = yield* RpcClient.make(HostClientRpcs).pipe(Effect.provideContext(context))
  yield* client["core.hello"]({ protocolVersion: PROTOCOL_VERSION, component, version: "0.1.0" })
  return client
})

export type HostClient = Effect.Success<ReturnType<typeof connectHost>>
