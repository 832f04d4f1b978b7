/**
 * PageConnection/Forwarding — one page port's way to Core: its own native link, opened on the first request that needs
 * Core (so an unapproved origin never wakes it) and closed with the page port. Native ids are the connection's own
 * (`n0`, `n1`, …) and mapped back, so a page's ids can never collide with another request or a subscription. Host
 * messages go back to this page only: responses to their request, events of its subscriptions. A native disconnect
 * answers every pending request and tells every subscription (PageNotice) with NATIVE_HOST_UNAVAILABLE /
 * NATIVE_CONNECTION_CLOSED; the next request reconnects. An event `screen` takes (a destructive call waiting on the
 * user's yes: confirm/Confirmations) does not reach the page from here. A subscription whose page reads refs gets a
 * large text the port already carried for its session as a PageTextRef (TextRuns, one per session of the port, fed
 * every event posted, as the SDK feeds its own). Which requests may be forwarded is PageConnection/Methods'.
 */

import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, RequestId, SessionId } from "@pedelec/contracts/Ids"
import type { HostMethod, HostRequest } from "@pedelec/contracts/link/HostLink"
import type { ExtensionToPage } from "@pedelec/contracts/link/PageLink"
import { TextRuns } from "@pedelec/contracts/link/TextRuns"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { HostMessage, LostMessage, NativeLink, NativeLinkHandle } from "../../host/NativeLink.ts"

type Answer = (exit: Exit.Exit<unknown, PedelecError>) => void

/** A native subscription: the session it streams, and whether its page reads PageTextRefs. */
export interface Subscription {
  readonly sessionId: SessionId
  readonly textRefs: boolean
}

export interface Forwarding {
  readonly origin: Origin
  /** The page port's scope; the native link lives in a child of it. */
  readonly portScope: Scope.Scope
  readonly nativeLink: NativeLink["Service"]
  /** Posts to the page; a port that is already gone is ignored. */
  readonly post: (message: ExtensionToPage) => void
  /** True when it takes the event from the page (it delivers it later, or never). */
  readonly screen: (forwarding: Forwarding, event: SessionEvent) => boolean
  native: { readonly link: NativeLinkHandle; readonly scope: Scope.Closeable } | undefined
  nextId: number
  readonly inflight: Map<string, Answer>
  readonly subscriptions: Map<string, Subscription>
  /** What this port posted per session, for the refs it may post next. */
  readonly pageRuns: Map<SessionId, TextRuns>
}

export const makeForwarding = (
  origin: Origin,
  portScope: Scope.Scope,
  nativeLink: NativeLink["Service"],
  post: (message: ExtensionToPage) => void,
  screen: Forwarding["screen"] = () => false
): Forwarding => ({
  origin,
  portScope,
  nativeLink,
  post,
  screen,
  native: undefined,
  nextId: 0,
  inflight: new Map(),
  subscriptions: new Map(),
  pageRuns: new Map()
})

const settle = (forwarding: Forwarding, id: string, exit: Exit.Exit<unknown, PedelecError>) => {
  const answer = forwarding.inflight.get(id)
  forwarding.inflight.delete(id)
  answer?.(exit)
}

const onMessage = (forwarding: Forwarding) => (message: HostMessage) => {
  const { post, subscriptions } = forwarding
  switch (message.kind) {
    case "response":
      return settle(
        forwarding,
        message.id,
        message.ok ? Exit.succeed(message.result) : Exit.fail(PedelecError.fromWire(message.error))
      )
    case "event": {
      const subscription = subscriptions.get(message.subscription)
      // An event of another session on this subscription would leak it to a page that did not ask for it.
      if (subscription?.sessionId !== message.event.sessionId) return
      if (!forwarding.screen(forwarding, message.event)) post(toPage(forwarding, subscription, message.event))
      return
    }
    case "subscription_ended": {
      const sessionId = subscriptions.get(message.subscription)?.sessionId
      subscriptions.delete(message.subscription)
      // Without an error the subscription ended with its session, whose `ended` event the page already has.
      if (sessionId !== undefined && message.error !== undefined) {
        post({ kind: "notice", sessionId, error: message.error })
      }
    }
  }
}

