/**
 * HostCalls — the extension's own calls to Core (`session.list` for the options page, `origin.revoke` on
 * revocation): each opens a native port of its own (a native host process), sends its requests (one, or one per
 * params with `callEach`), checks each answer against the method's result Schema and closes the port. Not for page
 * requests (PageConnection forwards those on the page's own port), and never made for an unapproved origin's sake.
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
    /** One request of `method` per params, all on one native port (one host process), each answered on its own. */
    readonly callEach: <M extends ExtensionMethod>(
      method: M,
      paramsList: ReadonlyArray<Params<M>>
    ) => Effect.Effect<ReadonlyArray<Exit.Exit<Result<M>, PedelecError>>>
  }
>()("pedelec/extension/HostCalls") {
  static readonly layer = Layer.effect(
    HostCalls,
    Effect.gen(function* () {
      const calls: HostCallsState = { native: yield* NativeLink, nextId: 0 }
      return HostCalls.of({
        call: (method, params) =>
          Effect.scoped(Effect.flatMap(send(calls, method, [params]), ([answer]) => answerOf(method, answer!))).pipe(
            Effect.withSpan("HostCalls.call")
          ),
        callEach: (method, paramsList) =>
          Effect.scoped(
            Effect.flatMap(send(calls, method, paramsList), (answers) =>
              Effect.forEach(answers, (answer) => Effect.exit(answerOf(method, answer)), { concurrency: "unbounded" })
            )
          ).pipe(Effect.withSpan("HostCalls.callEach"))
      })
    })
  )
}

interface HostCallsState {
  readonly native: NativeLink["Service"]
  /** Ids of the extension's own requests (`x0`, `x1`, …), unique across its ports. */
  nextId: number
}

const timedOut = (method: ExtensionMethod) =>
  PedelecError.fromCode("REQUEST_TIMEOUT", "extension", { details: { method, timeoutMs: HOST_CALL_TIMEOUT_MS } })

/** Opens one native port and sends a request of `method` for each params on it; each answer settles its own. */
const send = Effect.fnUntraced(function* (
  calls: HostCallsState,
  method: ExtensionMethod,
  paramsList: ReadonlyArray<unknown>
) {
  const answers = new Map<string, Deferred.Deferred<unknown, PedelecError>>()
  const requests: Array<HostRequest> = []
  for (const params of paramsList) {
    const id = `x${(calls.nextId++).toString(36)}` as RequestId
    answers.set(id, yield* Deferred.make<unknown, PedelecError>())
    requests.push({ kind: "request", id, method, params })
  }
  const settle = (id: string | undefined, exit: Exit.Exit<unknown, PedelecError>) => {
    const answer = id === undefined ? undefined : answers.get(id)
    if (answer !== undefined) Deferred.doneUnsafe(answer, exit)
  }
  const link = yield* calls.native.open({
    onMessage: (message) => {
      if (message.kind !== "response") return
      settle(message.id, message.ok ? Exit.succeed(message.result) : Exit.fail(PedelecError.fromWire(message.error)))
    },
    onLost: (lost) => settle(lost.requestId, Exit.fail(lost.error)),
    onClosed: (error) => {
      for (const id of answers.keys()) settle(id, Exit.fail(error))
    }
  })
  const closed = Exit.fail(PedelecError.fromCode("NATIVE_CONNECTION_CLOSED", "extension"))
  for (const request of requests) if (!link.send(request)) settle(request.id, closed)
  return [...answers.values()]
})

/** One answer, in time and of the method's result Schema. */
const answerOf = Effect.fnUntraced(function* <M extends ExtensionMethod>(
  method: M,
  answer: Deferred.Deferred<unknown, PedelecError>
) {
  const result = yield* Deferred.await(answer).pipe(
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
