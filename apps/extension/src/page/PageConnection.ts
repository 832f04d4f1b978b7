/**
 * PageConnection — everything one page port does: each message decoded (PageRequests) and answered exactly once;
 * `hello` and `get_approval_status` answered here; the approval gate (SPEC §4, §12: only create/resume ask, every
 * other method from an unapproved origin is APPROVAL_REQUIRED); the rest forwarded to Core on this port's own native
 * link, opened on the first request that needs Core (so an unapproved origin never wakes it) and closed with the
 * page port. Native ids are the connection's own (`n0`, `n1`, …) and mapped back, so a page's ids can never collide
 * with another request or a subscription. Host messages go back to this page only: responses to their request,
 * events of its subscriptions; a native disconnect answers every pending request and tells every subscription
 * (PageNotice) with NATIVE_HOST_UNAVAILABLE / NATIVE_CONNECTION_CLOSED, and the next request reconnects. It also
 * keeps which sessions this port claimed tools for (created here, or resumed with `claimTools`), which its
 * `subscribe` passes on as HostSubscribeParams.claimTools. Port bookkeeping per origin is PagePorts'.
 */
import { type Origin, type RequestId, SessionId } from "@pedelec/contracts/Ids"
import type { HostRequest } from "@pedelec/contracts/link/HostLink"
import type { ApprovalStatus, ExtensionToPage, PageMethod } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { Approvals } from "../approval/Approvals.ts"
import { Grants } from "../approval/Grants.ts"
import { Chrome, type PortLike } from "../browser/Chrome.ts"
import { type HostMessage, type LostMessage, NativeLink, type NativeLinkHandle } from "../host/NativeLink.ts"
import { decodePageMessage, failure, type PageCall } from "./PageRequests.ts"

/** How long `get_approval_status` waits for Core before it says `appConnected: false`. */
export const STATUS_PROBE_TIMEOUT_MS = 3_000
/** How long a revocation waits for Core's `ended` events to reach the page before it disconnects the port. */
const DRAIN_TIMEOUT_MS = 1_000
const DRAIN_POLL_MS = 25

export interface PageConnectionHandle {
  /** Handles one message from the page; answers it exactly once (or drops it when it has no usable id). */
  readonly handle: (message: unknown) => Effect.Effect<void>
  /** Waits (bounded) until every subscription of this port has ended. */
  readonly drain: Effect.Effect<void>
  /** Posts a message to the page; a port that is already gone is ignored. */
  readonly post: (message: ExtensionToPage) => void
}

type Answer = (exit: Exit.Exit<unknown, PedelecError>) => void

const isSessionId = Schema.is(SessionId)
const sessionIdOf = (result: unknown) => {
  const id = typeof result === "object" && result !== null ? (result as { sessionId?: unknown }).sessionId : undefined
  return isSessionId(id) ? id : undefined
}

export class PageConnection extends Context.Service<
  PageConnection,
  {
    /** Serves `port` for `origin` until the scope closes, which also closes its native link. */
    readonly open: (port: PortLike, origin: Origin) => Effect.Effect<PageConnectionHandle, never, Scope.Scope>
  }
