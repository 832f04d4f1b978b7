/**
 * Native host ↔ Core (host role), as `effect/rpc` groups over Core IPC (NDJSON on a Unix socket or named pipe).
 * The host proves the per-launch secret in `run/core.json` on every request; it then acts for the origin the
 * extension reported, and Core alone decides which sessions that origin owns. Also the unauthenticated hello both
 * roles start with. Node-only: `effect/rpc` never reaches a browser bundle.
 */
import * as Context from "effect/Context"
import { Rpc, RpcGroup, RpcMiddleware } from "effect/rpc"
import * as Schema from "effect/Schema"
import { AssetInfo, AssetTicket, DownloadTicketRequest, UploadTicketRequest } from "../Assets.ts"
import { Claimant, SessionEvent } from "../Events.ts"
import { LaunchSecret, Origin, SessionId, ToolCallId, TurnId } from "../Ids.ts"
import { PageEvent, PageTextRef } from "../link/PageLink.ts"
import { PedelecError } from "../PedelecError.ts"
import { Hello, ProtocolVersion } from "../Protocol.ts"
import { ProviderInfo } from "../Provider.ts"
import { CreateSessionInput, SessionInfo, TurnText } from "../Session.ts"
import { PublicSettings } from "../Settings.ts"
import { SitePolicy } from "../SitePolicy.ts"
import { ToolOutcome } from "../Tool.ts"

export { AUTH_HEADERS } from "../Wire.ts"

/**
 * `run/core.json` (0600): how a local client finds a running Core and proves the host role. Written atomically by
 * Core at start and removed at stop; a file whose `pid` is dead is stale.
 */
export const CoreRuntimeInfo = Schema.Struct({
  protocolVersion: ProtocolVersion,
  coreVersion: Schema.String.check(Schema.isMaxLength(64)),
  pid: Schema.Int,
  /** A Unix socket path, or a Windows named pipe such as `\\.\pipe\pedelec-…`. */
  socketPath: Schema.String.check(Schema.isBetweenLength(1, 4096)),
  launchSecret: LaunchSecret,
  startedAt: Schema.Int
})
export type CoreRuntimeInfo = typeof CoreRuntimeInfo.Type

export const Welcome = Schema.Struct({
  protocolVersion: ProtocolVersion,
  coreVersion: Schema.String.check(Schema.isMaxLength(64)),
  pid: Schema.Int
})
export type Welcome = typeof Welcome.Type

/** Answered before any proof, so a peer of another release learns `PROTOCOL_VERSION_MISMATCH`, not `UNAUTHORIZED`. */
export class HelloRpcs extends RpcGroup.make(
  Rpc.make("core.hello", { payload: Hello, success: Welcome, error: PedelecError })
) {}

/** Provided to host-role handlers once the launch secret checked out. */
export class HostCaller extends Context.Service<HostCaller, { readonly pid: number | undefined }>()(
  "pedelec/contracts/HostCaller"
) {}

export class HostAuth extends RpcMiddleware.Service<HostAuth, { provides: HostCaller }>()(
  "pedelec/contracts/HostAuth",
  {
    error: PedelecError,
    requiredForClient: true
  }
) {}

const ForOrigin = { origin: Origin }
const OnSession = { origin: Origin, sessionId: SessionId }
const Accepted = Schema.Struct({ turnId: TurnId })
const Subscribe = {
  ...OnSession,
  afterSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  claimTools: Schema.Boolean,
  claimant: Schema.optionalKey(Claimant)
}

