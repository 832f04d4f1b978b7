/**
 * Bridge — what main answers the renderer with, whatever carries the messages (Electron IPC in the app, the loopback
 * transport in the tests and the preview):
 *
 *   call(request: unknown)  => Effect<DesktopResponse (encoded), never>    {ok:true,result} | {ok:false,error}
 *   watch(request: unknown) => Stream<DesktopStreamItem (encoded), never>  {kind:"item",item}… then end | error
 *
 * Each request is decoded with DesktopLink (anything else is INVALID_INPUT, and nothing is forwarded); a `desktop.*`
 * method goes to the Core RPC of the same tag through ToCore, `app.*` are answered here (`app.info` from what the
 * layer is given, `app.native_host.*` by NativeHost.ts, `app.self_test` by SelfTest.ts, whose Core hops go through
 * the same forwarding as the renderer's calls). Neither ever fails: every
 * failure is an encoded `PedelecErrorWire`. A transport failure (Core went away) drops the connection, so the next
 * call finds the running Core again; a stale launch secret (Core restarted) is retried once on a fresh connection.
 */
import {
  type AppInfo,
  type DesktopMethod,
  DesktopMethods,
  type DesktopParams,
  DesktopRequest,
  type DesktopResponse,
  type DesktopResult,
  type DesktopStreamItem,
  DesktopStreamRequest,
  DesktopStreams
} from "@pedelec/contracts/link/DesktopLink"
import { DesktopRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PedelecError, type PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { DesktopClient } from "@pedelec/core-client/CoreClient"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { NativeHostConfig } from "../main/NativeHostSetup.ts"
import { makeNativeHost, type NativeHostShape } from "./NativeHost.ts"
import { runSelfTest } from "./SelfTest.ts"
import { coreUnavailable, ToCore } from "./ToCore.ts"

export type EncodedResponse = typeof DesktopResponse.Encoded
export type EncodedStreamItem = typeof DesktopStreamItem.Encoded

export interface BridgeShape {
  readonly call: (request: unknown) => Effect.Effect<EncodedResponse>
  readonly watch: (request: unknown) => Stream.Stream<EncodedStreamItem>
}

const strict = { onExcessProperty: "error" } as const

const invalid = (reason: string) => PedelecError.fromCode("INVALID_INPUT", "desktop", { details: { reason } })

/** The first line of a schema failure: enough to say which field, without echoing a large payload back. */
const reasonOf = (error: unknown) => String(error).split("\n").slice(0, 3).join(" ").slice(0, 500)

const decode = <S extends Schema.Top>(schema: S, value: unknown, what: string) =>
  Schema.decodeUnknownEffect(schema as unknown as Schema.Codec<S["Type"], unknown>)(value, strict).pipe(
    Effect.mapError((error) => invalid(`${what}: ${reasonOf(error)}`))
  )

type Forward = (payload?: unknown) => Effect.Effect<unknown, unknown>

/** A method whose params are `{}` is an RPC without payload: called with none, as the RPC says. */
const payloadless = (method: DesktopMethod) => DesktopRpcs.requests.get(method)?.payloadSchema === Schema.Void

/**
 * Every failure as the renderer reads it: Core's coded errors as they are, anything else Core-unavailable. A stream
 * of Core's that was interrupted rather than failed is one whose socket closed under it (Core stopped): also gone.
 */
const toWire = (cause: Cause.Cause<unknown>): PedelecErrorWire => {
  const error = Cause.findErrorOption(cause)
  if (error._tag === "Some" && error.value instanceof PedelecError) return error.value.toWire()
  if (error._tag === "Some" || Cause.hasInterruptsOnly(cause))
    return coreUnavailable("the connection to Core closed").toWire()
  return PedelecError.fromCode("INTERNAL_ERROR", "desktop", {
    details: { reason: reasonOf(Cause.squash(cause)) }
  }).toWire()
}

/** What main answers itself, and with what; undefined for a `desktop.*` method, which goes to Core. */
interface Here {
  readonly app: AppInfo
  readonly host: NativeHostShape
  readonly selfTest: Effect.Effect<unknown>
}

const answerHere = (
  here: Here,
  method: DesktopMethod,
  params: unknown
): Effect.Effect<unknown, PedelecError> | undefined => {
  if (method === "app.info") return Effect.succeed(here.app)
  if (method === "app.native_host.status") return here.host.status
  if (method === "app.native_host.register") {
    return here.host.register((params as DesktopParams<"app.native_host.register">).browser)
  }
  if (method === "app.self_test") return here.selfTest
  return undefined
}

/** A forwarded call's failure as a PedelecError: Core's own, or Core-unavailable for a transport failure. */
const coded = (error: unknown) =>
  error instanceof PedelecError ? error : coreUnavailable("the connection to Core closed")

const isTransport = (error: unknown) => !(error instanceof PedelecError)
const isStaleSecret = (error: unknown) => error instanceof PedelecError && error.code === "UNAUTHORIZED"

export class Bridge extends Context.Service<Bridge, BridgeShape>()("pedelec/desktop/bridge/Bridge") {
  /** `nativeHost`: what main registers at start (DesktopConfig's); without it Health's Register says it cannot. */
  static readonly layer = (app: AppInfo, nativeHost?: NativeHostConfig) =>
    Layer.effect(
      Bridge,
      Effect.gen(function* () {
        const core = yield* ToCore
        const host = makeNativeHost(nativeHost)
        /** One forwarded call; on a transport failure or a stale secret the connection goes. */
        const once = (method: DesktopMethod, params: unknown) =>
          Effect.gen(function* () {
            const client = yield* core.client
            const rpc = (client as unknown as Record<string, Forward>)[method] as Forward
            return yield* (payloadless(method) ? rpc() : rpc(params)).pipe(
              Effect.tapError((error) => (isTransport(error) || isStaleSecret(error) ? core.drop(client) : Effect.void))
            )
          })
        const forward = (method: DesktopMethod, params: unknown) =>
          once(method, params).pipe(Effect.catchIf(isStaleSecret, () => once(method, params)))
        const ask = <M extends DesktopMethod>(method: M, params: unknown) =>
          forward(method, params).pipe(
            Effect.map((result) => result as DesktopResult<M>),
            Effect.mapError(coded)
          )
        const selfTest = runSelfTest({
          status: ask("desktop.status", {}),
          providers: ask("desktop.providers.list", { rescan: false }),
          host,
          config: nativeHost
        })
        const here: Here = { app, host, selfTest }
        const answer = Effect.fnUntraced(function* (request: unknown) {
          const { method, params } = yield* decode(DesktopRequest, request, "not a desktop request")
          const spec = DesktopMethods[method]
          const decoded = yield* decode(spec.params, params, `params of ${method}`)
          const result = yield* answerHere(here, method, decoded) ?? forward(method, decoded)
          return yield* Schema.encodeUnknownEffect(spec.result as unknown as Schema.Codec<unknown, unknown>)(result)
        })
        const call = (request: unknown): Effect.Effect<EncodedResponse> =>
          answer(request).pipe(
            Effect.map((result): EncodedResponse => ({ ok: true, result })),
            Effect.catchCause((cause) => Effect.succeed<EncodedResponse>({ ok: false, error: toWire(cause) }))
          )
        const watch = (request: unknown) => watchStream(core, request)
        return Bridge.of({ call, watch })
      })
    )
}

const items = (client: DesktopClient, stream: keyof typeof DesktopStreams) =>
  (client[stream]() as Stream.Stream<unknown, unknown>).pipe(
    Stream.mapEffect((item) =>
      Schema.encodeUnknownEffect(DesktopStreams[stream].result as unknown as Schema.Codec<unknown, unknown>)(item)
    ),
    Stream.map((item): EncodedStreamItem => ({ kind: "item", item }))
  )

/** A stream's items, then `end`; or its error as the last item, dropping the connection if Core went away. */
const watchStream = (core: ToCore["Service"], request: unknown): Stream.Stream<EncodedStreamItem> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const { method, params } = yield* decode(DesktopStreamRequest, request, "not a desktop stream request")
      yield* decode(DesktopStreams[method].params, params, `params of ${method}`)
      const client = yield* core.client
      return items(client, method).pipe(
        Stream.tapCause((cause) => {
          const error = Cause.findErrorOption(cause)
          const gone = error._tag === "Some" ? isTransport(error.value) || isStaleSecret(error.value) : true
          return gone ? core.drop(client) : Effect.void
        })
      )
    })
  ).pipe(
    Stream.concat(Stream.succeed<EncodedStreamItem>({ kind: "end" })),
    Stream.catchCause((cause) => Stream.succeed<EncodedStreamItem>({ kind: "error", error: toWire(cause) }))
  )
