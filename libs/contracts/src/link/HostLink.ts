/**
 * Extension ↔ native host, over Chrome native messaging (4-byte native-endian length + UTF-8 JSON). The extension
 * forwards a page's request with the origin it read from Chrome's `sender`. Every method here is the Core RPC of the
 * same tag (node/CoreLink.ts HostRpcs), and `CORE_PAYLOADS` says, method by method, how the host builds that RPC's
 * payload, so the host relays by lookup and renames nothing. Host → browser frames are at most 1 MiB, so a larger
 * logical message is split into chunk frames the extension reassembles (16 MiB cap per message).
 */
import * as Schema from "effect/Schema"
import { SessionEvent } from "../Events.ts"
import { Origin, RequestId, SessionId } from "../Ids.ts"
import { PedelecErrorWire } from "../PedelecError.ts"
import { SessionInfo } from "../Session.ts"
import { SitePolicy } from "../SitePolicy.ts"
import { PageMethods, PageResponse, PageTextRef } from "./PageLink.ts"

export const NATIVE_HOST_NAME = "com.pedelec.host"

export { HOST_LIMITS } from "./HostLimits.ts"

/**
 * Methods only the extension itself calls (options page, revocation, site policies), beside the forwarded page
 * methods. A page cannot name them: the extension decodes a page's requests against PageMethods alone.
 */
export const ExtensionMethods = {
  "session.list": {
    params: Schema.Struct({ origin: Schema.optionalKey(Origin) }),
    result: Schema.Array(SessionInfo)
  },
  "origin.revoke": { params: Schema.Struct({ origin: Origin }), result: Schema.Struct({ ended: Schema.Int }) },
  /** The user's policy for a site (the options page); the default when none was set. */
  "origin.get_policy": { params: Schema.Struct({ origin: Origin }), result: SitePolicy },
  /** The options page writes a site's whole policy; Core enforces it from the next `session.create` on. */
  "origin.set_policy": { params: Schema.Struct({ origin: Origin, policy: SitePolicy }), result: SitePolicy }
} as const
export type ExtensionMethod = keyof typeof ExtensionMethods
export const ExtensionMethod = Schema.Literals(Object.keys(ExtensionMethods) as Array<ExtensionMethod>)

/**
 * `session.subscribe` params on this link: the page's, plus `claimTools`, which only the extension knows (whether
 * this tab handles the session's tool calls). The other page methods keep their page-link params here.
 */
export const HostSubscribeParams = Schema.Struct({
  ...PageMethods["session.subscribe"].params.fields,
  claimTools: Schema.Boolean
})
export type HostSubscribeParams = typeof HostSubscribeParams.Type

/**
 * Every method of this link, with its params and result. The page methods the extension answers itself are here
 * too, so that the host can say so (PROTOCOL_ERROR) instead of calling them unknown.
 */
export const HostMethods = {
  ...PageMethods,
  "session.subscribe": { params: HostSubscribeParams, result: PageMethods["session.subscribe"].result },
  ...ExtensionMethods
} as const
export type HostMethod = keyof typeof HostMethods
export type HostParams<M extends HostMethod> = (typeof HostMethods)[M]["params"]["Type"]

/** Answered by the extension itself: the host refuses them without waking Core. */
export const EXTENSION_ANSWERS = ["extension.hello", "extension.approval_status", "extension.request_approval"] as const

export const HostRequest = Schema.Struct({
  kind: Schema.Literal("request"),
  id: RequestId,
  /** The page's origin, from Chrome's `sender`; absent only for extension methods. */
  origin: Schema.optionalKey(Origin),
  method: Schema.Literals(Object.keys(HostMethods) as Array<HostMethod>),
  params: Schema.Unknown,
  /**
   * On `session.subscribe`: the extension reads HostTextRef, so a large text it already has need not cross again. On
   * the envelope, not in the params, because a host that predates it ignores unknown envelope keys (not param keys).
   */
  textRefs: Schema.optionalKey(Schema.Literal(true))
})
export type HostRequest = typeof HostRequest.Type

/** The page's origin for a page method; none for an extension method, whose params name the origin it is about. */
export type OriginOf<M extends HostMethod> = M extends ExtensionMethod ? undefined : Origin

/**
 * How the host builds the payload of each method's Core RPC, where it is not `{ origin, ...params }`. A Core RPC that
 * answers nothing (`session.end`, `tool.progress`) is answered `{}`, the page link's empty result.
 * `session.subscribe` is relayed as a stream, and `EXTENSION_ANSWERS` not at all.
 */
export const CORE_PAYLOADS = {
  /** `claimTools` belongs to the subscription the extension opens next, not to the access check. */
  "session.resume": (origin: Origin, { sessionId }: HostParams<"session.resume">) => ({ origin, sessionId }),
  /** A page lists what Core found; a rescan is the user's (`pedelec-cli providers --rescan`). */
  "providers.list": () => ({ rescan: false }),
  "settings.get": () => undefined,
  "session.list": (_: undefined, params: HostParams<"session.list">) => params,
  "origin.revoke": (_: undefined, params: HostParams<"origin.revoke">) => params,
  "origin.get_policy": (_: undefined, params: HostParams<"origin.get_policy">) => params,
  "origin.set_policy": (_: undefined, params: HostParams<"origin.set_policy">) => params
} as const

/** The methods relayed as one Core call each. */
export type CoreCallMethod = Exclude<HostMethod, "session.subscribe" | (typeof EXTENSION_ANSWERS)[number]>

/** The payload of `M`'s Core RPC, as `corePayload` builds it. */
export type CorePayload<M extends CoreCallMethod> = M extends keyof typeof CORE_PAYLOADS
  ? ReturnType<(typeof CORE_PAYLOADS)[M]>
  : { readonly origin: Origin } & HostParams<M>

export const corePayload = <M extends CoreCallMethod>(
  method: M,
  origin: OriginOf<M>,
  params: HostParams<M>
): CorePayload<M> => {
  const build = (CORE_PAYLOADS as Record<string, (origin: Origin | undefined, params: unknown) => unknown>)[method]
  return (build === undefined ? { origin, ...params } : build(origin, params)) as CorePayload<M>
}

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

/**
 * An event of a `textRefs` subscription sent with its text emptied, because the extension already has that text: a
 * `chat`'s is its turn's chat_delta texts from `fromSeq` to `toSeq` (the deltas since the turn's previous chat), a
 * `turn_completed`'s that of the `chat` at `fromSeq` (= `toSeq`). The host sends a text whole whenever it differs;
 * the extension rebuilds the event before anything else sees it, and reports it lost when it cannot.
 */
export const HostTextRef = Schema.Struct({ ...PageTextRef.fields, subscription: RequestId })
export type HostTextRef = typeof HostTextRef.Type

export const HostToExtension = Schema.Union([HostResponse, HostEvent, HostSubscriptionEnded, ChunkFrame, HostTextRef])
export type HostToExtension = typeof HostToExtension.Type
