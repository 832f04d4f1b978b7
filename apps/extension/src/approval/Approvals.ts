/**
 * Approvals — asks the user, in an extension popup window the page cannot draw over, whether an origin may use
 * Pedelec, (SPEC §12) whether it may use an explicit workspace path, and whether its sessions' agents may be told a
 * manifest (guidance and tool index) other than the one approved before; one window asks all that is needed.
 * The rules (SPEC §4): one ask at a time (others get APPROVAL_PENDING; the same origin asking again waits on it);
 * Approve / Reject / window closed / 60 s (APPROVAL_REJECTED, APPROVAL_TIMEOUT); a rejection is remembered 10 minutes in `chrome.storage.session`, so a
 * worker restart does not forget it; an ask whose page goes is dropped by interrupting it (its window closes); an
 * Approve that arrives before the button could be enabled is ignored. It records what the user allowed in Grants;
 * which requests need an ask is decided by the page connection. The window is Approvals/ApprovalWindow's, the
 * remembered rejections Approvals/Rejections'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Chrome, type ChromeApi } from "../browser/Chrome.ts"
import {
  type ApprovalAsk,
  closeStaleWindow,
  closeWindow,
  mintTicket,
  openWindow,
  type WindowSlot
} from "./Approvals/ApprovalWindow.ts"
import { readRejections, rejected, rejectionKey, remember } from "./Approvals/Rejections.ts"
import { APPROVAL_TIMEOUT_MS, APPROVE_DELAY_MS, REJECTION_MEMORY_MS } from "./ApprovalTimings.ts"
import { Grants } from "./Grants.ts"

const DELAY_SLACK_MS = 200

type Decision = "approve" | "reject" | "closed"

interface Pending extends WindowSlot {
  readonly origin: Origin
  /** Whether the window asks for the origin itself (a later origin-only ask of that origin waits on it). */
  readonly asksOrigin: boolean
  readonly openedAt: number
  readonly decision: Deferred.Deferred<Decision>
}

interface ApprovalsState {
  readonly chrome: ChromeApi
  readonly grants: Grants["Service"]
  /** The one ask in progress. The worker is single-threaded and `ask` checks and sets it with no yield between. */
  pending: Pending | undefined
}

export class Approvals extends Context.Service<
  Approvals,
  {
    /** Succeeds once the user approved (and the grants are stored); fails with the APPROVAL_* code otherwise. */
    readonly ask: (ask: ApprovalAsk) => Effect.Effect<void, PedelecError>
    /** From the approval page; false when the ticket is not the pending one or Approve came too early. */
    readonly decide: (ticket: string, approve: boolean) => Effect.Effect<boolean>
    /** From `chrome.windows.onRemoved`: closing the window without a decision rejects. */
    readonly windowClosed: (windowId: number) => Effect.Effect<void>
  }
>()("pedelec/extension/Approvals") {
  static readonly layer = Layer.effect(
    Approvals,
    Effect.gen(function* () {
      const state: ApprovalsState = { chrome: yield* Chrome, grants: yield* Grants, pending: undefined }
      yield* closeStaleWindow(state.chrome)
      return Approvals.of({
        ask: (request) => ask(state, request),
        decide: (ticket, approve) => decide(state, ticket, approve),
        windowClosed: (windowId) => windowClosed(state, windowId)
      })
    })
  )
}

/** Also settles the decision (as closed) when the asker went first, so an ask that joined it is not left waiting. */
const release = (state: ApprovalsState, entry: Pending) =>
  Effect.suspend(() => {
    if (state.pending === entry) state.pending = undefined
    const closing = entry.windowId === undefined ? Effect.void : closeWindow(state.chrome, entry.windowId)
    return Effect.andThen(Deferred.succeed(entry.decision, "closed"), closing)
  })

/**
 * The same origin asking again while its window is open (a page that lists providers and reads settings at once)
 * waits on that window's decision instead of APPROVAL_PENDING.
 */
const join = (state: ApprovalsState, entry: Pending, origin: Origin) =>
  Deferred.await(entry.decision).pipe(
    Effect.timeoutOrElse({ duration: APPROVAL_TIMEOUT_MS, orElse: () => Effect.succeed("timeout" as const) }),
    Effect.flatMap((outcome) =>
      outcome === "approve"
        ? // Stored here too (it is idempotent): the joiner may run on before the first asker has stored it.
          state.grants.approve(origin)
        : Effect.fail(
            PedelecError.fromCode(outcome === "timeout" ? "APPROVAL_TIMEOUT" : "APPROVAL_REJECTED", "extension", {
              details: { origin }
            })
          )
    )
  )

/** Opens the window for `entry` and waits for the user: a decision, or "timeout". The window closes either way. */
const awaitDecision = (state: ApprovalsState, entry: Pending, request: ApprovalAsk) =>
  openWindow(state.chrome, entry, request).pipe(
    Effect.andThen(
      Deferred.await(entry.decision).pipe(
        Effect.timeoutOrElse({ duration: APPROVAL_TIMEOUT_MS, orElse: () => Effect.succeed("timeout" as const) })
      )
    ),
    Effect.ensuring(release(state, entry))
  )

const ask = Effect.fn("Approvals.ask")(function* (state: ApprovalsState, request: ApprovalAsk) {
  const { origin } = request
  const now = yield* Clock.currentTimeMillis
  const until = (yield* readRejections(state.chrome))[rejectionKey(request)]
  if (until !== undefined && until > now) return yield* Effect.fail(rejected(origin, until))
  const decision = yield* Deferred.make<Decision>()
  const open = state.pending
  if (open !== undefined) {
    const originOnly = request.askOrigin && request.path === undefined && request.manifest === undefined
    if (open.origin === origin && open.asksOrigin && originOnly) {
      return yield* join(state, open, origin)
    }
    return yield* Effect.fail(PedelecError.fromCode("APPROVAL_PENDING", "extension", { details: { origin } }))
  }
  const asksOrigin = request.askOrigin
  const entry: Pending = { ticket: mintTicket(), origin, asksOrigin, openedAt: now, decision, windowId: undefined }
  state.pending = entry
  const outcome = yield* awaitDecision(state, entry, request)
  if (outcome === "timeout") {
    return yield* Effect.fail(PedelecError.fromCode("APPROVAL_TIMEOUT", "extension", { details: { origin } }))
  }
  if (outcome !== "approve") {
    const rejectedUntil = (yield* Clock.currentTimeMillis) + REJECTION_MEMORY_MS
    yield* remember(state.chrome, rejectionKey(request), rejectedUntil)
    return yield* Effect.fail(rejected(origin, rejectedUntil))
  }
  if (request.askOrigin) yield* state.grants.approve(origin)
  if (request.path !== undefined) yield* state.grants.grantPath(origin, request.path)
  if (request.manifest !== undefined) yield* state.grants.approveManifest(origin, request.manifest.approved)
})

const decide = Effect.fn("Approvals.decide")(function* (state: ApprovalsState, ticket: string, approve: boolean) {
  const entry = state.pending
  if (entry === undefined || entry.ticket !== ticket) return false
  const now = yield* Clock.currentTimeMillis
  if (approve && now - entry.openedAt < APPROVE_DELAY_MS - DELAY_SLACK_MS) return false
  return yield* Deferred.succeed(entry.decision, approve ? "approve" : "reject")
})

const windowClosed = (state: ApprovalsState, windowId: number) =>
  Effect.suspend(() =>
    state.pending !== undefined && state.pending.windowId === windowId
      ? Deferred.succeed(state.pending.decision, "closed").pipe(Effect.asVoid)
      : Effect.void
  )
