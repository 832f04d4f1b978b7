/**
 * Extension ↔ native host, over Chrome native messaging (4-byte native-endian length + UTF-8 JSON). The extension
 * forwards a page's request with the origin it read from Chrome's `sender`. Host → browser frames are at most
 * 1 MiB, so a larger logical message is split into chunk frames the extension reassembles (16 MiB cap per message).
 */
import * as Schema from "effect/Schema"
import { SessionEvent } from "../Events.ts"
import { Origin, RequestId, SessionId } from "../Ids.ts"
import { PedelecErrorWire } from "../PedelecError.ts"
import { SessionInfo } from "../Session.ts"
import { PageMethod, PageMethods, PageResponse } from "./PageLink.ts"

export const NATIVE_HOST_NAME = "com.pedelec.host"

export const HOST_LIMITS = {
  /** Chrome refuses host → browser frames above 1 MiB. */
  maxFrameToBrowser: 1024 * 1024,
  /** Chrome's own ceiling for browser → host. */
  maxFrameToHost: 64 * 1024 * 1024,
  /** Reassembled message cap; above it the message is answered `MESSAGE_TOO_LARGE` and the port stays up. */
  maxLogicalMessage: 16 * 1024 * 1024
} as const

/** Methods only the extension itself calls (options page, revocation), beside the forwarded page methods. */
export const ExtensionMethod = Schema.Literals(["list_sessions", "revoke_origin"])
export type ExtensionMethod = typeof ExtensionMethod.Type

export const ExtensionMethods = {
  list_sessions: {
    params: Schema.Struct({ origin: Schema.optionalKey(Origin) }),
    result: Schema.Array(SessionInfo)
  },
  revoke_origin: { params: Schema.Struct({ origin: Origin }), result: Schema.Struct({ ended: Schema.Int }) }
} as const

export const HostRequest = Schema.Struct({
  kind: Schema.Literal("request"),
  id: RequestId,
  /** The page's origin, from Chrome's `sender`; absent only for extension methods. */
  origin: Schema.optionalKey(Origin),
  method: Schema.Union([PageMethod, ExtensionMethod]),
  params: Schema.Unknown
})
export type HostRequest = typeof HostRequest.Type

/**
 * `subscribe` params on this link: the page's, plus `claimTools`, which only the extension knows (whether this tab
 * handles the session's tool calls). The other page methods keep their page-link params here.
 */
export const HostSubscribeParams = Schema.Struct({
  ...PageMethods.subscribe.params.fields,
  claimTools: Schema.Boolean
})
export type HostSubscribeParams = typeof HostSubscribeParams.Type

/** Responses have the page link's shape: the extension passes them on after checking them. */
export const HostResponse = PageResponse
export type HostResponse = PageResponse

/** Events of the sessions the extension subscribed to, tagged with the subscription that asked for them. */
export const HostEvent = Schema.Struct({ kind: Schema.Literal("event"), subscription: RequestId, event: SessionEvent })
export type HostEvent = typeof HostEvent.Type

/** A subscription ended by Core (replay gap, session ended, Core stopping). */
export const HostSubscriptionEnded = Schema.Struct({
  kind: Schema.Literal("subscription_ended"),
  subscription: RequestId,
  sessionId: SessionId,
  error: Schema.optionalKey(PedelecErrorWire)
})
export type HostSubscriptionEnded = typeof HostSubscriptionEnded.Type

/** One piece of a logical host → browser message: `data` slices its JSON text, `index` counts from 0. */
export const ChunkFrame = Schema.Struct({
  kind: Schema.Literal("chunk"),
  messageId: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/)),
  index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 64 })),
  data: Schema.String
})
export type ChunkFrame = typeof ChunkFrame.Type

export const HostToExtension = Schema.Union([HostResponse, HostEvent, HostSubscriptionEnded, ChunkFrame])
export type HostToExtension = typeof HostToExtension.Type
