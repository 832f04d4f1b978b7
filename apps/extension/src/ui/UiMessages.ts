/**
 * UiMessages — what the extension's own UI pages (approval window, options page) and its service worker say to each
 * other over `chrome.runtime.sendMessage`, named in the links' vocabulary (`origin.revoke`, …). They never leave the
 * extension, so they live here rather than in contracts; both sides still decode them with Schema, since a page of
 * ours may be stale after an update. Page ↔ extension and extension ↔ host messages are contracts' (link/PageLink.ts,
 * link/HostLink.ts).
 */
import { Origin } from "@pedelec/contracts/Ids"
import { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { AbsolutePath, SessionInfo } from "@pedelec/contracts/Session"
import { SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Schema from "effect/Schema"
import { ApprovedManifest } from "../approval/Manifest.ts"

export const ApprovalDecision = Schema.Struct({
  kind: Schema.Literal("approval.decide"),
  ticket: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/)),
  approve: Schema.Boolean
})

/** The confirmation window's answer for the call its ticket names (confirm/Confirmations). */
export const ConfirmDecision = Schema.Struct({
  kind: Schema.Literal("confirm.decide"),
  ticket: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/)),
  decision: Schema.Literals(["once", "session", "deny"])
})

export const OptionsStateRequest = Schema.Struct({ kind: Schema.Literal("options.state") })
export const RevokeOriginRequest = Schema.Struct({ kind: Schema.Literal("origin.revoke"), origin: Origin })
export const RevokePathRequest = Schema.Struct({
  kind: Schema.Literal("path.revoke"),
  origin: Origin,
  path: AbsolutePath
})

/** The options page sets a site's whole policy (Core's copy first, then the extension's). */
export const SetPolicyRequest = Schema.Struct({
  kind: Schema.Literal("origin.set_policy"),
  origin: Origin,
  policy: SitePolicy
})

export const UiRequest = Schema.Union([
  ApprovalDecision,
  ConfirmDecision,
  OptionsStateRequest,
  RevokeOriginRequest,
  RevokePathRequest,
  SetPolicyRequest
])
export type UiRequest = typeof UiRequest.Type

/** Core's sessions as the options page shows them, or why they could not be listed. */
export const SessionsListing = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), sessions: Schema.Array(SessionInfo) }),
  Schema.Struct({ ok: Schema.Literal(false), error: PedelecErrorWire })
])
export type SessionsListing = typeof SessionsListing.Type

export const OptionsState = Schema.Struct({
  origins: Schema.Array(
    Schema.Struct({
      origin: Origin,
      paths: Schema.Array(Schema.String),
      openPorts: Schema.Int,
      manifest: Schema.optionalKey(ApprovedManifest),
      policy: SitePolicy
    })
  ),
  sessions: SessionsListing
})
export type OptionsState = typeof OptionsState.Type

export const RevokeResult = Schema.Struct({
  ended: Schema.NullOr(Schema.Int),
  disconnectedPorts: Schema.Int,
  coreError: Schema.optionalKey(PedelecErrorWire)
})
export type RevokeResult = typeof RevokeResult.Type

/** Every answer to a UI page: a result, or a sentence saying what went wrong. */
export const UiResponse = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ ok: Schema.Literal(false), message: Schema.String })
])
export type UiResponse = typeof UiResponse.Type
