/**
 * Page (SDK) ↔ extension, over `chrome.runtime.connect(extensionId)`. Plain Schemas, no `effect/rpc`: the SDK's
 * size budget cannot carry it. Requests are `{kind:"request", id, method, params}`; every request gets exactly one
 * response; session events are pushed as `{kind:"event"}`. The extension takes the origin from Chrome's `sender`,
 * so no message carries one.
 */
import * as Schema from "effect/Schema"
import { AssetInfo, AssetTicket, DownloadTicketRequest, UploadTicketRequest } from "../Assets.ts"
import { SessionEvent } from "../Events.ts"
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
  hello: method(
    Schema.Struct({ protocolVersion: ProtocolVersion, sdkVersion: Schema.String.check(Schema.isMaxLength(64)) }),
    Schema.Struct({ protocolVersion: ProtocolVersion, extensionVersion: Schema.String })
  ),
  get_approval_status: method(Empty, ApprovalStatus),
  /** Opens the approval popup for an unapproved origin; `claimTools` makes this page the tool handler. */
  create_session: method(Schema.Struct({ input: CreateSessionInput }), SessionInfo),
  resume_session: method(Schema.Struct({ sessionId: SessionId, claimTools: Schema.Boolean }), SessionInfo),
  /** Events after `afterSeq` (replayed, then live) are pushed on this port until it closes. */
  subscribe: method(
    Schema.Struct({ sessionId: SessionId, afterSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)) }),
    Empty
  ),
  list_providers: method(Empty, Schema.Array(ProviderInfo)),
  get_settings: method(Empty, PublicSettings),
  prepare: method(OnSession, Accepted),
  send_text: method(Schema.Struct({ sessionId: SessionId, text: TurnText }), Accepted),
  cancel: method(OnSession, Schema.Struct({ cancelled: Schema.Boolean })),
  end_session: method(OnSession, Empty),
  submit_tool_result: method(
    Schema.Struct({ sessionId: SessionId, toolCallId: ToolCallId, outcome: ToolOutcome }),
    Schema.Struct({ accepted: Schema.Boolean })
  ),
  tool_progress: method(
    Schema.Struct({
      sessionId: SessionId,
      toolCallId: ToolCallId,
      message: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
    }),
    Empty
  ),
  create_upload_ticket: method(UploadTicketRequest, AssetTicket),
  create_download_ticket: method(DownloadTicketRequest, AssetTicket),
  list_assets: method(OnSession, Schema.Array(AssetInfo))
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
  params: Schema.Unknown
})
export type PageRequest = typeof PageRequest.Type

export const PageResponse = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("response"), id: RequestId, ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ kind: Schema.Literal("response"), id: RequestId, ok: Schema.Literal(false), error: PedelecErrorWire })
])
export type PageResponse = typeof PageResponse.Type

export const PageEvent = Schema.Struct({ kind: Schema.Literal("event"), event: SessionEvent })
export type PageEvent = typeof PageEvent.Type

/** A failure that belongs to no request (the native host went away, a replay gap): every session hears it. */
export const PageNotice = Schema.Struct({
  kind: Schema.Literal("notice"),
  sessionId: Schema.optionalKey(SessionId),
  error: PedelecErrorWire
})
export type PageNotice = typeof PageNotice.Type

export const ExtensionToPage = Schema.Union([PageResponse, PageEvent, PageNotice])
export type ExtensionToPage = typeof ExtensionToPage.Type
