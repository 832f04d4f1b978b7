/**
 * Requests — turns one inbound frame into a typed call, or into the failure response it gets: JSON, the depth bound
 * (checked before any Schema runs), the HostRequest envelope, the page's origin, then the method's params
 * (`HostMethods`). Decoding only: what a call does is Relay's business, and it never sees Core or the port.
 */

import type { RequestId } from "@pedelec/contracts/Ids"
import { issuesOfExit, jsonDepthExceeded, MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import {
  ExtensionMethods,
  type HostMethod,
  HostMethods,
  type HostParams,
  HostRequest,
  type HostResponse,
  type OriginOf
} from "@pedelec/contracts/link/HostLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { peekRequestId } from "./Framing.ts"

export interface CallOf<M extends HostMethod> {
  readonly method: M
  readonly origin: OriginOf<M>
  readonly params: HostParams<M>
}

/** A decoded request's method, origin and params, narrowed together. */
export type Call = { readonly [M in HostMethod]: CallOf<M> }[HostMethod]

export type Decoded =
  | { readonly _tag: "Call"; readonly id: RequestId; readonly call: Call }
  /** Refused before dispatch: this response says why. */
  | { readonly _tag: "Refused"; readonly response: HostResponse }
  /** Unreadable and without a readable id: there is nobody to answer. */
  | { readonly _tag: "Unanswerable"; readonly reason: string }

/** Unknown keys are refused, not dropped: a misspelt optional field would otherwise pass silently. */
const strict = { onExcessProperty: "error" } as const

export const failure = (id: RequestId, error: PedelecError): HostResponse => ({
  kind: "response",
  id,
  ok: false,
  error: error.toWire()
})

const protocolError = (reason: string, details: Record<string, string> = {}) =>
  PedelecError.fromCode("PROTOCOL_ERROR", "native-host", { details: { reason, ...details } })

/** Refused with `error` when an id can be read from what arrived, else unanswerable. */
const refuse = (text: string, error: PedelecError): Decoded => {
  const id = peekRequestId(text)
  return id === undefined
    ? { _tag: "Unanswerable", reason: String(error.details?.reason ?? error.message) }
    : { _tag: "Refused", response: failure(id as RequestId, error) }
}

const parse = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

export const decodeFrame = (text: string): Decoded => {
  const parsed = parse(text)
  if (!parsed.ok) return refuse(text, protocolError("the frame is not JSON"))
  const tooDeep = jsonDepthExceeded(parsed.value)
  if (tooDeep !== undefined) {
    return refuse(text, protocolError(`the message nests deeper than ${MAX_JSON_DEPTH} levels`, { pointer: tooDeep }))
  }
  const envelope = Schema.decodeUnknownExit(HostRequest)(parsed.value)
  if (Exit.isFailure(envelope)) {
    const first = issuesOfExit(envelope)[0] ?? { pointer: "", reason: "invalid" }
    return refuse(text, protocolError(`not a request: ${first.reason}`, { pointer: first.pointer }))
  }
  const { id, origin, method, params } = envelope.value
  const extensionOnly = Object.hasOwn(ExtensionMethods, method)
  if (origin === undefined && !extensionOnly) {
    return { _tag: "Refused", response: failure(id, protocolError(`${method} needs the page's origin`)) }
  }
  const schema = HostMethods[method].params as unknown as Schema.Decoder<unknown>
  const decoded = Schema.decodeUnknownExit(schema)(params, strict)
  if (Exit.isFailure(decoded)) {
    const first = issuesOfExit(decoded)[0] ?? { pointer: "", reason: "invalid" }
    const error = PedelecError.fromCode("INVALID_INPUT", "native-host", {
      details: { reason: `${first.reason} at /params${first.pointer}`, pointer: `/params${first.pointer}`, method }
    })
    return { _tag: "Refused", response: failure(id, error) }
  }
  // An extension method names its origin in its params; one on the envelope is the page's, and not for it.
  return {
    _tag: "Call",
    id,
    call: { method, origin: extensionOnly ? undefined : origin, params: decoded.value } as Call
  }
}
