/**
 * Relay — what the host does with each request from the extension: decode it (Requests), call Core as the host role
 * for the request's origin (ToCore), and answer exactly once with a HostResponse; a subscription then streams its
 * events as HostEvents (a large text the extension already has as a HostTextRef, when it asked: Core's
 * `session.subscribe_refs` names it so, and the ref goes on as it is) and ends with HostSubscriptionEnded. Requests
 * run concurrently; all of them, and every subscription, stop when stdin ends, or after a length Chrome never sends
 * is answered: such a stream cannot be read again, so the host exits non-zero and the browser reconnects. It owns
 * no framing (NativeMessaging) and decides no ownership (Core does).
 */

import type { Origin, RequestId } from "@pedelec/contracts/Ids"
import {
  type CoreCallMethod,
  type CorePayload,
  corePayload,
  EXTENSION_ANSWERS,
  HOST_LIMITS,
  type HostSubscribeParams,
  type HostToExtension
} from "@pedelec/contracts/link/HostLink"
import type { Crossing } from "@pedelec/contracts/link/TextRuns"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Stream from "effect/Stream"
import { type Inbound, peekRequestId } from "./Framing.ts"
import { log } from "./Log.ts"
import { messageTooLarge, NativePort } from "./NativeMessaging.ts"
import { type Call, type CallOf, decodeFrame, failure } from "./Requests.ts"
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

/** What every step of the relay talks to: the extension's port and the lazily connected Core. */
interface Ends {
  readonly port: NativePort["Service"]
  readonly core: ToCore["Service"]
}

/** The Core RPCs relayed one call each, each taking the payload `corePayload` builds for it. */
type CoreCalls = { readonly [M in CoreCallMethod]: (payload: CorePayload<M>) => Effect.Effect<unknown, unknown> }

const answeredByExtension = (call: Call): call is Extract<Call, { method: (typeof EXTENSION_ANSWERS)[number] }> =>
  (EXTENSION_ANSWERS as ReadonlyArray<string>).includes(call.method)

/** One answer per request; a result over the 16 MiB cap is answered MESSAGE_TOO_LARGE instead. */
const answer = ({ port }: Ends, id: RequestId, outcome: Effect.Effect<unknown, unknown>) =>
  outcome.pipe(
    Effect.matchEffect({
      onSuccess: (result) => port.send({ kind: "response", id, ok: true, result }),
      onFailure: (error) => port.send(failure(id, toPedelecError(error)))
    }),
    Effect.catch((tooLarge) => port.send(failure(id, tooLarge))),
    Effect.catch((error) => Effect.sync(() => log(`could not answer ${id}: ${error.message}`)))
  )

/** The Core RPC of the call's own tag; one that answers nothing is answered `{}` (HostLink's CORE_PAYLOADS). */
const callCore = <M extends CoreCallMethod>(client: HostClient, call: CallOf<M>) => {
  // This assignment checks every relayed tag, and the payload built for it, against HostRpcs.
  const calls: CoreCalls = client
  return calls[call.method](corePayload(call.method, call.origin, call.params)).pipe(
    Effect.map((result) => result ?? {})
  )
}

/**
 * One event of subscription `id`, as it came from Core: a ref Core sent (the extension asked for refs) goes on as it
 * is, since the extension's runs of this subscription are fed the same crossings as Core's, in the same order.
 */
const toExtension =
  (id: RequestId) =>
  (crossing: Crossing): HostToExtension => {
    // `kind`, then `subscription`: the extension reads whom a message it lost was for from its head (peekHead).
    if (crossing.kind === "event") return { kind: "event", subscription: id, event: crossing.event }
    const { fromSeq, toSeq } = crossing
    return { kind: "text_ref", subscription: id, event: crossing.event, fromSeq, toSeq }
  }

/** Core's stream of the subscription: with refs where the extension reads them, else every text whole. */
const coreStream = (client: HostClient, origin: Origin, params: HostSubscribeParams, textRefs: boolean) =>
  textRefs
    ? client["session.subscribe_refs"]({ origin, ...params })
    : client["session.subscribe"]({ origin, ...params }).pipe(
        Stream.map((event): Crossing => ({ kind: "event", event }))
      )

