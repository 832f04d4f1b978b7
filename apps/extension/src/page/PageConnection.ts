/**
 * PageConnection — everything one page port does: each message decoded (PageRequests) and answered exactly once, by
 * what its method does (PageConnection/Methods.ts: the approval gate, the methods answered here, the claims) or by
 * Core on this port's own native link (PageConnection/Forwarding.ts, closed with the page port). Port bookkeeping
 * per origin is PagePorts'.
 */
import type { Origin, RequestId } from "@pedelec/contracts/Ids"
import type { ExtensionToPage } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Approvals } from "../approval/Approvals.ts"
import { Grants } from "../approval/Grants.ts"
import { Chrome, type PortLike } from "../browser/Chrome.ts"
import { Confirmations } from "../confirm/Confirmations.ts"
import { HostCalls } from "../host/HostCalls.ts"
import { NativeLink } from "../host/NativeLink.ts"
import { makeForwarding } from "./PageConnection/Forwarding.ts"
import { dispatch, type PageMethodsContext } from "./PageConnection/Methods.ts"
import { decodePageMessage, failure } from "./PageRequests.ts"

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

/** What every page connection uses: the worker's services. */
interface Services {
  readonly chrome: Chrome["Service"]
  readonly grants: Grants["Service"]
  readonly approvals: Approvals["Service"]
  readonly nativeLink: NativeLink["Service"]
  readonly confirmations: Confirmations["Service"]
  readonly hostCalls: HostCalls["Service"]
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
      const services: Services = {
        chrome: yield* Chrome,
        grants: yield* Grants,
        approvals: yield* Approvals,
        nativeLink: yield* NativeLink,
        confirmations: yield* Confirmations,
        hostCalls: yield* HostCalls
      }
      return PageConnection.of({
        open: Effect.fn("PageConnection.open")(function* (port: PortLike, origin: Origin) {
          return open(services, port, origin, yield* Effect.scope)
        })
      })
    })
  )
}

const open = (services: Services, port: PortLike, origin: Origin, portScope: Scope.Scope): PageConnectionHandle => {
  const post = (message: ExtensionToPage) => {
    try {
      port.postMessage(message)
    } catch {
      // The page went away; its onDisconnect closes this connection.
    }
  }
  const forwarding = makeForwarding(origin, portScope, services.nativeLink, post, services.confirmations.screen)
  const context: PageMethodsContext = { ...services, forwarding, claims: new Set() }

  const handle = (message: unknown) => {
    const decoded = decodePageMessage(message)
    switch (decoded._tag) {
      case "Refused":
        return Effect.sync(() => post(decoded.response))
      case "Dropped":
        return Effect.void
      case "Call":
        return respond(post, decoded.id, dispatch(context, decoded.call, decoded.textRefs)).pipe(
          Effect.withSpan(`Page.${decoded.call.method}`)
        )
    }
  }

  const drain = Effect.gen(function* () {
    for (let waited = 0; forwarding.subscriptions.size > 0 && waited < DRAIN_TIMEOUT_MS; waited += DRAIN_POLL_MS) {
      yield* Effect.sleep(DRAIN_POLL_MS)
    }
  })

  return { handle, drain, post }
}

const respond = (
  post: (message: ExtensionToPage) => void,
  id: RequestId,
  outcome: Effect.Effect<unknown, PedelecError>
) =>
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

/** The typed failure of a cause; a defect (a bug here) still answers, as a PROTOCOL_ERROR that says so. */
const errorOf = (cause: Cause.Cause<PedelecError>): PedelecError => {
  const found = Cause.findErrorOption(cause)
  if (found._tag === "Some") return found.value
  return PedelecError.fromCode("PROTOCOL_ERROR", "extension", {
    details: { reason: `the extension failed: ${String(Cause.squash(cause))}` }
  })
}
