/**
 * CoreClient — a typed effect/rpc client of a running Core, by role: connect to the socket its announcement names
 * (NDJSON, Ndjson.ts), send the role's proof on every request (the launch secret for the host and desktop roles, a
 * session's capability for the agent role), say `core.hello` and check the welcome's protocol. The connection lives as long
 * as the caller's scope. Finding the announcement is RuntimeFile's job; starting a Core is FindOrStart's.
 * pedelec-cli's agent commands use their effect-free AgentWire instead, to start fast.
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { AgentAuth, AgentClientRpcs } from "@pedelec/contracts/node/AgentLink"
import { AUTH_HEADERS, type CoreRuntimeInfo, HostAuth, HostClientRpcs } from "@pedelec/contracts/node/CoreLink"
import { DesktopAuth, DesktopClientRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Component } from "@pedelec/contracts/Protocol"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import { RpcClient, RpcMiddleware } from "effect/rpc"
import * as Socket from "effect/socket/Socket"
import { layerNdjson } from "./Ndjson.ts"

export interface ConnectOptions {
  /** Who is speaking, in the hello and as the source of this client's own errors. */
  readonly component: Component
  /** The speaking component's release, from its package.json. */
  readonly version: string
  /** How long opening the socket may take before it fails with a SocketOpenError of kind Timeout. */
  readonly openTimeout?: Duration.Input
  /** Say `core.hello` before returning (the default); the suites also test a client that does not. */
  readonly hello?: boolean
}

/** The proof headers sent on every guarded request; the suites send a wrong one, or none, to see it refused. */
export interface Proof {
  readonly launchSecret?: string
  readonly sessionCap?: string
}

const proofHeaders = (proof: Proof) => {
  let proven = Headers.empty
  if (proof.launchSecret !== undefined) proven = Headers.set(proven, AUTH_HEADERS.launchSecret, proof.launchSecret)
  if (proof.sessionCap !== undefined) proven = Headers.set(proven, AUTH_HEADERS.sessionCap, proof.sessionCap)
  return proven
}

/**
 * effect/rpc's socket protocol without Acks: Core paces a stream by its socket, not by Acks (CoreServer/HelloGate
 * drops them), so an Ack per chunk was a write here and a wake-up and a parse in Core for nothing (every event of a
 * turn, four per tool call). A stream this client reads slowly still holds Core back: its buffer is bounded and a
 * full one stops reading the socket.
 */
const withoutAcks = Layer.effect(
  RpcClient.Protocol,
  Effect.map(RpcClient.makeProtocolSocket(), (socketProtocol) => ({ ...socketProtocol, supportsAck: false }))
)

const protocol = (info: CoreRuntimeInfo, options: ConnectOptions) =>
  withoutAcks.pipe(
    // makeNet dials lazily and cannot fail here; layerNet's type would say it can.
    Layer.provide(
      Layer.effect(
        Socket.Socket,
        NodeSocket.makeNet({
          path: info.socketPath,
          ...(options.openTimeout === undefined ? {} : { openTimeout: options.openTimeout })
        })
      )
    ),
    Layer.provide(layerNdjson)
  )

/** The proof rides on every request: its headers are built once per connection, merged into each. */
const proving = <Id extends RpcMiddleware.AnyId, S>(tag: Context.Key<Id, S>, proof: Proof) => {
  const headers = proofHeaders(proof)
  return RpcMiddleware.layerClient(tag, ({ request, next }) =>
    next({ ...request, headers: Headers.merge(request.headers, headers) })
  )
}

type Hello<E> = (hello: {
  readonly protocolVersion: number
  readonly component: Component
  readonly version: string
}) => Effect.Effect<{ readonly protocolVersion: number }, E>

/** The hello, and PROTOCOL_VERSION_MISMATCH when a Core of another release welcomes us anyway. */
const greet = <E>(hello: Hello<E>, options: ConnectOptions) =>
  hello({ protocolVersion: PROTOCOL_VERSION, component: options.component, version: options.version }).pipe(
    Effect.flatMap((welcome) =>
      welcome.protocolVersion === PROTOCOL_VERSION
        ? Effect.void
        : Effect.fail(
            PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", options.component, {
              details: { actual: PROTOCOL_VERSION, expected: welcome.protocolVersion }
            })
          )
    )
  )

/** Socket, serialization and proof, built into the caller's scope so the socket outlives the constructor. */
const clientContext = <Id extends RpcMiddleware.AnyId, S>(
  auth: Context.Key<Id, S>,
  info: CoreRuntimeInfo,
  proof: Proof,
  options: ConnectOptions
) => Layer.build(Layer.mergeAll(protocol(info, options), proving(auth, proof)))

/** A host-role client, connected and greeted, scoped to the caller; it proves the announcement's launch secret. */
export const connectHost = Effect.fn("CoreClient.connectHost")(function* (
  info: CoreRuntimeInfo,
  options: ConnectOptions & { readonly proof?: Proof }
) {
  const proof = options.proof ?? { launchSecret: info.launchSecret }
  const context = yield* clientContext(HostAuth, info, proof, options)
  const client = yield* RpcClient.make(HostClientRpcs).pipe(Effect.provideContext(context))
  if (options.hello !== false) yield* greet(client["core.hello"], options)
  return client
})

export type HostClient = Effect.Success<ReturnType<typeof connectHost>>

/**
 * A desktop-role client (the desktop app, pedelec-cli's user commands), connected and greeted, scoped to the caller;
 * it proves the announcement's launch secret.
 */
export const connectDesktop = Effect.fn("CoreClient.connectDesktop")(function* (
  info: CoreRuntimeInfo,
  options: ConnectOptions & { readonly proof?: Proof }
) {
  const proof = options.proof ?? { launchSecret: info.launchSecret }
  const context = yield* clientContext(DesktopAuth, info, proof, options)
  const client = yield* RpcClient.make(DesktopClientRpcs).pipe(Effect.provideContext(context))
  if (options.hello !== false) yield* greet(client["core.hello"], options)
  return client
})

export type DesktopClient = Effect.Success<ReturnType<typeof connectDesktop>>

/** An agent-role client (what pedelec-cli and pedelec-deno are), proving one session's capability. */
export const connectAgent = Effect.fn("CoreClient.connectAgent")(function* (
  info: CoreRuntimeInfo,
  options: ConnectOptions & { readonly proof: Proof }
) {
  const context = yield* clientContext(AgentAuth, info, options.proof, options)
  const client = yield* RpcClient.make(AgentClientRpcs).pipe(Effect.provideContext(context))
  if (options.hello !== false) yield* greet(client["core.hello"], options)
  return client
})

export type AgentClient = Effect.Success<ReturnType<typeof connectAgent>>
