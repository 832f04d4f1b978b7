/**
 * Approvals/ApprovalWindow — the popup that asks: what it shows (read by approval.html from its URL, and the manifest,
 * too large for a URL, from `chrome.storage.session` under the ask's ticket; the worker trusts only the ticket coming
 * back), opening it (uninterruptibly, so no window outlives its ask unrecorded), closing it, and closing one a stopped
 * worker left open. Its id is kept in `chrome.storage.session` for that. What the answer means is Approvals'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import type { ChromeApi } from "../../browser/Chrome.ts"
import {
  type ApprovedManifest,
  changeBetween,
  MANIFEST_VIEW_KEY,
  type Manifest,
  type ManifestView
} from "../Manifest.ts"

const WINDOW_KEY = "approvalWindow"

/** What the window shows and what an Approve grants. */
export interface ApprovalAsk {
  readonly origin: Origin
  /** The page call that asked (SPEC §4: these five may); approving grants the origin, whichever it was. */
  readonly method:
    | "session.create"
    | "session.resume"
    | "providers.list"
    | "settings.get"
    | "extension.request_approval"
  /** The origin is not approved yet; false when only `path` needs a grant. */
  readonly askOrigin: boolean
  /** An explicit workspace path that needs its own grant. */
  readonly path?: string | undefined
  readonly provider?: string | undefined
  readonly model?: string | undefined
  readonly sessionId?: string | undefined
  /** What the session's agent will be told (to approve), and what the origin's sessions were approved with before. */
  readonly manifest?: { readonly approved: ApprovedManifest; readonly previous: Manifest | undefined } | undefined
}

/** The ask a window belongs to: its ticket, and the window once it is open. */
export interface WindowSlot {
  readonly ticket: string
  windowId: number | undefined
}

export const mintTicket = (): string => {
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

export const closeWindow = (chrome: ChromeApi, windowId: number) =>
  Effect.promise(() => chrome.closeWindow(windowId).catch(() => undefined)).pipe(
    Effect.andThen(Effect.promise(() => chrome.session.set({ [WINDOW_KEY]: null, [MANIFEST_VIEW_KEY]: null })))
  )

const manifestView = (ticket: string, ask: ApprovalAsk): ManifestView | null => {
  if (ask.manifest === undefined) return null
  const { approved, previous } = ask.manifest
  const change = previous === undefined ? undefined : changeBetween(previous, approved.manifest)
  return { ticket, manifest: approved.manifest, ...(change === undefined ? {} : { change }) }
}

/** A window left open by a worker that stopped mid-ask can no longer be answered: close it. */
export const closeStaleWindow = Effect.fnUntraced(function* (chrome: ChromeApi) {
  const stale = yield* Effect.promise(() => chrome.session.get(WINDOW_KEY))
  if (typeof stale[WINDOW_KEY] === "number") yield* closeWindow(chrome, stale[WINDOW_KEY])
})

/** Uninterruptible: a window that opens after its ask was dropped would never be closed. */
export const openWindow = (chrome: ChromeApi, slot: WindowSlot, ask: ApprovalAsk) =>
  Effect.tryPromise(async () => {
    await chrome.session.set({ [MANIFEST_VIEW_KEY]: manifestView(slot.ticket, ask) })
    return chrome.openPopup(approvalUrl(slot.ticket, ask))
  }).pipe(
    Effect.tap((windowId) =>
      Effect.suspend(() => {
        slot.windowId = windowId
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
