/**
 * Providers as the rest of the system sees them: their codes, effort levels, the shape of an effort profile, and
 * what `listProviders()` reports. Which argv tokens and env variables a profile may hold is each adapter's
 * allow-list (libs/providers), not a contract.
 */
import * as Schema from "effect/Schema"

/** `scripted` is the test agent: enabled only with `PEDELEC_ENABLE_SCRIPTED=1` and hidden otherwise. */
export const PROVIDER_CODES = [
  "codex",
  "claude",
  "gemini",
  "opencode",
  "cursor",
  "antigravity",
  "ollama",
  "scripted"
] as const
export const ProviderCode = Schema.Literals(PROVIDER_CODES)
export type ProviderCode = typeof ProviderCode.Type

export const EFFORT_LEVELS = ["low", "medium", "high"] as const
export const EffortLevel = Schema.Literals(EFFORT_LEVELS)
export type EffortLevel = typeof EffortLevel.Type
export const DEFAULT_EFFORT_LEVEL: EffortLevel = "medium"

/** A model name as the provider spells it; opaque to Pedelec, but bounded and free of control characters. */
export const ModelName = Schema.String.check(Schema.isPattern(/^[^\s\p{Cc}]{1,200}$/u))
export type ModelName = typeof ModelName.Type

const ArgvToken = Schema.String.check(Schema.isBetweenLength(1, 512))
const EnvName = Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/))

/** One effort level of one provider: extra argv tokens, extra env variables and an optional model. */
export const EffortProfile = Schema.Struct({
  argv: Schema.Array(ArgvToken).check(Schema.isMaxLength(32)),
  env: Schema.Record(EnvName, Schema.String.check(Schema.isMaxLength(4096))).check(Schema.isMaxProperties(32)),
  model: Schema.optionalKey(ModelName)
})
export type EffortProfile = typeof EffortProfile.Type

export const EffortProfiles = Schema.Struct({
  low: Schema.optionalKey(EffortProfile),
  medium: Schema.optionalKey(EffortProfile),
  high: Schema.optionalKey(EffortProfile)
})
export type EffortProfiles = typeof EffortProfiles.Type

/** Whether a provider has a reasoning/effort knob; without one, every level runs the same (and says why). */
export const EffortSupport = Schema.Struct({
  supported: Schema.Boolean,
  note: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
})
export type EffortSupport = typeof EffortSupport.Type

/** One row of `listProviders()`. */
export const ProviderInfo = Schema.Struct({
  code: ProviderCode,
  name: Schema.String.check(Schema.isBetweenLength(1, 64)),
  available: Schema.Boolean,
  version: Schema.NullOr(Schema.String.check(Schema.isMaxLength(128))),
  /** Why it is unavailable, in words a user can act on; null when available. */
  error: Schema.NullOr(Schema.String.check(Schema.isMaxLength(2048))),
  /** Not yet verified against the real CLI (cursor, antigravity). */
  experimental: Schema.Boolean,
  effort: EffortSupport
})
export type ProviderInfo = typeof ProviderInfo.Type
