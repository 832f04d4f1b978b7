/**
 * NativeLink — one `chrome.runtime.connectNative` port to the Pedelec native host, as the worker sees it: requests go
 * out as HostRequest; frames come back checked (depth bound, then Schema), chunk sequences reassembled, a HostTextRef
 * rebuilt from the texts its subscription carried (TextRuns), and each logical message handed on decoded and whole. A message that cannot be read is reported with whatever id it still shows, so
 * its request is answered rather than left hanging. A disconnect from the host side becomes a PedelecError:
 * NATIVE_HOST_UNAVAILABLE when no frame ever came (not installed, forbidden, exited at start), else
 * NATIVE_CONNECTION_CLOSED, with Chrome's own text in `details.browserMessage` (browser-e2e.md §7). Every
 * connectNative starts a host process (P10): callers open one per page port, or one per extension call, and close it
 * with the scope that opened it. Where the messages go is the caller's business.
 */
import { jsonDepthExceeded, MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import {
  type HostEvent,
  type HostRequest,
  type HostResponse,
  type HostSubscriptionEnded,
  type HostTextRef,
  HostToExtension,
  NATIVE_HOST_NAME
} from "@pedelec/contracts/link/HostLink"
import { TextRuns } from "@pedelec/contracts/link/TextRuns"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Chrome, type ChromeApi } from "../browser/Chrome.ts"
import { ChunkAssembler } from "./Chunks.ts"

/** A logical message from the host, whole and decoded. */
export type HostMessage = HostResponse | HostEvent | HostSubscriptionEnded

/** A message that arrived but could not be read; the ids it still shows say whom it was for. */
export interface LostMessage {
  readonly requestId?: string | undefined
  readonly subscription?: string | undefined
  readonly error: PedelecError
}

export interface NativeHandlers {
  readonly onMessage: (message: HostMessage) => void
  readonly onLost: (lost: LostMessage) => void
  /** The host side went away; not called when the link is closed by its scope. */
  readonly onClosed: (error: PedelecError) => void
}

export interface NativeLinkHandle {
  /** False when the port is already gone (its onClosed has been or is about to be called). */
  readonly send: (request: HostRequest) => boolean
}

const decodeHostMessage = Schema.decodeUnknownExit(HostToExtension)
const ID = "[A-Za-z0-9_-]{1,64}"
const RESPONSE_HEAD = new RegExp(`^\\{"kind":"response","id":"(${ID})"`)
const SUBSCRIPTION_HEAD = new RegExp(`^\\{"kind":"(?:event|subscription_ended|text_ref)","subscription":"(${ID})"`)

const protocolError = (reason: string) => PedelecError.fromCode("PROTOCOL_ERROR", "extension", { details: { reason } })

/** Ids of a decoded-but-invalid message, read without Schema. */
const peekObject = (raw: unknown): Pick<LostMessage, "requestId" | "subscription"> => {
  if (typeof raw !== "object" || raw === null) return {}
  const record = raw as Record<string, unknown>
  const text = (value: unknown) => (typeof value === "string" ? value : undefined)
  return record.kind === "response" ? { requestId: text(record.id) } : { subscription: text(record.subscription) }
}

/** Ids of a message known only by the start of its JSON text (the host writes `kind` first, then the id). */
export const peekHead = (head: string): Pick<LostMessage, "requestId" | "subscription"> => ({
  requestId: RESPONSE_HEAD.exec(head)?.[1],
  subscription: SUBSCRIPTION_HEAD.exec(head)?.[1]
})

export const closedError = (sawFrame: boolean, browserMessage: string | undefined): PedelecError =>
  PedelecError.fromCode(sawFrame ? "NATIVE_CONNECTION_CLOSED" : "NATIVE_HOST_UNAVAILABLE", "extension", {
    details: browserMessage === undefined ? {} : { browserMessage }
  })

export class NativeLink extends Context.Service<
  NativeLink,
  {
    /** Connects now (synchronously, so no frame can be missed); the scope's close disconnects. */
    readonly open: (handlers: NativeHandlers) => Effect.Effect<NativeLinkHandle, never, Scope.Scope>
  }
>()("pedelec/extension/NativeLink") {
  static readonly layer = Layer.effect(
    NativeLink,
    Effect.gen(function* () {
      const chrome = yield* Chrome
      return NativeLink.of({
        open: (handlers) =>
          Effect.acquireRelease(
            Effect.sync(() => connect(chrome, handlers)),
            (link) => Effect.sync(link.close)
          ).pipe(Effect.map((link): NativeLinkHandle => ({ send: link.send })))
      })
    })
  )
}

