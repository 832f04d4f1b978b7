/**
 * Approvals — asks the user, in an extension popup window the page cannot draw over, whether an origin may use
 * Pedelec and (SPEC §12) whether it may use an explicit workspace path; one window asks both when both are needed.
 * The rules (SPEC §4): one ask at a time (others get APPROVAL_PENDING); Approve / Reject / window closed / 60 s
 * (APPROVAL_REJECTED, APPROVAL_TIMEOUT); a rejection is remembered 10 minutes in `chrome.storage.session`, so a
 * worker restart does not forget it; an ask whose page goes is dropped by interrupting it (its window closes); an
 * Approve that arrives before the button could be enabled is ignored. It records what the user allowed in Grants;
 * which requests need an ask is decided by the page connection.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Chrome } from "../browser/Chrome.ts"
import { APPROVAL_TIMEOUT_MS, APPROVE_DELAY_MS, REJECTION_MEMORY_MS } from "./ApprovalTimings.ts"
import { Grants } from "./Grants.ts"

const DELAY_SLACK_MS = 200

const REJECTIONS_KEY = "rejections"
const WINDOW_KEY = "approvalWindow"

/** What the window shows and what an Approve grants. */
export interface ApprovalAsk {
  readonly origin: Origin
  readonly method: "session.create" | "session.resume"
  /** The origin is not approved yet; false when only `path` needs a grant. */
  readonly askOrigin: boolean
  /** An explicit workspace path that needs its own grant. */
  readonly path?: string | undefined
  readonly provider?: string | undefined
  readonly model?: string | undefined
  readonly sessionId?: string | undefined
}

type Decision = "approve" | "reject" | "closed"

interface Pending {
  readonly ticket: string
  readonly origin: Origin
  readonly openedAt: number
  readonly decision: Deferred.Deferred<Decision>
  windowId: number | undefined
}

const Rejections = Schema.Record(Schema.String, Schema.Number)

/** A rejected origin is refused outright; a rejected path only for that origin and path. */
const rejectionKey = (ask: ApprovalAsk): string => (ask.askOrigin ? ask.origin : `${ask.origin} ${ask.path ?? ""}`)

const mintTicket = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "")
}

