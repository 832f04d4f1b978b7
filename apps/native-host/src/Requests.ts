/**
 * Requests — turns one inbound frame into a typed call, or into the failure response it gets: the value count and
 * depth bounds (InboundBounds, on the text, before JSON.parse), JSON, the HostRequest envelope, the page's origin, the
 * method's params (`HostMethods`), then whether Core's line could carry it. Decoding only: what a call does is Relay's
 * business, and it never sees Core or the port.
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
import { MAX_LINE_LENGTH } from "@pedelec/core-client/Ndjson"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { peekRequestId } from "./Framing.ts"
import { MAX_JSON_VALUES, relayedLengthOver, scanJson, tooDeep } from "./InboundBounds.ts"
import { messageTooLarge } from "./NativeMessaging.ts"

export interface CallOf<M extends HostMethod> {
  readonly method: M
  readonly origin: OriginOf<M>
  readonly params: HostParams<M>
}

/** A decoded request's method, origin and params, narrowed together. */
export type Call = { readonly [M in HostMethod]: CallOf<M> }[HostMethod]

export type Decoded =
  /** `textRefs`: the extension reads HostTextRef on this request's subscription. */
  | { readonly _tag: "Call"; readonly id: RequestId; readonly call: Call; readonly textRefs: boolean }
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

const tooManyValues = () =>
  PedelecError.fromCode("MESSAGE_TOO_LARGE", "native-host", {
    details: { values: MAX_JSON_VALUES + 1, limit: MAX_JSON_VALUES },
    message: `A message of more than ${MAX_JSON_VALUES} JSON values exceeds the limit. Send less data at once, or use an asset for file content.`
  })

/** The depth walk, for its pointer; run only on a message the scan found too deep, so never on a large one. */
const depthError = (value: unknown): PedelecError | undefined => {
  const pointer = jsonDepthExceeded(value)
  return pointer === undefined
    ? undefined
    : protocolError(`the message nests deeper than ${MAX_JSON_DEPTH} levels`, { pointer })
}

/** The bounds, JSON and the envelope: everything before the method is known. */
const readEnvelope = (text: string): Decoded | typeof HostRequest.Type => {
  const shape = scanJson(text)
  if (shape.values > MAX_JSON_VALUES) return refuse(text, tooManyValues())
  const parsed = parse(text)
  if (!parsed.ok) return refuse(text, protocolError("the frame is not JSON"))
  const deep = tooDeep(shape) ? depthError(parsed.value) : undefined
  if (deep !== undefined) return refuse(text, deep)
  const envelope = Schema.decodeUnknownExit(HostRequest)(parsed.value)
  if (Exit.isSuccess(envelope)) return envelope.value
  const first = issuesOfExit(envelope)[0] ?? { pointer: "", reason: "invalid" }
  return refuse(text, protocolError(`not a request: ${first.reason}`, { pointer: first.pointer }))
}

export const decodeFrame = (text: string): Decoded => {
  const envelope = readEnvelope(text)
  if ("_tag" in envelope) return envelope
  const { id, origin, method, params, textRefs } = envelope
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
  // Core would close the host's whole connection on a longer line: refused here, for this request alone.
  const relayed = relayedLengthOver(text.length, decoded.value)
  if (relayed !== undefined)
    return { _tag: "Refused", response: failure(id, messageTooLarge(relayed, MAX_LINE_LENGTH)) }
  // An extension method names its origin in its params; one on the envelope is the page's, and not for it.
  return {
    _tag: "Call",
    id,
    call: { method, origin: extensionOnly ? undefined : origin, params: decoded.value } as Call,
    textRefs: textRefs === true
  }
}