/** What one port keeps between messages: the chunks of the message arriving, and each subscription's texts. */
interface Inbox {
  readonly chunks: ChunkAssembler
  readonly runs: Map<string, TextRuns>
}

/** Texts carried before a loss may be gone: a subscription's (or, not knowing whose, every) runs start again. */
const lost = (handlers: NativeHandlers, inbox: Inbox, message: LostMessage) => {
  if (message.subscription !== undefined) inbox.runs.get(message.subscription)?.reset()
  else if (message.requestId === undefined) for (const runs of inbox.runs.values()) runs.reset()
  handlers.onLost(message)
}

const runsOf = (inbox: Inbox, subscription: string) => {
  const found = inbox.runs.get(subscription)
  if (found !== undefined) return found
  const made = new TextRuns()
  inbox.runs.set(subscription, made)
  return made
}

/** A whole event, recorded for the refs that may follow it; a ref rebuilt into one, or reported lost. */
const onEvent = (handlers: NativeHandlers, inbox: Inbox, message: HostEvent | HostTextRef) => {
  const { subscription } = message
  const event = runsOf(inbox, subscription).receive(message)
  if (event !== undefined) {
    return handlers.onMessage(message.kind === "event" ? message : { kind: "event", subscription, event })
  }
  // Only a ref stands for nothing: texts this link lost.
  const { fromSeq, toSeq } = message as HostTextRef
  const error = protocolError(`the host named texts (seq ${fromSeq} to ${toSeq}) this link lost`)
  return lost(handlers, inbox, { subscription, error })
}

/** Hands on one message from the host, whole: checked, decoded, and (a chunk) fed to the reassembly. */
const deliver = (handlers: NativeHandlers, inbox: Inbox, raw: unknown, chunked: boolean) => {
  const tooDeep = jsonDepthExceeded(raw, MAX_JSON_DEPTH)
  if (tooDeep !== undefined) {
    const error = protocolError(`the host sent a message nested deeper than ${MAX_JSON_DEPTH} levels`)
    return lost(handlers, inbox, { ...peekObject(raw), error })
  }
  const decoded = decodeHostMessage(raw)
  if (Exit.isFailure(decoded)) {
    return lost(handlers, inbox, {
      ...peekObject(raw),
      error: protocolError("the host sent a message of no known shape")
    })
  }
  const message = decoded.value
  if (message.kind === "event" || message.kind === "text_ref") return onEvent(handlers, inbox, message)
  if (message.kind === "subscription_ended") inbox.runs.delete(message.subscription)
  if (message.kind !== "chunk") return handlers.onMessage(message)
  if (chunked) return lost(handlers, inbox, { error: protocolError("the host nested a chunk inside a chunk") })
  for (const result of inbox.chunks.push(message)) {
    if (result._tag === "Failed") {
      const error = result.tooLarge
        ? PedelecError.fromCode("MESSAGE_TOO_LARGE", "extension", {
            details: { bytes: result.bytes, limit: inbox.chunks.limit }
          })
        : protocolError(result.reason)
      lost(handlers, inbox, { ...peekHead(result.head), error })
      continue
    }
    let whole: unknown
    try {
      whole = JSON.parse(result.text)
    } catch {
      lost(handlers, inbox, { ...peekHead(result.text.slice(0, 512)), error: protocolError("chunks were not JSON") })
      continue
    }
    deliver(handlers, inbox, whole, true)
  }
}

const connect = (chrome: ChromeApi, handlers: NativeHandlers) => {
  const port = chrome.connectNative(NATIVE_HOST_NAME)
  const inbox: Inbox = { chunks: new ChunkAssembler(), runs: new Map() }
  let sawFrame = false
  let open = true

  port.onMessage.addListener((raw) => {
    sawFrame = true
    if (open) deliver(handlers, inbox, raw, false)
  })
  port.onDisconnect.addListener(() => {
    // lastError must be read inside this listener; it is gone afterwards.
    const browserMessage = chrome.lastErrorMessage()
    if (!open) return
    open = false
    handlers.onClosed(closedError(sawFrame, browserMessage))
  })

  const send = (request: HostRequest) => {
    if (!open) return false
    try {
      port.postMessage(request)
      return true
    } catch {
      return false
    }
  }
  const close = () => {
    open = false
    port.disconnect()
  }
  return { send, close }
}