/** The approval page reads everything it shows from its URL; the worker trusts only the ticket coming back. */
export const approvalUrl = (ticket: string, ask: ApprovalAsk): string => {
  const query = new URLSearchParams({
    ticket,
    origin: ask.origin,
    method: ask.method,
    askOrigin: String(ask.askOrigin)
  })
  if (ask.path !== undefined) query.set("path", ask.path)
  if (ask.provider !== undefined) query.set("provider", ask.provider)
  if (ask.model !== undefined) query.set("model", ask.model)
  if (ask.sessionId !== undefined) query.set("sessionId", ask.sessionId)
  return `approval.html?${query.toString()}`
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
      const chrome = yield* Chrome
      const grants = yield* Grants
      // The worker is single-threaded and the check-and-set below has no yield between, so a plain slot suffices.
      let pending: Pending | undefined

      const readRejections = Effect.promise(() => chrome.session.get(REJECTIONS_KEY)).pipe(
        Effect.map((stored) => Schema.decodeUnknownOption(Rejections)(stored[REJECTIONS_KEY])),
        Effect.map((decoded) => (decoded._tag === "Some" ? decoded.value : {}))
      )

      const remember = (key: string, until: number) =>
        Effect.flatMap(readRejections, (rejections) => {
          const now = until - REJECTION_MEMORY_MS
          const kept = Object.fromEntries(Object.entries(rejections).filter(([, at]) => at > now))
          return Effect.promise(() => chrome.session.set({ [REJECTIONS_KEY]: { ...kept, [key]: until } }))
        })

      const closeWindow = (windowId: number) =>
        Effect.promise(() => chrome.closeWindow(windowId).catch(() => undefined)).pipe(
          Effect.andThen(Effect.promise(() => chrome.session.set({ [WINDOW_KEY]: null })))
        )

      // A window left open by a worker that stopped mid-ask can no longer be answered: close it.
      const stale = yield* Effect.promise(() => chrome.session.get(WINDOW_KEY))
      if (typeof stale[WINDOW_KEY] === "number") yield* closeWindow(stale[WINDOW_KEY])

      const rejected = (origin: Origin, until: number) =>
        PedelecError.fromCode("APPROVAL_REJECTED", "extension", { details: { origin, retryAfter: until } })

      // Uninterruptible: a window that opens after its ask was dropped would never be closed.
      const openWindow = (entry: Pending, ask: ApprovalAsk) =>
        Effect.tryPromise(() => chrome.openPopup(approvalUrl(entry.ticket, ask))).pipe(
          Effect.tap((windowId) =>
            Effect.suspend(() => {
              entry.windowId = windowId
              return windowId === undefined
                ? Effect.void
                : Effect.promise(() => chrome.session.set({ [WINDOW_KEY]: windowId }))
            })
          ),
          Effect.mapError((cause) =>
            PedelecError.fromCode("APPROVAL_REJECTED", "extension", {
              message: `The approval window could not be opened (${String(cause.cause)}). Retry the call.`,
              details: { origin: ask.origin }
            })
          ),
          Effect.uninterruptible
        )

      const release = (entry: Pending) =>
        Effect.suspend(() => {
          if (pending === entry) pending = undefined
          return entry.windowId === undefined ? Effect.void : closeWindow(entry.windowId)
        })

      const ask = Effect.fn("Approvals.ask")(function* (ask: ApprovalAsk) {
        const now = yield* Clock.currentTimeMillis
        const until = (yield* readRejections)[rejectionKey(ask)]
        if (until !== undefined && until > now) return yield* Effect.fail(rejected(ask.origin, until))
        const decision = yield* Deferred.make<Decision>()
        if (pending !== undefined) {
          return yield* Effect.fail(
            PedelecError.fromCode("APPROVAL_PENDING", "extension", { details: { origin: ask.origin } })
          )
        }
        const entry: Pending = {
          ticket: mintTicket(),
          origin: ask.origin,
          openedAt: now,
          decision,
          windowId: undefined
        }
        pending = entry
        const outcome = yield* openWindow(entry, ask).pipe(
          Effect.andThen(
            Deferred.await(decision).pipe(
              Effect.timeoutOrElse({ duration: APPROVAL_TIMEOUT_MS, orElse: () => Effect.succeed("timeout" as const) })
            )
          ),
          Effect.ensuring(release(entry))
        )
        if (outcome === "timeout") {
          return yield* Effect.fail(
            PedelecError.fromCode("APPROVAL_TIMEOUT", "extension", { details: { origin: ask.origin } })
          )
        }
        if (outcome !== "approve") {
          const rejectedUntil = (yield* Clock.currentTimeMillis) + REJECTION_MEMORY_MS
          yield* remember(rejectionKey(ask), rejectedUntil)
          return yield* Effect.fail(rejected(ask.origin, rejectedUntil))
        }
        if (ask.askOrigin) yield* grants.approve(ask.origin)
        if (ask.path !== undefined) yield* grants.grantPath(ask.origin, ask.path)
      })

      const decide = Effect.fn("Approvals.decide")(function* (ticket: string, approve: boolean) {
        const entry = pending
        if (entry === undefined || entry.ticket !== ticket) return false
        const now = yield* Clock.currentTimeMillis
        if (approve && now - entry.openedAt < APPROVE_DELAY_MS - DELAY_SLACK_MS) return false
        return yield* Deferred.succeed(entry.decision, approve ? "approve" : "reject")
      })

      const windowClosed = (windowId: number) =>
        Effect.suspend(() =>
          pending !== undefined && pending.windowId === windowId
            ? Deferred.succeed(pending.decision, "closed").pipe(Effect.asVoid)
            : Effect.void
        )

      return Approvals.of({ ask, decide, windowClosed })
    })
  )
}