export class HostRpcs extends RpcGroup.make(
  Rpc.make("session.create", {
    payload: { ...ForOrigin, input: CreateSessionInput },
    success: SessionInfo,
    error: PedelecError
  }),
  Rpc.make("session.resume", { payload: OnSession, success: SessionInfo, error: PedelecError }),
  /**
   * Events after `afterSeq`: replayed from the buffer, then the log, then live. While the stream is open the
   * subscriber holds the session's lease; `claimTools` moves the claim on the tools to this subscriber (its
   * connection alone may answer calls, named in `tool_call` by `claimant`) for as long as the stream is open.
   */
  Rpc.make("session.subscribe", { payload: Subscribe, success: SessionEvent, error: PedelecError, stream: true }),
  /**
   * `session.subscribe` for a subscriber that reads refs (the native host, for an extension that asked): each event
   * as TextRuns sends it, so a large chat or completion whose text this stream already carried crosses as a ref to
   * the seqs that carried it: Core IPC carries a large text once, as its deltas, not again in its chat and completion.
   * Its own tag, so that every other subscriber's stream stays plain SessionEvents.
   */
  Rpc.make("session.subscribe_refs", {
    payload: Subscribe,
    success: Schema.Union([PageEvent, PageTextRef]),
    error: PedelecError,
    stream: true
  }),
  Rpc.make("session.prepare", { payload: OnSession, success: Accepted, error: PedelecError }),
  Rpc.make("session.send_text", { payload: { ...OnSession, text: TurnText }, success: Accepted, error: PedelecError }),
  Rpc.make("session.cancel", {
    payload: OnSession,
    success: Schema.Struct({ cancelled: Schema.Boolean }),
    error: PedelecError
  }),
  Rpc.make("session.end", { payload: OnSession, error: PedelecError }),
  /** Live sessions, all or one origin's (the options page). */
  Rpc.make("session.list", {
    payload: { origin: Schema.optionalKey(Origin) },
    success: Schema.Array(SessionInfo),
    error: PedelecError
  }),
  /** The user revoked an origin in the extension: its sessions end at once. */
  Rpc.make("origin.revoke", {
    payload: ForOrigin,
    success: Schema.Struct({ ended: Schema.Int }),
    error: PedelecError
  }),
  /**
   * Idempotent by `toolCallId`: a repeat or a late answer is `accepted: false`. Only the connection whose
   * subscription holds the tools' claim may answer: any other is `TOOL_NOT_CLAIMED`.
   */
  Rpc.make("tool.submit_result", {
    payload: { ...OnSession, toolCallId: ToolCallId, outcome: ToolOutcome },
    success: Schema.Struct({ accepted: Schema.Boolean }),
    error: PedelecError
  }),
  Rpc.make("tool.progress", {
    payload: {
      ...OnSession,
      toolCallId: ToolCallId,
      message: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
    },
    error: PedelecError
  }),
  /** The handler waits on a person: the call's timeout pauses (up to a ceiling). From the claim's connection only. */
  Rpc.make("tool.awaiting_user", { payload: { ...OnSession, toolCallId: ToolCallId }, error: PedelecError }),
  /** A site's policy (the default when none was set): the extension's options page, never a page. */
  Rpc.make("origin.get_policy", { payload: ForOrigin, success: SitePolicy, error: PedelecError }),
  /** The user set a site's policy in the options page; it holds from the next `session.create` on. */
  Rpc.make("origin.set_policy", {
    payload: { ...ForOrigin, policy: SitePolicy },
    success: SitePolicy,
    error: PedelecError
  }),
  Rpc.make("providers.list", {
    payload: { rescan: Schema.Boolean },
    success: Schema.Array(ProviderInfo),
    error: PedelecError
  }),
  /** Read-only for the host role: changing settings is the user's act (DesktopRole), never a site's. */
  Rpc.make("settings.get", { success: PublicSettings, error: PedelecError }),
  /**
   * A single-use ticket to PUT one file of the origin's session to Core's loopback asset server (SPEC §8). The body
   * must be exactly `bytes` long; a path through a symlink or onto a folder is ASSET_PATH_INVALID.
   */
  Rpc.make("asset.upload_ticket", {
    payload: { origin: Origin, ...UploadTicketRequest.fields },
    success: AssetTicket,
    error: PedelecError
  }),
  /** A single-use ticket to GET one existing regular file of the origin's session (else ASSET_NOT_FOUND). */
  Rpc.make("asset.download_ticket", {
    payload: { origin: Origin, ...DownloadTicketRequest.fields },
    success: AssetTicket,
    error: PedelecError
  }),
  /** The regular files under the session's `.pedelec-runtime/assets/`, recursively, in path order; links skipped. */
  Rpc.make("asset.list", { payload: OnSession, success: Schema.Array(AssetInfo), error: PedelecError })
).middleware(HostAuth) {}

/** What a host-role client speaks: the hello, then the host group (the native host, pedelec-cli's host commands). */
export const HostClientRpcs = HelloRpcs.merge(HostRpcs)
