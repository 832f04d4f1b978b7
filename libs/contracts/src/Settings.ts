/**
 * User settings (`settings.json`) and secrets (`secrets.json`, 0600). Core validates both with these schemas on
 * every read and write; `PublicSettings` is what leaves Core (`getSettings`, the desktop UI): it says whether a
 * secret is set, never what it is.
 */
import * as Schema from "effect/Schema"
import { Origin } from "./Ids.ts"
import { DEFAULT_EFFORT_LEVEL, EffortLevel, EffortProfiles, ModelName, ProviderCode } from "./Provider.ts"

export const HttpUrl = Schema.String.check(
  Schema.isMaxLength(2048),
  Schema.isPattern(/^https?:\/\/[^\s/?#]+(\/[^\s]*)?$/, { message: "Expected an http(s) URL" })
)

export const OllamaSettings = Schema.Struct({
  baseUrl: HttpUrl,
  timeoutMs: Schema.Int.check(Schema.isBetween({ minimum: 1_000, maximum: 3_600_000 })),
  /** Used when a session asks for ollama without a model. */
  defaultModel: Schema.optionalKey(ModelName)
})
export type OllamaSettings = typeof OllamaSettings.Type

export const Settings = Schema.Struct({
  defaultProvider: Schema.NullOr(ProviderCode),
  defaultModels: Schema.Record(ProviderCode, Schema.optionalKey(ModelName)),
  defaultEffortLevel: EffortLevel,
  effortProfiles: Schema.Record(ProviderCode, Schema.optionalKey(EffortProfiles)),
  ollama: OllamaSettings,
  /** Origins the user let run providers without their sandbox (SPEC §12); empty by default. */
  fullAccessOrigins: Schema.Array(Origin).check(Schema.isMaxLength(256))
})
export type Settings = typeof Settings.Type

export const DEFAULT_SETTINGS: Settings = {
  defaultProvider: null,
  defaultModels: {},
  defaultEffortLevel: DEFAULT_EFFORT_LEVEL,
  effortProfiles: {},
  ollama: { baseUrl: "http://127.0.0.1:11434", timeoutMs: 300_000 },
  fullAccessOrigins: []
}

/** Never leaves Core: not in events, logs, argv or `PublicSettings`. */
export const Secrets = Schema.Struct({
  ollamaApiKey: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 4096)))
})
export type Secrets = typeof Secrets.Type
export type SecretName = keyof Secrets

export const SecretName = Schema.Literals(["ollamaApiKey"])

export const PublicSettings = Schema.Struct({
  ...Settings.fields,
  secretsSet: Schema.Struct({ ollamaApiKey: Schema.Boolean })
})
export type PublicSettings = typeof PublicSettings.Type
