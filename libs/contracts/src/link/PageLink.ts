/**
 * Page (SDK) ↔ extension, over `chrome.runtime.connect(extensionId)`. Plain Schemas, no `effect/rpc`: the SDK's
 * size budget cannot carry it. Requests are `{kind:"request", id, method, params}`; every request gets exactly one
 * response; session events are pushed as `{kind:"event"}`. The extension takes the origin from Chrome's `sender`,
 * so no message carries one. A method the extension forwards is named by the Core RPC tag it becomes
 * (`session.send_text`, node/CoreLink.ts HostRpcs); the two it answers itself are `extension.*`. How the native host
 * turns each into its Core call is HostLink's; the SDK's public names (`sendText`, …) are the SDK's.
 */
import * as Schema from "effect/Schema"
import { AssetInfo, AssetTicket, DownloadTicketRequest, UploadTicketRequest } from "../Assets.ts"
import { ChatEvent, Claimant, Seq, SessionEvent, TurnCompletedEvent } from "../Events.ts"
import { Origin, RequestId, SessionId, ToolCallId, TurnId } from "../Ids.ts"
import { PedelecErrorWire } from "../PedelecError.ts"
import { ProtocolVersion } from "../Protocol.ts"
import { ProviderInfo } from "../Provider.ts"
import { CreateSessionInput, SessionInfo, TurnText } from "../Session.ts"
import { PublicSettings } from "../Settings.ts"
import { ToolOutcome } from "../Tool.ts"

export const PAGE_PORT_NAME = "pedelec-sdk"

export const ApprovalStatus = Schema.Struct({
  installed: Schema.Boolean,
  approved: Schema.Boolean,
  origin: Schema.NullOr(Origin),
  /** Whether Core answered; never probed for an unapproved origin, so the desktop app is not woken for it. */
  appConnected: Schema.Boolean
})
export type ApprovalStatus = typeof ApprovalStatus.Type

/** Exactly `{}`: `Schema.Struct({})` would accept any non-null value. */
const Empty = Schema.Record(Schema.String, Schema.Never)
const OnSession = Schema.Struct({ sessionId: SessionId })
const Accepted = Schema.Struct({ turnId: TurnId })
const method = <P extends Schema.Top, R extends Schema.Top>(params: P, result: R) => ({ params, result })

/** Every method a page may call, with its params and result. The extension answers errors as `PedelecErrorWire`. */
export const PageMethods = {
  "extension.hello": method(
    Schema.Struct({ protocolVersion: ProtocolVersion, sdkVersion: Schema.String.check(Schema.isMaxLength(64)) }),
    Schema.Struct({ protocolVersion: ProtocolVersion, extensionVersion: Schema.String })
  ),
  "extension.approval_status": method(Empty, ApprovalStatus),
  /**
   * Opens the approval popup for an unapproved origin and answers the status after it (at once when approved). So do
   * `session.create`, `session.resume`, `providers.list` and `settings.get` before their own work (SPEC §4).
   */
  "extension.request_approval": method(Empty, ApprovalStatus),
  /** `claimTools` makes this page the tool handler. */
  "session.create": method(Schema.Struct({ input: CreateSessionInput }), SessionInfo),
  "session.resume": method(Schema.Struct({ sessionId: SessionId, claimTools: Schema.Boolean }), SessionInfo),
  /** Events after `afterSeq` (replayed, then live) are pushed on this port until it closes. */
  "session.subscribe": method(
    Schema.Struct({
      sessionId: SessionId,
      afterSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
      /** The page's claim token, when this port claims the session's tools (its `tool_call`s name it). */
      claimant: Schema.optionalKey(Claimant)
    }),
    Empty
  ),
  "providers.list": method(Empty, Schema.Array(ProviderInfo)),
  "settings.get": method(Empty, PublicSettings),
  "session.prepare": method(OnSession, Accepted),
  "session.send_text": method(Schema.Struct({ sessionId: SessionId, text: TurnText }), Accepted),
  "session.cancel": method(OnSession, Schema.Struct({ cancelled: Schema.Boolean })),
  "session.end": method(OnSession, Empty),
  "tool.submit_result": method(
    Schema.Struct({ sessionId: SessionId, toolCallId: ToolCallId, outcome: ToolOutcome }),
    Schema.Struct({ accepted: Schema.Boolean })
  ),
  "tool.progress": method(
    Schema.Struct({
      sessionId: SessionId,
      toolCallId: ToolCallId,
      message: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
    }),
    Empty
  ),
  /**
   * The handler waits on a person (a modal the page shows): the call's timeout is paused until the page answers or
   * the call is cancelled, up to TOOL_LIMITS.awaitingUserCeilingMs from the offer. From the claiming page only.
   */
  "tool.awaiting_user": method(Schema.Struct({ sessionId: SessionId, toolCallId: ToolCallId }), Empty),
  "asset.upload_ticket": method(UploadTicketRequest, AssetTicket),
  "asset.download_ticket": method(DownloadTicketRequest, AssetTicket),
  "asset.list": method(OnSession, Schema.Array(AssetInfo))
} as const

export type PageMethod = keyof typeof PageMethods
export const PageMethod = Schema.Literals(Object.keys(PageMethods) as Array<PageMethod>)
export type PageParams<M extends PageMethod> = (typeof PageMethods)[M]["params"]["Type"]
export type PageResult<M extends PageMethod> = (typeof PageMethods)[M]["result"]["Type"]

/** The envelope; `params` is decoded with `PageMethods[method].params` once the method is known. */
export const PageRequest = Schema.Struct({
  kind: Schema.Literal("request"),
  id: RequestId,
  method: PageMethod,
  params: Schema.Unknown,
  /** On `session.subscribe`: the page reads PageTextRef. On the envelope, as on HostRequest: an older extension ignores it. */
  textRefs: Schema.optionalKey(Schema.Literal(true))
})
export type PageRequest = typeof PageRequest.Type

export const PageResponse = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("response"), id: RequestId, ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ kind: Schema.Literal("response"), id: RequestId, ok: Schema.Literal(false), error: PedelecErrorWire })
])
export type PageResponse = typeof PageResponse.Type

export const PageEvent = Schema.Struct({ kind: Schema.Literal("event"), event: SessionEvent })
export type PageEvent = typeof PageEvent.Type

/**
 * An event of a `textRefs` subscription sent with its text emptied, because the page already has that text from this
 * port: as HostTextRef names it (TextRuns), by what the port carried for the event's session. The page rebuilds the
 * event before anything sees it, and hears a PageNotice for it when it cannot.
 */
export const PageTextRef = Schema.Struct({
  kind: Schema.Literal("text_ref"),
  event: Schema.Union([ChatEvent, TurnCompletedEvent]),
  fromSeq: Seq,
  toSeq: Seq
})
export type PageTextRef = typeof PageTextRef.Type

/** A failure that belongs to no request (the native host went away, a replay gap): every session hears it. */
export const PageNotice = Schema.Struct({
  kind: Schema.Literal("notice"),
  sessionId: Schema.optionalKey(SessionId),
  error: PedelecErrorWire
})
export type PageNotice = typeof PageNotice.Type

export const ExtensionToPage = Schema.Union([PageResponse, PageEvent, PageNotice, PageTextRef])
export type ExtensionToPage = typeof ExtensionToPage.Type
