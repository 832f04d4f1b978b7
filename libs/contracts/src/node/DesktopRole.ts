/**
 * The desktop app (and pedelec-cli's user commands) ↔ Core (desktop role), as an `effect/rpc` group over Core IPC.
 * The caller proves this launch's secret from `run/core.json` on every request, as the host role does; what sets
 * the roles apart is what each group offers and who relays it: the native host relays host tags only, so a page can
 * never reach these. The desktop role is the user's own: settings and secrets, every session of every origin, the
 * event logs, provider rescans, the per-origin full-access opt-in and site policies. Every tag starts with `desktop.` so it never
 * collides with a host tag on the same server. Node-only: `effect/rpc` never reaches a browser bundle.
 */
import * as Context from "effect/Context"
import { Rpc, RpcGroup, RpcMiddleware } from "effect/rpc"
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
import { PedelecError } from "../PedelecError.ts"
import { EffortLevel, EffortProfile, ProviderCode } from "../Provider.ts"
import { HttpUrl, PublicSettings, SecretName, Settings } from "../Settings.ts"
import { SitePolicies, SitePolicy } from "../SitePolicy.ts"
import { HelloRpcs } from "./CoreLink.ts"

/** Provided to desktop-role handlers once the launch secret checked out. */
export class DesktopCaller extends Context.Service<DesktopCaller, { readonly role: "desktop" }>()(
  "pedelec/contracts/DesktopCaller"
) {}

export class DesktopAuth extends RpcMiddleware.Service<DesktopAuth, { provides: DesktopCaller }>()(
  "pedelec/contracts/DesktopAuth",
  { error: PedelecError, requiredForClient: true }
) {}

const SecretValue = Schema.String.check(Schema.isBetweenLength(1, 4096))

export class DesktopRpcs extends RpcGroup.make(
  /** Version, pid, home, socket and start time of the running Core. */
  Rpc.make("desktop.status", { success: CoreStatus, error: PedelecError }),
  /** The public view: every setting, and for each secret only whether it is set. */
  Rpc.make("desktop.settings.get", { success: PublicSettings, error: PedelecError }),
  /**
   * Replaces the whole settings document. Decoded by the contracts' Schema (and each effort profile checked against
   * its adapter's allow-list); a value that fails is `SETTINGS_INVALID` or `EFFORT_LEVEL_INVALID` and leaves
   * `settings.json` as it was. Live sessions keep the snapshot they started with.
   */
  Rpc.make("desktop.settings.set", { payload: { settings: Settings }, success: PublicSettings, error: PedelecError }),
  /** Stores a secret in `secrets.json` (0600); the answer says it is set, never what it is. */
  Rpc.make("desktop.settings.set_secret", {
    payload: { name: SecretName, value: SecretValue },
    success: PublicSettings,
    error: PedelecError
  }),
  Rpc.make("desktop.settings.clear_secret", {
    payload: { name: SecretName },
    success: PublicSettings,
    error: PedelecError
  }),
  /** Every provider Core can run; `rescan` forgets what was found and looks again. */
  Rpc.make("desktop.providers.list", {
    payload: { rescan: Schema.Boolean },
    success: Schema.Array(LocalProvider),
    error: PedelecError
  }),
  /** Per provider: whether it has an effort knob, the allow-list and the default profiles. */
  Rpc.make("desktop.effort.describe", { success: Schema.Array(EffortDescription), error: PedelecError }),
  /**
   * Checks one profile against the provider's allow-list, with the rule sessions are created with: the preview, or
   * `EFFORT_LEVEL_INVALID` whose `details.reason` names the token refused. Nothing is stored.
   */
  Rpc.make("desktop.effort.check", {
    payload: { provider: ProviderCode, level: EffortLevel, profile: EffortProfile },
    success: EffortPreview,
    error: PedelecError
  }),
  /**
   * Asks the Ollama server (the settings' base URL and key, or the overrides given) for its version and models. A
   * server that cannot be reached is `OLLAMA_UNAVAILABLE`, a refused key `OLLAMA_AUTH_FAILED`, an answer that is
   * not Ollama's `OLLAMA_RESPONSE_INVALID`. Overrides are not stored.
   */
  Rpc.make("desktop.ollama.check", {
    payload: { baseUrl: Schema.optionalKey(HttpUrl), apiKey: Schema.optionalKey(SecretValue) },
    success: OllamaStatus,
    error: PedelecError
  }),
  /** Every live session of every origin, oldest first. */
  Rpc.make("desktop.session.list", { success: Schema.Array(DesktopSession), error: PedelecError }),
  /** Ends any origin's session as its owner's `session.end` would (reason `requested`); not live: SESSION_NOT_FOUND. */
  Rpc.make("desktop.session.end", { payload: { sessionId: SessionId }, error: PedelecError }),
  /**
   * Events with `seq > afterSeq` from the session's durable log, at most `limit`, also for a session that ended
   * (until the log is pruned after seven days); a session without a log is SESSION_NOT_FOUND.
   */
  Rpc.make("desktop.events.history", {
    payload: {
      sessionId: SessionId,
      afterSeq: AfterSeq,
      limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5_000 }))
    },
    success: EventPage,
    error: PedelecError
  }),
  /**
   * Every session's events as they are published (see `WatchItem`). A watcher is an onlooker: it holds no session's
   * lease and claims no tools, so a session still ends when its page goes.
   */
  Rpc.make("desktop.events.watch", { success: WatchItem, error: PedelecError, stream: true }),
  /**
   * Lets `origin` run providers without their sandbox (SPEC §12), or takes that back: the settings'
   * `fullAccessOrigins`, which nothing else changes. Sessions already live keep the mode they started with.
   */
  Rpc.make("desktop.origin.full_access", {
    payload: { origin: Origin, enabled: Schema.Boolean },
    success: PublicSettings,
    error: PedelecError
  }),
  /** Every site whose policy is not the default (`site-policies.json`), by origin. */
  Rpc.make("desktop.origin.policies", { success: SitePolicies, error: PedelecError }),
  /**
   * Replaces a site's policy, as the extension's options page does through the host role; the extension asks Core
   * for a site's policy at each create, so it holds there too from the next create on.
   */
  Rpc.make("desktop.origin.set_policy", {
    payload: { origin: Origin, policy: SitePolicy },
    success: SitePolicy,
    error: PedelecError
  })
).middleware(DesktopAuth) {}

/** What a desktop-role client speaks: the hello, then the desktop group (the desktop app, pedelec-cli's user commands). */
export const DesktopClientRpcs = HelloRpcs.merge(DesktopRpcs)