>()("pedelec/extension/PageConnection") {
  static readonly layer = Layer.effect(
    PageConnection,
    Effect.gen(function* () {
      const chrome = yield* Chrome
      const grants = yield* Grants
      const approvals = yield* Approvals
      const nativeLink = yield* NativeLink

      const open = Effect.fn("PageConnection.open")(function* (port: PortLike, origin: Origin) {
        const portScope = yield* Effect.scope
        let native: { readonly link: NativeLinkHandle; readonly scope: Scope.Closeable } | undefined
        let nextId = 0
        const inflight = new Map<string, Answer>()
        /** Native subscription id → the session it streams. */
        const subscriptions = new Map<string, SessionId>()
        const claims = new Set<SessionId>()

        const post = (message: ExtensionToPage) => {
          try {
            port.postMessage(message)
          } catch {
            // The page went away; its onDisconnect closes this connection.
          }
        }

        const onMessage = (message: HostMessage) => {
          switch (message.kind) {
            case "response": {
              const answer = inflight.get(message.id)
              inflight.delete(message.id)
              answer?.(message.ok ? Exit.succeed(message.result) : Exit.fail(PedelecError.fromWire(message.error)))
              return
            }
            case "event": {
              const sessionId = subscriptions.get(message.subscription)
              // An event of another session on this subscription would leak it to a page that did not ask for it.
              if (sessionId !== undefined && message.event.sessionId === sessionId) {
                post({ kind: "event", event: message.event })
              }
              return
            }
            case "subscription_ended": {
              const sessionId = subscriptions.get(message.subscription)
              subscriptions.delete(message.subscription)
              // Without an error the subscription ended with its session, whose `ended` event the page already has.
              if (sessionId !== undefined && message.error !== undefined) {
                post({ kind: "notice", sessionId, error: message.error })
              }
            }
          }
        }

        const onLost = (lost: LostMessage) => {
          if (lost.requestId !== undefined && inflight.has(lost.requestId)) {
            const answer = inflight.get(lost.requestId)!
            inflight.delete(lost.requestId)
            return answer(Exit.fail(lost.error))
          }
          const sessionId = lost.subscription === undefined ? undefined : subscriptions.get(lost.subscription)
          // A lost event is a gap the page must hear of (resumeSession() picks the session up from its last seq).
          if (sessionId !== undefined) post({ kind: "notice", sessionId, error: lost.error.toWire() })
        }

        const onClosed = (current: Scope.Closeable) => (error: PedelecError) => {
          if (native?.scope === current) native = undefined
          Effect.runFork(Scope.close(current, Exit.void))
          const answers = [...inflight.values()]
          inflight.clear()
          for (const answer of answers) answer(Exit.fail(error))
          const ended = [...subscriptions.values()]
          subscriptions.clear()
          for (const sessionId of ended) post({ kind: "notice", sessionId, error: error.toWire() })
        }

        const ensureNative = Effect.gen(function* () {
          if (native !== undefined) return native.link
          const scope = yield* Scope.fork(portScope)
          const link = yield* nativeLink
            .open({ onMessage, onLost, onClosed: onClosed(scope) })
            .pipe(Scope.provide(scope))
          native = { link, scope }
          return link
        })

        /** Sends one request to Core and waits for its answer; `subscription` registers the stream first. */
        const forward = (method: PageMethod, params: unknown, subscription?: SessionId) =>
          Effect.gen(function* () {
            const link = yield* ensureNative
            const id = `n${(nextId++).toString(36)}` as RequestId
            const answer = Deferred.makeUnsafe<unknown, PedelecError>()
            inflight.set(id, (exit) => Deferred.doneUnsafe(answer, exit))
            if (subscription !== undefined) subscriptions.set(id, subscription)
            const request: HostRequest = { kind: "request", id, origin, method, params }
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

        const approvalRequired = () => PedelecError.fromCode("APPROVAL_REQUIRED", "extension", { details: { origin } })

        const requireApproved = Effect.flatMap(grants.isApproved(origin), (approved) =>
          approved ? Effect.void : Effect.fail(approvalRequired())
        )

        const approvalStatus = Effect.gen(function* () {
          const approved = yield* grants.isApproved(origin)
          // Never probe for an unapproved origin: the status call must not wake the desktop app for it (SPEC §4).
          const appConnected = approved
            ? yield* forward("get_settings", {}).pipe(
                Effect.as(true),
                Effect.timeoutOrElse({ duration: STATUS_PROBE_TIMEOUT_MS, orElse: () => Effect.succeed(false) }),
                Effect.catch(() => Effect.succeed(false))
              )
            : false
          const status: ApprovalStatus = { installed: true, approved, origin, appConnected }
          return status
        })

        const dispatch = (call: PageCall): Effect.Effect<unknown, PedelecError> => {
          switch (call.method) {
            case "hello":
              if (call.params.protocolVersion !== PROTOCOL_VERSION) {
                return Effect.fail(
                  PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", "extension", {
                    details: { actual: PROTOCOL_VERSION, expected: call.params.protocolVersion }
                  })
                )
              }
              return Effect.succeed({ protocolVersion: PROTOCOL_VERSION, extensionVersion: chrome.extensionVersion })
            case "get_approval_status":
              return approvalStatus
            case "create_session": {
              const { input } = call.params
              return Effect.gen(function* () {
                const approved = yield* grants.isApproved(origin)
                const path = input.workspace?.path
                const pathGranted = path === undefined || (yield* grants.hasPath(origin, path))
                if (!approved || !pathGranted) {
                  yield* approvals.ask({
                    origin,
                    method: "create_session",
                    askOrigin: !approved,
                    path: pathGranted ? undefined : path,
                    provider: input.provider,
                    model: input.model
                  })
                }
                const session = yield* forward("create_session", call.params)
                const sessionId = sessionIdOf(session)
                if (sessionId !== undefined) claims.add(sessionId)
                return session
              })
            }
            case "resume_session":
              return Effect.gen(function* () {
                const { sessionId, claimTools } = call.params
                if (!(yield* grants.isApproved(origin))) {
                  yield* approvals.ask({ origin, method: "resume_session", askOrigin: true, sessionId })
                }
                const session = yield* forward("resume_session", call.params)
                if (claimTools) claims.add(sessionId)
                return session
              })
            case "subscribe": {
              const { sessionId } = call.params
              const params = { ...call.params, claimTools: claims.has(sessionId) }
              return Effect.andThen(requireApproved, forward("subscribe", params, sessionId))
            }
            default:
              return Effect.andThen(requireApproved, forward(call.method, call.params))
          }
        }

        const respond = (id: RequestId, outcome: Effect.Effect<unknown, PedelecError>) =>
          outcome.pipe(
            Effect.matchCause({
              onSuccess: (result) => post({ kind: "response", id, ok: true, result }),
              onFailure: (cause) => {
                // Interrupted only: the page is gone and there is nobody to answer.
                if (Cause.hasInterruptsOnly(cause)) return
                post(failure(id, errorOf(cause)))
              }
            })
          )

        const handle = (message: unknown) => {
          const decoded = decodePageMessage(message)
          switch (decoded._tag) {
            case "Refused":
              return Effect.sync(() => post(decoded.response))
            case "Dropped":
              return Effect.void
            case "Call":
              return respond(decoded.id, dispatch(decoded.call)).pipe(Effect.withSpan(`Page.${decoded.call.method}`))
          }
        }

        const drain = Effect.gen(function* () {
          for (let waited = 0; subscriptions.size > 0 && waited < DRAIN_TIMEOUT_MS; waited += DRAIN_POLL_MS) {
            yield* Effect.sleep(DRAIN_POLL_MS)
          }
        })

        return { handle, drain, post } satisfies PageConnectionHandle
      })

      return PageConnection.of({ open })
    })
  )
}

/** The typed failure of a cause; a defect (a bug here) still answers, as a PROTOCOL_ERROR that says so. */
const errorOf = (cause: Cause.Cause<PedelecError>): PedelecError => {
  const found = Cause.findErrorOption(cause)
  if (found._tag === "Some") return found.value
  return PedelecError.fromCode("PROTOCOL_ERROR", "extension", {
    details: { reason: `the extension failed: ${String(Cause.squash(cause))}` }
  })
}
