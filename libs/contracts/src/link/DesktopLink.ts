/**
 * Desktop renderer ↔ Electron main (the bridge), over Electron IPC or, for the tests and `npm run desktop:preview`,
 * a token-guarded loopback transport. Plain Schemas, no `effect/rpc`: this module is in the renderer's bundle.
 * A request is `{method, params}`; a call is answered `{ok:true, result}` or `{ok:false, error}`, a stream pushes
 * `{kind:"item", item}` until it ends with one `{kind:"end"}` or `{kind:"error", error}`. Each `desktop.*` method is
 * the Core RPC of the same tag (node/DesktopRole.ts), its params that RPC's payload, so the bridge forwards by
 * lookup; `app.*` methods main answers itself (its own version, the native host's registration, the self-test's hops
 * it can run without a browser). Main decodes every request (anything else is INVALID_INPUT and
 * changes nothing); the renderer decodes every result. The schemas of what the desktop role answers are defined
 * here, browser-safe; a test keeps them equal to DesktopRole's.
 */
import * as Schema from "effect/Schema"
import {
  AfterSeq,
  CoreStatus,
  DesktopSession,
  EffortDescription,
  EffortPreview,
  EventPage,
  LocalProvider,
  OllamaStatus,
  WatchItem
} from "../Desktop.ts"
import { Origin, SessionId } from "../Ids.ts"
import { PedelecErrorWire } from "../PedelecError.ts"
import { EffortLevel, EffortProfile, ProviderCode } from "../Provider.ts"
import { HttpUrl, PublicSettings, SecretName, Settings } from "../Settings.ts"
import { SitePolicies, SitePolicy } from "../SitePolicy.ts"

/** Where Electron's preload puts the bridge (`contextBridge.exposeInMainWorld`), shaped as `DesktopPreloadApi`. */
export const PRELOAD_GLOBAL = "pedelecDesktop"

/** The preload's surface: both take an encoded `DesktopRequest`; the renderer decodes whatever comes back. */
export interface DesktopPreloadApi {
  /** Resolves with an encoded `DesktopResponse`; never rejects for a refused call. */
  readonly call: (request: unknown) => Promise<unknown>
  /** Calls `onItem` with each encoded `DesktopStreamItem`; the returned function stops the stream. */
  readonly watch: (request: unknown, onItem: (item: unknown) => void) => () => void
}

/** Exactly `{}`: `Schema.Struct({})` would accept any non-null value. */
const Empty = Schema.Record(Schema.String, Schema.Never)
const SecretValue = Schema.String.check(Schema.isBetweenLength(1, 4096))

/** What main says about itself (Health/About): the app's release and how this renderer reaches it. */
export const AppInfo = Schema.Struct({
  appVersion: Schema.String.check(Schema.isMaxLength(64)),
  transport: Schema.Literals(["electron", "loopback"]),
  platform: Schema.String.check(Schema.isMaxLength(32))
})
export type AppInfo = typeof AppInfo.Type

/** The browsers whose native host registration Health shows (host-registration's BROWSERS, kept equal by the bridge). */
export const NativeHostBrowser = Schema.Literals(["chrome", "chromium", "edge", "brave"])
export type NativeHostBrowser = typeof NativeHostBrowser.Type

const FilePath = Schema.String.check(Schema.isBetweenLength(1, 4096))

/**
 * One detected browser's registration of `com.pedelec.host`: `registered` (the manifest and the launcher are what
 * this app would write now), `missing` (no manifest) or `stale` (a manifest or launcher from elsewhere: another
 * install, a moved app), with why.
 */
export const NativeHostRegistration = Schema.Struct({
  browser: NativeHostBrowser,
  state: Schema.Literals(["registered", "missing", "stale"]),
  manifestFile: FilePath,
  reason: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
})
export type NativeHostRegistration = typeof NativeHostRegistration.Type

/** The native host as this app registers it; `supported` is false on an OS browsers give no user-level host. */
export const NativeHostStatus = Schema.Struct({
  supported: Schema.Boolean,
  launcherFile: Schema.NullOr(FilePath),
  hostEntry: FilePath,
  browsers: Schema.Array(NativeHostRegistration)
})
export type NativeHostStatus = typeof NativeHostStatus.Type

/** The self-test's hops main can run without a browser, in the order they run. */
export const SelfTestHopName = Schema.Literals([
  "Core answers",
  "Native host answers",
  "Providers found",
  "pedelec-cli reaches Core"
])
export type SelfTestHopName = typeof SelfTestHopName.Type

const Latency = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const Sentence = Schema.String.check(Schema.isBetweenLength(1, 2048))

/**
 * One hop of `app.self_test`, tagged by `ok`: passed, with its latency (ms, from Effect's Clock) and what came back;
 * failed, with its coded error and what to do; or (`skipped`) not run because a hop it needs failed first.
 */