const subscribe = Effect.fn("Relay.subscribe")(function* (
  ends: Ends,
  id: RequestId,
  origin: Origin,
  params: HostSubscribeParams,
  textRefs: boolean
) {
  const client = yield* ends.core.client.pipe(Effect.catch((error) => Effect.succeed(error)))
  if (client instanceof PedelecError) return yield* answer(ends, id, Effect.fail(client))
  // Core's subscribe checks access as `session.resume` does, but a stream has no "accepted" reply: checking first
  // lets a refused subscribe fail as a request rather than as an ended subscription.
  const access = yield* client["session.resume"]({ origin, sessionId: params.sessionId }).pipe(Effect.exit)
  if (access._tag === "Failure") return yield* answer(ends, id, Effect.failCause(access.cause))
  yield* answer(ends, id, Effect.succeed({}))
  const ended = yield* coreStream(client, origin, params, textRefs).pipe(
    // The events Core sent together (a tool call's result and the status after it) go out in one stdout write.
    Stream.runForEachArray((crossings) => ends.port.sendAll(crossings.map(toExtension(id)))),
    Effect.exit
  )
  const error = ended._tag === "Failure" ? Cause.squash(ended.cause) : undefined
  yield* ends.port
    .send({
      kind: "subscription_ended",
      subscription: id,
      sessionId: params.sessionId,
      ...(error === undefined ? {} : { error: toPedelecError(error).toWire() })
    })
    .pipe(Effect.catch(() => Effect.void))
})

const dispatch = (ends: Ends, id: RequestId, call: Call, textRefs: boolean) => {
  if (call.method === "session.subscribe") return subscribe(ends, id, call.origin, call.params, textRefs)
  // Refused before anything connects, so they never wake Core.
  if (answeredByExtension(call)) {
    const refused = protocolError(`${call.method} is answered by the extension itself, not the native host`)
    return answer(ends, id, Effect.fail(refused))
  }
  return answer(
    ends,
    id,
    Effect.flatMap(ends.core.client, (client) => callCore(client, call))
  )
}

/** MESSAGE_TOO_LARGE to the request whose head could be read, if any. */
const refuseTooLarge = (ends: Ends, inbound: { readonly bytes: number; readonly head: string }, limit: number) => {
  const id = peekRequestId(inbound.head)
  log(`refused an inbound frame of ${inbound.bytes} bytes${id === undefined ? "" : ` (request ${id})`}`)
  return id === undefined
    ? Effect.void
    : ends.port.send(failure(id as RequestId, messageTooLarge(inbound.bytes, limit))).pipe(Effect.ignore)
}

class Desynchronised extends Error {}

const handle = (ends: Ends, inbound: Exclude<Inbound, { _tag: "Desync" }>) => {
  if (inbound._tag === "TooLarge") return refuseTooLarge(ends, inbound, inbound.limit)
  const decoded = decodeFrame(inbound.text)
  switch (decoded._tag) {
    case "Call":
      return dispatch(ends, decoded.id, decoded.call, decoded.textRefs)
    case "Refused":
      return ends.port.send(decoded.response).pipe(Effect.ignore)
    case "Unanswerable":
      return Effect.sync(() => log(`dropped an unreadable frame: ${decoded.reason}`))
  }
}

export const run = Effect.gen(function* () {
  const ends: Ends = { port: yield* NativePort, core: yield* ToCore }
  const requests = yield* FiberSet.make()
  yield* ends.port.inbound.pipe(
    Stream.runForEach((inbound) =>
      inbound._tag === "Desync"
        ? Effect.andThen(
            refuseTooLarge(ends, inbound, HOST_LIMITS.maxFrameToHost),
            Effect.fail(new Desynchronised(`a frame length of ${inbound.bytes} bytes: stdin is out of step`))
          )
        : FiberSet.run(requests, handle(ends, inbound))
    )
  )
  // stdin ended: Chrome closed the port. Leaving the caller's scope interrupts every request and subscription.
  log("stdin closed; exiting")
})
