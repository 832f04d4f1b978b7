/**
 * EffortForm — the Effort profiles screen's form as data: per provider and level, the draft a user edits (argv as
 * the text typed, the model, the env kept as stored), built from settings' `effortProfiles` or the adapter's
 * defaults, turned into the profile `desktop.effort.check` takes, and into the settings document
 * `desktop.settings.set` stores (a level left at its default is not stored, so a newer default applies to it).
 * Whether a token is allowed is Core's answer (the adapter's allow-list), never guessed here. No rendering.
 */
import type { EffortDescription } from "@pedelec/contracts/Desktop"
import { EFFORT_LEVELS, type EffortLevel, type EffortProfile, ModelName } from "@pedelec/contracts/Provider"
import type { PublicSettings, Settings } from "@pedelec/contracts/Settings"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

export interface LevelDraft {
  /** The tokens as typed, separated by spaces. */
  readonly argv: string
  readonly model: string
  readonly env: EffortProfile["env"]
  /** Still the adapter's default: saved as "no profile", so it follows the adapter. */
  readonly isDefault: boolean
}

export type ProviderDraft = Readonly<Record<EffortLevel, LevelDraft>>

const draftOfProfile = (profile: EffortProfile, isDefault: boolean): LevelDraft => ({
  argv: profile.argv.join(" "),
  model: profile.model ?? "",
  env: profile.env,
  isDefault
})

export const defaultLevel = (description: EffortDescription, level: EffortLevel): LevelDraft =>
  draftOfProfile(description.defaults[level], true)

export const providerDraft = (description: EffortDescription, settings: PublicSettings): ProviderDraft => {
  const stored = settings.effortProfiles[description.provider]
  const level = (name: EffortLevel) => {
    const profile = stored?.[name]
    return profile === undefined ? defaultLevel(description, name) : draftOfProfile(profile, false)
  }
  return { low: level("low"), medium: level("medium"), high: level("high") }
}

export const tokensOf = (argv: string) => argv.split(/\s+/).filter((token) => token.length > 0)

export const profileOf = (draft: LevelDraft): EffortProfile => {
  const model = draft.model.trim()
  return { argv: tokensOf(draft.argv), env: draft.env, ...(model === "" ? {} : { model }) }
}

/** The model field's problem in the schema's words, or undefined. */
export const modelProblem = (draft: LevelDraft): string | undefined => {
  const model = draft.model.trim()
  if (model === "") return undefined
  const result = Schema.decodeUnknownResult(ModelName)(model)
  return Result.isSuccess(result)
    ? undefined
    : "A model name has no spaces and at most 200 characters: fix it, or leave it empty for the provider's default."
}

/** What a draft stores: the levels changed from their default, or nothing for a provider left at its defaults. */
const storedOf = (description: EffortDescription, draft: ProviderDraft) => {
  const same = (level: EffortLevel) =>
    JSON.stringify(profileOf(draft[level])) === JSON.stringify(description.defaults[level])
  const levels = EFFORT_LEVELS.filter((level) => !draft[level].isDefault && !same(level))
  return levels.length === 0 ? undefined : Object.fromEntries(levels.map((level) => [level, profileOf(draft[level])]))
}

export const settingsWith = (
  current: PublicSettings,
  description: EffortDescription,
  draft: ProviderDraft
): Settings => {
  const { secretsSet: _, ...settings } = current
  const { [description.provider]: __, ...others } = settings.effortProfiles
  const stored = storedOf(description, draft)
  return { ...settings, effortProfiles: stored === undefined ? others : { ...others, [description.provider]: stored } }
}

/** The same profiles to run (spacing in the argv field is no change). */
export const sameDraft = (a: ProviderDraft, b: ProviderDraft) =>
  EFFORT_LEVELS.every(
    (level) =>
      a[level].isDefault === b[level].isDefault &&
      JSON.stringify(profileOf(a[level])) === JSON.stringify(profileOf(b[level]))
  )
