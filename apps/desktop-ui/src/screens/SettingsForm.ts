/**
 * SettingsForm — the Settings screen's form as data: the draft a user edits (strings, as inputs hold them), built
 * from the public settings, checked field by field with the contracts' own schemas (the message shown at the field
 * is the schema's), and turned back into the `Settings` document `desktop.settings.set` takes. No rendering here.
 */
import { DesktopMethods } from "@pedelec/contracts/link/DesktopLink"
import { type EffortLevel, ModelName, type ProviderCode } from "@pedelec/contracts/Provider"
import { HttpUrl, OllamaSettings, type PublicSettings, type Settings } from "@pedelec/contracts/Settings"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

export interface Draft {
  readonly defaultEffortLevel: EffortLevel
  /** Per provider; "" is "none". */
  readonly models: Readonly<Partial<Record<ProviderCode, string>>>
  readonly baseUrl: string
  readonly timeoutSeconds: string
  readonly ollamaModel: string
  /** "" leaves the stored key as it is: a key is never shown back. */
  readonly apiKey: string
}

export type FieldErrors = Readonly<Record<string, string>>

export const draftOf = (settings: PublicSettings): Draft => ({
  defaultEffortLevel: settings.defaultEffortLevel,
  models: Object.fromEntries(Object.entries(settings.defaultModels).map(([code, model]) => [code, model ?? ""])),
  baseUrl: settings.ollama.baseUrl,
  timeoutSeconds: String(settings.ollama.timeoutMs / 1000),
  ollamaModel: settings.ollama.defaultModel ?? "",
  apiKey: ""
})

/** The schema's own words for why `value` does not decode, or undefined when it does. */
/** The Schema's own words for what is wrong, then what to do about it. */
const problem = (schema: Schema.Top, value: unknown, todo: string): string | undefined => {
  const result = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(value)
  return Result.isSuccess(result) ? undefined : `${result.failure.message}: ${todo}`
}

const MODEL_TODO = "fix it, or leave it empty for the default"

const SecretValue = DesktopMethods["desktop.settings.set_secret"].params.fields.value
const TimeoutMs = OllamaSettings.fields.timeoutMs

const timeoutMsOf = (draft: Draft) => Number(draft.timeoutSeconds.trim()) * 1000

/** Every field's problem, keyed by the field's id; empty when the draft can be saved. */
export const check = (draft: Draft): FieldErrors => {
  const errors: Record<string, string> = {}
  const add = (id: string, message: string | undefined) => {
    if (message !== undefined) errors[id] = message
  }
  for (const [code, model] of Object.entries(draft.models)) {
    if (model !== undefined && model.length > 0) add(`model-${code}`, problem(ModelName, model, MODEL_TODO))
  }
  add("ollama-url", problem(HttpUrl, draft.baseUrl.trim(), "e.g. http://127.0.0.1:11434 for a local Ollama"))
  const timeout = draft.timeoutSeconds.trim()
  // The schema counts milliseconds; the field shows seconds, so its failure is said in seconds.
  const badTimeout = timeout.length === 0 || problem(TimeoutMs, timeoutMsOf(draft), "") !== undefined
  add("ollama-timeout", badTimeout ? "Expected a whole number of seconds between 1 and 3600: e.g. 120" : undefined)
  if (draft.ollamaModel.length > 0) add("ollama-model", problem(ModelName, draft.ollamaModel, MODEL_TODO))
  if (draft.apiKey.length > 0) add("ollama-key", problem(SecretValue, draft.apiKey, "paste the whole key again"))
  return errors
}

/** The settings document with the draft applied; only call it on a draft `check` found nothing wrong with. */
const nonEmpty = (models: Draft["models"]): Record<string, string> =>
  Object.fromEntries(
    Object.entries(models)
      .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "")
      .sort(([a], [b]) => a.localeCompare(b))
  )

export const settingsOf = (current: PublicSettings, draft: Draft): Settings => {
  const { secretsSet: _, ...settings } = current
  const models = nonEmpty(draft.models)
  const { defaultModel: __, ...ollama } = current.ollama
  return {
    ...settings,
    defaultEffortLevel: draft.defaultEffortLevel,
    defaultModels: models,
    ollama: {
      ...ollama,
      baseUrl: draft.baseUrl.trim(),
      timeoutMs: timeoutMsOf(draft),
      ...(draft.ollamaModel.length > 0 ? { defaultModel: draft.ollamaModel } : {})
    }
  }
}

/** A provider's model typed and then cleared is no change. */
const normal = (draft: Draft) => ({ ...draft, models: nonEmpty(draft.models) })

export const sameDraft = (a: Draft, b: Draft) => JSON.stringify(normal(a)) === JSON.stringify(normal(b))