/**
 * `event` as the page gets it: a ref when its subscription reads them and the port posted its text already. Every
 * posted event is recorded, whichever subscription of the session it came by, since the page records each it gets.
 */
const toPage = (forwarding: Forwarding, subscription: Subscription, event: SessionEvent): ExtensionToPage => {
  const { pageRuns } = forwarding
  const runs = pageRuns.get(event.sessionId) ?? new TextRuns()
  pageRuns.set(event.sessionId, runs)
  const crossing = runs.send(event)
  return subscription.textRefs ? crossing : { kind: "event", event }
}

const onLost = (forwarding: Forwarding) => (lost: LostMessage) => {
  if (lost.requestId !== undefined && forwarding.inflight.has(lost.requestId)) {
    return settle(forwarding, lost.requestId, Exit.fail(lost.error))
  }
  const sessionId =
    lost.subscription === undefined ? undefined : forwarding.subscriptions.get(lost.subscription)?.sessionId
  // A lost event is a gap the page must hear of (resumeSession() picks the session up from its last seq).
  if (sessionId !== undefined) forwarding.post({ kind: "notice", sessionId, error: lost.error.toWire() })
}

const onClosed = (forwarding: Forwarding, current: Scope.Closeable) => (error: PedelecError) => {
  if (forwarding.native?.scope === current) forwarding.native = undefined
  Effect.runFork(Scope.close(current, Exit.void))
  const answers = [...forwarding.inflight.values()]
  forwarding.inflight.clear()
  for (const answer of answers) answer(Exit.fail(error))
  const ended = [...forwarding.subscriptions.values()]
  forwarding.subscriptions.clear()
  for (const { sessionId } of ended) forwarding.post({ kind: "notice", sessionId, error: error.toWire() })
}

const ensureNative = Effect.fnUntraced(function* (forwarding: Forwarding) {
  if (forwarding.native !== undefined) return forwarding.native.link
  const scope = yield* Scope.fork(forwarding.portScope)
  const link = yield* forwarding.nativeLink
    .open({ onMessage: onMessage(forwarding), onLost: onLost(forwarding), onClosed: onClosed(forwarding, scope) })
    .pipe(Scope.provide(scope))
  forwarding.native = { link, scope }
  return link
})

/** Sends one request to Core and waits for its answer; `subscription` registers the stream first. */
export const forward = Effect.fnUntraced(function* (
  forwarding: Forwarding,
  method: HostMethod,
  params: unknown,
  subscription?: Subscription
) {
  const { inflight, subscriptions } = forwarding
  const link = yield* ensureNative(forwarding)
  const id = `n${(forwarding.nextId++).toString(36)}` as RequestId
  const answer = Deferred.makeUnsafe<unknown, PedelecError>()
  inflight.set(id, (exit) => Deferred.doneUnsafe(answer, exit))
  if (subscription !== undefined) subscriptions.set(id, subscription)
  // NativeLink rebuilds HostTextRefs, so a large chat text crosses native messaging once, as its deltas.
  const refs = method === "session.subscribe" ? { textRefs: true as const } : {}
  const request: HostRequest = { kind: "request", id, origin: forwarding.origin, method, params, ...refs }
  if (!link.send(request)) {
    inflight.delete(id)
    subscriptions.delete(id)
    return yield* Effect.fail(PedelecError.fromCode("NATIVE_CONNECTION_CLOSED", "extension"))
  }
  return yield* Deferred.await(answer).pipe(
    Effect.tapError(() => Effect.sync(() => subscriptions.delete(id))),
    Effect.onInterrupt(() => Effect.sync(() => inflight.delete(id)))
  )
})