export const SelfTestHop = Schema.Union([
  Schema.Struct({ name: SelfTestHopName, ok: Schema.Literal(true), ms: Latency, detail: Sentence }),
  Schema.Struct({
    name: SelfTestHopName,
    ok: Schema.Literal(false),
    ms: Latency,
    error: PedelecErrorWire,
    todo: Sentence
  }),
  Schema.Struct({ name: SelfTestHopName, ok: Schema.Literal(false), skipped: Schema.Literal(true), detail: Sentence })
])
export type SelfTestHop = typeof SelfTestHop.Type

const method = <P extends Schema.Top, R extends Schema.Top>(params: P, result: R) => ({ params, result })

/** Every call, with its params and result; a `desktop.*` method's params are the payload of the RPC of that tag. */
export const DesktopMethods = {
  "app.info": method(Empty, AppInfo),
  /** Each detected browser's registration, read from the files (nothing written). */
  "app.native_host.status": method(Empty, NativeHostStatus),
  /** Writes the launcher and this browser's manifest as the app would at start (Register, and Repair of a stale one). */
  "app.native_host.register": method(Schema.Struct({ browser: NativeHostBrowser }), NativeHostStatus),
  /** Runs the self-test's hops that need no browser against the running parts, one after another (SelfTestHopName). */
  "app.self_test": method(Empty, Schema.Array(SelfTestHop)),
  "desktop.status": method(Empty, CoreStatus),
  "desktop.settings.get": method(Empty, PublicSettings),
  "desktop.settings.set": method(Schema.Struct({ settings: Settings }), PublicSettings),
  "desktop.settings.set_secret": method(Schema.Struct({ name: SecretName, value: SecretValue }), PublicSettings),
  "desktop.settings.clear_secret": method(Schema.Struct({ name: SecretName }), PublicSettings),
  "desktop.providers.list": method(Schema.Struct({ rescan: Schema.Boolean }), Schema.Array(LocalProvider)),
  "desktop.effort.describe": method(Empty, Schema.Array(EffortDescription)),
  "desktop.effort.check": method(
    Schema.Struct({ provider: ProviderCode, level: EffortLevel, profile: EffortProfile }),
    EffortPreview
  ),
  "desktop.ollama.check": method(
    Schema.Struct({ baseUrl: Schema.optionalKey(HttpUrl), apiKey: Schema.optionalKey(SecretValue) }),
    OllamaStatus
  ),
  "desktop.session.list": method(Empty, Schema.Array(DesktopSession)),
  "desktop.session.end": method(Schema.Struct({ sessionId: SessionId }), Empty),
  "desktop.events.history": method(
    Schema.Struct({
      sessionId: SessionId,
      afterSeq: AfterSeq,
      limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5_000 }))
    }),
    EventPage
  ),
  "desktop.origin.full_access": method(Schema.Struct({ origin: Origin, enabled: Schema.Boolean }), PublicSettings),
  "desktop.origin.policies": method(Empty, SitePolicies),
  "desktop.origin.set_policy": method(Schema.Struct({ origin: Origin, policy: SitePolicy }), SitePolicy)
} as const
export type DesktopMethod = keyof typeof DesktopMethods
export type DesktopParams<M extends DesktopMethod> = (typeof DesktopMethods)[M]["params"]["Type"]
export type DesktopResult<M extends DesktopMethod> = (typeof DesktopMethods)[M]["result"]["Type"]

/** Every stream, with its params and the items it pushes. */
export const DesktopStreams = {
  "desktop.events.watch": method(Empty, WatchItem)
} as const
export type DesktopStream = keyof typeof DesktopStreams
export type DesktopStreamValue<S extends DesktopStream> = (typeof DesktopStreams)[S]["result"]["Type"]

export const DesktopRequest = Schema.Struct({
  method: Schema.Literals(Object.keys(DesktopMethods) as Array<DesktopMethod>),
  params: Schema.Unknown
})
export const DesktopStreamRequest = Schema.Struct({
  method: Schema.Literals(Object.keys(DesktopStreams) as Array<DesktopStream>),
  params: Schema.Unknown
})

export const DesktopResponse = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({ ok: Schema.Literal(false), error: PedelecErrorWire })
])
export type DesktopResponse = typeof DesktopResponse.Type

export const DesktopStreamItem = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("item"), item: Schema.Unknown }),
  Schema.Struct({ kind: Schema.Literal("end") }),
  Schema.Struct({ kind: Schema.Literal("error"), error: PedelecErrorWire })
])
export type DesktopStreamItem = typeof DesktopStreamItem.Type

/**
 * The loopback transport (tests, preview): POST `/call` with a `DesktopRequest` body, POST `/watch` answered with
 * NDJSON `DesktopStreamItem`s, both carrying the per-run token in this header; the renderer reads the token from its
 * URL's fragment (`#token=…`), which no request sends.
 */
export const LOOPBACK = { tokenHeader: "x-pedelec-desktop-token", call: "/call", watch: "/watch" } as const
