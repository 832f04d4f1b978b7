/**
 * HostCalls — the extension's own calls to Core (`session.list` for the options page, `origin.revoke` on
 * revocation): each opens a native port of its own, sends one request, checks the answer against the method's result
 * Schema and closes the port. Not for page requests (PageConnection forwards those on the page's own port), and
 * never made for an unapproved origin's sake.
 */
import type { RequestId } from "@pedelec/contracts/Ids"
import { type ExtensionMethod, ExtensionMethods, type HostRequest } from "@pedelec/contracts/link/HostLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { NativeLink } from "./NativeLink.ts"

/** Long enough for the host to start a stopped Core (≤ 10 s, SPEC §5). */
export const HOST_CALL_TIMEOUT_MS = 15_000

type Params<M extends ExtensionMethod> = (typeof ExtensionMethods)[M]["params"]["Type"]
type Result<M extends ExtensionMethod> = (typeof ExtensionMethods)[M]["result"]["Type"]

export class HostCalls extends Context.Service<
  HostCalls,
  {
    readonly call: <M extends ExtensionMethod>(method: M, params: Params<M>) => Effect.Effect<Result<M>, PedelecError>
  }
>()("pedelec/extension/HostCalls") {
  static readonly layer = Layer.effect(
    HostCalls,
    Effect.gen(function* () {
      const calls: HostCallsState = { native: yield* NativeLink, nextId: 0 }
      return HostCalls.of({
        call: (method, params) => Effect.scoped(call(calls, method, params)).pipe(Effect.withSpan("HostCalls.call"))
      })
    })
  )
}

interface HostCallsState {
  readonly native: NativeLink["Service"]
  /** Ids of the extension's own requests (`x0`, `x1`, …), each on a port of its own. */
  nextId: number
}

const timedOut = (method: ExtensionMethod) =>
  PedelecError.fromCode("REQUEST_TIMEOUT", "extension", { details: { method, timeoutMs: HOST_CALL_TIMEOUT_MS } })

/** Opens a native port for one request and answers what comes back for it, whole or not. */
const send = Effect.fnUntraced(function* (calls: HostCallsState, method: ExtensionMethod, params: unknown) {
  const id = `x${(calls.nextId++).toString(36)}` as RequestId
  const answer = yield* Deferred.make<unknown, PedelecError>()
  const settle = (exit: Exit.Exit<unknown, PedelecError>) => Deferred.doneUnsafe(answer, exit)
  const link = yield* calls.native.open({
    onMessage: (message) => {
      if (message.kind !== "response" || message.id !== id) return
      settle(message.ok ? Exit.succeed(message.result) : Exit.fail(PedelecError.fromWire(message.error)))
    },
    onLost: (lost) => {
      if (lost.requestId === id) settle(Exit.fail(lost.error))
    },
    onClosed: (error) => settle(Exit.fail(error))
  })
  const request: HostRequest = { kind: "request", id, method, params }
  if (!link.send(request)) return yield* Effect.fail(PedelecError.fromCode("NATIVE_CONNECTION_CLOSED", "extension"))
  return yield* Deferred.await(answer)
})

const call = Effect.fnUntraced(function* <M extends ExtensionMethod>(
  calls: HostCallsState,
  method: M,
  params: Params<M>
) {
  const result = yield* send(calls, method, params).pipe(
    Effect.timeoutOrElse({ duration: HOST_CALL_TIMEOUT_MS, orElse: () => Effect.fail(timedOut(method)) })
  )
  const schema = ExtensionMethods[method].result as unknown as Schema.Decoder<Result<M>>
  const decoded = Schema.decodeUnknownExit(schema)(result)
  if (Exit.isSuccess(decoded)) return decoded.value
  return yield* Effect.fail(
    PedelecError.fromCode("PROTOCOL_ERROR", "extension", {
      details: { reason: `Core answered ${method} with a result of the wrong shape` }
    })
  )
})
