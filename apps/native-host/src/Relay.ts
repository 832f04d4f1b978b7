/**
 * Relay — what the host does with each request from the extension: decode it (Requests), call Core as the host role
 * for the request's origin (ToCore), and answer exactly once with a HostResponse; a subscription then streams its
 * events as HostEvents and ends with HostSubscriptionEnded. Requests run concurrently; all of them, and every
 * subscription, stop when stdin ends. It owns no framing (NativeMessaging) and decides no ownership (Core does).
 */

import type { Origin, RequestId } from "@pedelec/contracts/Ids"
import { HOST_LIMITS, type HostSubscribeParams } from "@pedelec/contracts/link/HostLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { HostClient } from "@pedelec/core/CoreClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Stream from "effect/Stream"
import { type Inbound, peekRequestId } from "./Framing.ts"
import { log } from "./Log.ts"
import { messageTooLarge, NativePort } from "./NativeMessaging.ts"
import { type Call, decodeFrame, failure } from "./Requests.ts"
import { ToCore } from "./ToCore.ts"

const protocolError = (reason: string) =>
  PedelecError.fromCode("PROTOCOL_ERROR", "native-host", { details: { reason } })

/** Core's own errors pass through; anything else on the way to Core (socket, RPC framing) means Core is not there. */
const toPedelecError = (error: unknown): PedelecError =>
  error instanceof PedelecError
    ? error
    : PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "native-host", {
        details: { reason: `the connection to Core failed: ${error instanceof Error ? error.message : String(error)}` }
      })

type Result = Effect.Effect<unknown, unknown>

/** Methods Core does not serve: refused before anything connects, so they never wake Core. */
const NOT_FOR_CORE = {
  hello: "is answered by the extension itself, not the native host",
  get_approval_status: "is answered by the extension itself, not the native host"
} as const

type CoreCall = Exclude<Call, { method: "subscribe" | keyof typeof NOT_FOR_CORE }>

/** The Core call behind each method; `origin` is the page's, already required by Requests for page methods. */
const callCore = (client: HostClient, origin: Origin, call: CoreCall): Result => {
  const empty = Effect.as({})
  switch (call.method) {
    case "create_session":
      return client["session.create"]({ origin, input: call.params.input })
    case "resume_session":
      // `claimTools` belongs to the subscription the extension opens next.
      return client["session.resume"]({ origin, sessionId: call.params.sessionId })
    case "list_providers":
      return client["providers.list"]({ rescan: false })
    case "get_settings":
      return client["settings.get"]()
    case "prepare":
      return client["session.prepare"]({ origin, ...call.params })
    case "send_text":
      return client["session.send_text"]({ origin, ...call.params })
    case "cancel":
      return client["session.cancel"]({ origin, ...call.params })
    case "end_session":
      return client["session.end"]({ origin, ...call.params }).pipe(empty)
    case "submit_tool_result":
      return client["tool.submit_result"]({ origin, ...call.params })
    case "tool_progress":
      return client["tool.progress"]({ origin, ...call.params }).pipe(empty)
    case "list_sessions":
      return client["session.list"](call.params)
    case "revoke_origin":
      return client["origin.revoke"](call.params)
    case "create_upload_ticket":
      return client["asset.upload_ticket"]({ origin, ...call.params })
    case "create_download_ticket":
      return client["asset.download_ticket"]({ origin, ...call.params })
    case "list_assets":
      return client["asset.list"]({ origin, ...call.params })
  }
}

export const run = Effect.gen(function* () {
  const port = yield* NativePort
  const core = yield* ToCore

  /** One answer per request; a result over the 16 MiB cap is answered MESSAGE_TOO_LARGE instead. */
  const answer = (id: RequestId, outcome: Effect.Effect<unknown, unknown>) =>
    outcome.pipe(
      Effect.matchEffect({
        onSuccess: (result) => port.send({ kind: "response", id, ok: true, result }),
        onFailure: (error) => port.send(failure(id, toPedelecError(error)))
      }),
      Effect.catch((tooLarge) => port.send(failure(id, tooLarge))),
      Effect.catch((error) => Effect.sync(() => log(`could not answer ${id}: ${error.message}`)))
    )

  const subscribe = Effect.fn("Relay.subscribe")(function* (
    id: RequestId,
    origin: Origin,
    params: HostSubscribeParams
  ) {
    const client = yield* core.client.pipe(Effect.catch((error) => Effect.succeed(error)))
    if (client instanceof PedelecError) return yield* answer(id, Effect.fail(client))
    // Core's subscribe checks access as `session.resume` does, but a stream has no "accepted" reply: checking first
    // lets a refused subscribe fail as a request rather than as an ended subscription.
    const access = yield* client["session.resume"]({ origin, sessionId: params.sessionId }).pipe(Effect.exit)
    if (access._tag === "Failure") return yield* answer(id, Effect.failCause(access.cause))
    yield* answer(id, Effect.succeed({}))
    const ended = yield* client["session.subscribe"]({ origin, ...params }).pipe(
      Stream.runForEach((event) => port.send({ kind: "event", subscription: id, event })),
      Effect.exit
    )
    const error = ended._tag === "Failure" ? Cause.squash(ended.cause) : undefined
    yield* port
      .send({
        kind: "subscription_ended",
        subscription: id,
        sessionId: params.sessionId,
        ...(error === undefined ? {} : { error: toPedelecError(error).toWire() })
      })
      .pipe(Effect.catch(() => Effect.void))
  })

  const dispatch = (id: RequestId, origin: Origin | undefined, call: Call) => {
    if (call.method === "subscribe") return subscribe(id, origin!, call.params)
    if (call.method in NOT_FOR_CORE) {
      const reason = NOT_FOR_CORE[call.method as keyof typeof NOT_FOR_CORE]
      return answer(id, Effect.fail(protocolError(`${call.method} ${reason}`)))
    }
    return answer(id, core.client.pipe(Effect.flatMap((client) => callCore(client, origin!, call as CoreCall))))
  }

  const handle = (inbound: Inbound) => {
    if (inbound._tag === "TooLarge") {
      const id = peekRequestId(inbound.head)
      log(`refused an inbound frame of ${inbound.bytes} bytes${id === undefined ? "" : ` (request ${id})`}`)
      return id === undefined
        ? Effect.void
        : port
            .send(failure(id as RequestId, messageTooLarge(inbound.bytes, HOST_LIMITS.maxFrameToHost)))
            .pipe(Effect.ignore)
    }
    const decoded = decodeFrame(inbound.text)
    switch (decoded._tag) {
      case "Call":
        return dispatch(decoded.id, decoded.origin, decoded.call)
      case "Refused":
        return port.send(decoded.response).pipe(Effect.ignore)
      case "Unanswerable":
        return Effect.sync(() => log(`dropped an unreadable frame: ${decoded.reason}`))
    }
  }

  const requests = yield* FiberSet.make()
  yield* port.inbound.pipe(Stream.runForEach((inbound) => FiberSet.run(requests, handle(inbound))))
  // stdin ended: Chrome closed the port. Leaving the caller's scope interrupts every request and subscription.
  log("stdin closed; exiting")
})
