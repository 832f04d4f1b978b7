/**
 * Requests — turns one inbound frame into a typed call, or into the failure response it gets: JSON, the depth bound
 * (checked before any Schema runs), the HostRequest envelope, the page's origin, then the method's params
 * (`PageMethods`, `ExtensionMethods`, and `HostSubscribeParams` for `subscribe`). Decoding only: what a call does is
 * Relay's business, and it never sees Core or the port.
 */

import type { Origin, RequestId } from "@pedelec/contracts/Ids"
import { issuesOfExit, jsonDepthExceeded, MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import { ExtensionMethods, HostRequest, type HostResponse, HostSubscribeParams } from "@pedelec/contracts/link/HostLink"
import { type PageMethod, PageMethods } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { peekRequestId } from "./Framing.ts"

type PageParamSchemas = { readonly [M in PageMethod]: (typeof PageMethods)[M]["params"] }

/** The params every method takes on this link. */
export const HOST_PARAMS = {
  ...(Object.fromEntries(
    Object.entries(PageMethods).map(([method, { params }]) => [method, params])
  ) as PageParamSchemas),
  subscribe: HostSubscribeParams,
  list_sessions: ExtensionMethods.list_sessions.params,
  revoke_origin: ExtensionMethods.revoke_origin.params
} as const

export type HostMethod = keyof typeof HOST_PARAMS

/** A decoded request's method and params, narrowed together. */
export type Call = {
  readonly [M in HostMethod]: { readonly method: M; readonly params: (typeof HOST_PARAMS)[M]["Type"] }
}[HostMethod]

export type Decoded =
  | { readonly _tag: "Call"; readonly id: RequestId; readonly origin: Origin | undefined; readonly call: Call }
  /** Refused before dispatch: this response says why. */
  | { readonly _tag: "Refused"; readonly response: HostResponse }
  /** Unreadable and without a readable id: there is nobody to answer. */
  | { readonly _tag: "Unanswerable"; readonly reason: string }

const EXTENSION_ONLY: ReadonlySet<HostMethod> = new Set(["list_sessions", "revoke_origin"])
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
  if (origin === undefined && !EXTENSION_ONLY.has(method)) {
    return { _tag: "Refused", response: failure(id, protocolError(`${method} needs the page's origin`)) }
  }
  const schema = HOST_PARAMS[method] as unknown as Schema.Decoder<unknown>
  const decoded = Schema.decodeUnknownExit(schema)(params, strict)
  if (Exit.isFailure(decoded)) {
    const first = issuesOfExit(decoded)[0] ?? { pointer: "", reason: "invalid" }
    const error = PedelecError.fromCode("INVALID_INPUT", "native-host", {
      details: { reason: `${first.reason} at /params${first.pointer}`, pointer: `/params${first.pointer}`, method }
    })
    return { _tag: "Refused", response: failure(id, error) }
  }
  return { _tag: "Call", id, origin, call: { method, params: decoded.value } as Call }
}
