/**
 * PageRequests — turns one message from a page port into a typed call, or into the response that refuses it. Order
 * matters: the depth bound runs before any Schema (a deep `[[[…]]]` would exhaust the stack in a recursive decoder),
 * then the PageRequest envelope (PROTOCOL_ERROR: the SDK and the extension disagree), then the method's params
 * (INVALID_INPUT with the JSON pointer of the fault; a bad tool manifest TOOLS_MANIFEST_INVALID, as the SDK says). A
 * message without a usable id cannot be answered and is dropped. Decoding only: what a call does is PageConnection's.
 */
import type { RequestId } from "@pedelec/contracts/Ids"
import { issuesOfExit, jsonDepthExceeded, MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import { type PageMethod, PageMethods, PageRequest, type PageResponse } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

/** A decoded request's method and params, narrowed together. */
export type PageCall = {
  readonly [M in PageMethod]: { readonly method: M; readonly params: (typeof PageMethods)[M]["params"]["Type"] }
}[PageMethod]

export type DecodedPageMessage =
  /** `textRefs`: on `session.subscribe`, the page reads PageTextRefs. */
  | { readonly _tag: "Call"; readonly id: RequestId; readonly call: PageCall; readonly textRefs: boolean }
  | { readonly _tag: "Refused"; readonly response: PageResponse }
  | { readonly _tag: "Dropped"; readonly reason: string }

/** Unknown keys are refused, not dropped: a misspelt optional field would otherwise pass silently. */
const strict = { onExcessProperty: "error" } as const
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export const failure = (id: RequestId, error: PedelecError): PageResponse => ({
  kind: "response",
  id,
  ok: false,
  error: error.toWire()
})

/** The id of a message that will not decode, read without Schema; undefined when there is none to answer. */
const usableId = (message: unknown): RequestId | undefined => {
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined
  const id = message.id
  return typeof id === "string" && ID_PATTERN.test(id) ? (id as RequestId) : undefined
}

const refuse = (message: unknown, error: PedelecError): DecodedPageMessage => {
  const id = usableId(message)
  return id === undefined
    ? { _tag: "Dropped", reason: String(error.details?.reason ?? error.message) }
    : { _tag: "Refused", response: failure(id, error) }
}

export const invalidInput = (reason: string, pointer: string, method?: string) =>
  PedelecError.fromCode("INVALID_INPUT", "extension", {
    details: { reason, pointer, ...(method === undefined ? {} : { method }) }
  })

/**
 * A bad tool manifest is the same condition whoever notices it: `TOOLS_MANIFEST_INVALID` with the pointer inside the
 * session input (`/skills/…`), as the SDK's own check says it; every other bad param is INVALID_INPUT under `/params`.
 */
const paramsError = (method: string, issue: { readonly pointer: string; readonly reason: string }) => {
  if (method === "session.create" && issue.pointer.startsWith("/input/skills")) {
    const pointer = issue.pointer.slice("/input".length)
    return PedelecError.fromCode("TOOLS_MANIFEST_INVALID", "extension", { details: { pointer, reason: issue.reason } })
  }
  const pointer = `/params${issue.pointer}`
  return invalidInput(`${issue.reason} at ${pointer}`, pointer, method)
}

export const decodePageMessage = (message: unknown): DecodedPageMessage => {
  const tooDeep = jsonDepthExceeded(message, MAX_JSON_DEPTH)
  if (tooDeep !== undefined) {
    return refuse(message, invalidInput(`the message nests deeper than ${MAX_JSON_DEPTH} levels`, tooDeep))
  }
  const envelope = Schema.decodeUnknownExit(PageRequest)(message)
  if (Exit.isFailure(envelope)) {
    const first = issuesOfExit(envelope)[0] ?? { pointer: "", reason: "invalid" }
    const error = PedelecError.fromCode("PROTOCOL_ERROR", "extension", {
      details: { reason: `not a request: ${first.reason} at ${first.pointer || "/"}`, pointer: first.pointer }
    })
    return refuse(message, error)
  }
  const { id, method, params, textRefs } = envelope.value
  const schema = PageMethods[method].params as unknown as Schema.Decoder<unknown>
  const decoded = Schema.decodeUnknownExit(schema)(params, strict)
  if (Exit.isFailure(decoded)) {
    const first = issuesOfExit(decoded)[0] ?? { pointer: "", reason: "invalid" }
    return { _tag: "Refused", response: failure(id, paramsError(method, first)) }
  }
  return { _tag: "Call", id, call: { method, params: decoded.value } as PageCall, textRefs: textRefs === true }
}
