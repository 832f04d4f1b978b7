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
      const native = yield* NativeLink
      let next = 0

      const call = <M extends ExtensionMethod>(method: M, params: Params<M>) =>
        Effect.scoped(
          Effect.gen(function* () {
            const id = `x${(next++).toString(36)}` as RequestId
            const answer = yield* Deferred.make<unknown, PedelecError>()
            const settle = (exit: Exit.Exit<unknown, PedelecError>) => Deferred.doneUnsafe(answer, exit)
            const link = yield* native.open({
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
            if (!link.send(request)) {
              return yield* Effect.fail(PedelecError.fromCode("NATIVE_CONNECTION_CLOSED", "extension"))
            }
            const result = yield* Deferred.await(answer).pipe(
              Effect.timeoutOrElse({
                duration: HOST_CALL_TIMEOUT_MS,
                orElse: () =>
                  Effect.fail(
                    PedelecError.fromCode("REQUEST_TIMEOUT", "extension", {
                      details: { method, timeoutMs: HOST_CALL_TIMEOUT_MS }
                    })
                  )
              })
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
        ).pipe(Effect.withSpan("HostCalls.call"))

      return HostCalls.of({ call })
    })
  )
}
