/**
 * Desktop — the vocabulary the desktop app and Core share: the Core status Health shows, a live session as the
 * Sessions screen lists it, a provider with where it was found, its effort knob and a checked profile's preview, an Ollama server's models, a
 * page of logged events and the all-sessions watch. Browser-safe, so the renderer's link (link/DesktopLink.ts) and
 * Core's desktop role (node/DesktopRole.ts) both use these same Schemas; it defines no method of either link.
 */
import * as Schema from "effect/Schema"
import { SessionEvent } from "./Events.ts"
import { ProtocolVersion } from "./Protocol.ts"
import { EffortLevel, EffortProfile, EffortSupport, ModelName, ProviderCode, ProviderInfo } from "./Provider.ts"
import { AbsolutePath, SessionInfo } from "./Session.ts"
import { HttpUrl } from "./Settings.ts"

const Millis = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** Where a history page starts: after this seq (0 for the first event). */
export const AfterSeq = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The running Core as Health/About shows it; uptime is `now - startedAt`, both read from Core's clock. */
export const CoreStatus = Schema.Struct({
  coreVersion: Schema.String.check(Schema.isMaxLength(64)),
  protocolVersion: ProtocolVersion,
  pid: Schema.Int,
  startedAt: Millis,
  now: Millis,
  /** `PEDELEC_HOME` as Core resolved it. */
  home: AbsolutePath,
  socketPath: Schema.String.check(Schema.isBetweenLength(1, 4096)),
  /** Where the per-session event logs are (one `<sessionId>.jsonl` each). */
  logsDir: AbsolutePath,
  liveSessions: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type CoreStatus = typeof CoreStatus.Type

/**
 * A provider as this machine has it: what `listProviders()` shows, plus where it was found: the CLI's executable
 * (the copy sessions start) or the Ollama server's URL; null when nothing was found. Only the desktop role carries
 * it: a page learns nothing of the user's file system, since the host role's `ProviderInfo` encodes without it.
 */
export const LocalProvider = Schema.Struct({
  ...ProviderInfo.fields,
  location: Schema.NullOr(Schema.String.check(Schema.isBetweenLength(1, 4096)))
})
export type LocalProvider = typeof LocalProvider.Type

/** A live session of any origin, with when its last event was published (its creation when it has none yet). */
export const DesktopSession = Schema.Struct({ ...SessionInfo.fields, lastActivityAt: Millis })
export type DesktopSession = typeof DesktopSession.Type

/** One provider's effort knob: the allow-list as the patterns' source text, and what each level runs by default. */
export const EffortDescription = Schema.Struct({
  provider: ProviderCode,
  name: Schema.String.check(Schema.isBetweenLength(1, 64)),
  effort: EffortSupport,
  allowList: Schema.Struct({
    /** Each argv token must match one of these (JavaScript regular expressions, anchored). */
    argv: Schema.Array(Schema.String),
    env: Schema.Array(Schema.String)
  }),
  defaults: Schema.Struct({ low: EffortProfile, medium: EffortProfile, high: EffortProfile })
})
export type EffortDescription = typeof EffortDescription.Type

/** A profile that passed the adapter's allow-list, and the part of the command line it adds. */
export const EffortPreview = Schema.Struct({
  provider: ProviderCode,
  level: EffortLevel,
  profile: EffortProfile,
  /** What this level adds to the CLI's command line, shell-quoted: `--model <m>` then the profile's argv. */
  commandLine: Schema.String,
  /** The profile's env as `NAME=value` lines. */
  env: Schema.Array(Schema.String)
})
export type EffortPreview = typeof EffortPreview.Type

export const OllamaModel = Schema.Struct({
  name: ModelName,
  sizeBytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  modifiedAt: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64)))
})
export type OllamaModel = typeof OllamaModel.Type

/** A reachable Ollama server: its version (`/api/version`) and its models (`/api/tags`). */
export const OllamaStatus = Schema.Struct({
  baseUrl: HttpUrl,
  version: Schema.NullOr(Schema.String.check(Schema.isMaxLength(128))),
  models: Schema.Array(OllamaModel)
})
export type OllamaStatus = typeof OllamaStatus.Type

export const EventPage = Schema.Struct({
  events: Schema.Array(SessionEvent),
  /** More events follow after the last one: ask again with its `seq` as `afterSeq`. */
  more: Schema.Boolean
})
export type EventPage = typeof EventPage.Type

/**
 * What `desktop.events.watch` streams: first the live sessions at the moment the watch began, then each session
 * that goes live (created, or reloaded after a restart) and every event of every live session as it is published.
 * A session's end is its `ended` event.
 */
export const WatchItem = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("sessions"), sessions: Schema.Array(DesktopSession) }),
  Schema.Struct({ kind: Schema.Literal("opened"), session: DesktopSession }),
  Schema.Struct({ kind: Schema.Literal("event"), event: SessionEvent })
])
export type WatchItem = typeof WatchItem.Type
