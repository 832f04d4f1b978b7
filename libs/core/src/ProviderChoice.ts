/**
 * ProviderChoice — which provider, model and effort profile a new session runs with: the request first, then the
 * settings' defaults (a level the settings leave out runs the adapter's default profile), checked against what the
 * provider's adapter allows and what is installed. The same allow-list rule answers the user's questions about
 * profiles (the desktop role's describe, check and settings writes). Snapshotting the result into the session is
 * Sessions/Open's; later settings edits never reach a live session.
 */

import type { EffortDescription, EffortPreview } from "@pedelec/contracts/Desktop"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { EFFORT_LEVELS, type EffortLevel, type EffortProfile, type ProviderCode } from "@pedelec/contracts/Provider"
import type { CreateSessionInput } from "@pedelec/contracts/Session"
import type { Settings } from "@pedelec/contracts/Settings"
import type { ProviderAdapter } from "@pedelec/providers/Provider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Providers } from "./Providers.ts"
import { SettingsStore } from "./SettingsStore.ts"

export interface Choice {
  readonly adapter: ProviderAdapter
  readonly effortLevel: EffortLevel
  readonly profile: EffortProfile
  readonly model: string | undefined
  readonly fullAccessOrigins: ReadonlyArray<string>
}

const invalidEffort = (provider: ProviderCode, effortLevel: string, reason: string) =>
  PedelecError.fromCode("EFFORT_LEVEL_INVALID", "core", { details: { provider, effortLevel, reason } })

/** A profile may hold only tokens the adapter allows: settings are user-editable, argv is not a shell. */
const checkEffort = (adapter: ProviderAdapter, effortLevel: string, profile: EffortProfile) =>
  Effect.gen(function* () {
    for (const token of profile.argv) {
      if (!adapter.effortAllowList.argv.some((pattern) => pattern.test(token))) {
        return yield* Effect.fail(invalidEffort(adapter.code, effortLevel, `argv token "${token}" is not allowed`))
      }
    }
    for (const name of Object.keys(profile.env)) {
      if (!adapter.effortAllowList.env.includes(name)) {
        return yield* Effect.fail(invalidEffort(adapter.code, effortLevel, `env variable ${name} is not allowed`))
      }
    }
  })

/** The allow-list as text a user can read (each pattern's source) and what each level runs by default. */
const describeAdapter = (adapter: ProviderAdapter): EffortDescription => ({
  provider: adapter.code,
  name: adapter.name,
  effort: adapter.effort,
  allowList: {
    argv: adapter.effortAllowList.argv.map((pattern) => pattern.source),
    env: [...adapter.effortAllowList.env]
  },
  defaults: adapter.defaultEffort
})

/** Plain tokens as they are; anything a shell would read differently in single quotes. */
const shellQuote = (token: string) => (/^[\w@%+=:,./-]+$/.test(token) ? token : `'${token.replaceAll("'", "'\\''")}'`)

const preview = (adapter: ProviderAdapter, level: EffortLevel, profile: EffortProfile): EffortPreview => ({
  provider: adapter.code,
  level,
  profile,
  commandLine: [...(profile.model === undefined ? [] : ["--model", profile.model]), ...profile.argv]
    .map(shellQuote)
    .join(" "),
  env: Object.entries(profile.env).map(([name, value]) => `${name}=${value}`)
})

/** Every stored profile of a provider Core can run passes its allow-list; profiles of others are kept as they are. */
const checkProfiles = (adapters: ReadonlyArray<ProviderAdapter>, settings: Settings) =>
  Effect.forEach(
    adapters,
    (adapter) =>
      Effect.forEach(
        EFFORT_LEVELS,
        (level) => {
          const profile = settings.effortProfiles[adapter.code]?.[level]
          return profile === undefined ? Effect.void : checkEffort(adapter, level, profile)
        },
        { discard: true }
      ),
    { discard: true }
  )

export class ProviderChoice extends Context.Service<
  ProviderChoice,
  {
    readonly resolve: (input: CreateSessionInput) => Effect.Effect<Choice, PedelecError>
    /** Per provider Core can run: its effort knob, allow-list and default profiles. */
    readonly describe: ReadonlyArray<EffortDescription>
    /** One profile against the provider's allow-list: the preview, or `EFFORT_LEVEL_INVALID` with the reason. */
    readonly check: (
      provider: ProviderCode,
      level: EffortLevel,
      profile: EffortProfile
    ) => Effect.Effect<EffortPreview, PedelecError>
    /** Settings about to be stored: each effort profile passes its adapter's allow-list. */
    readonly checkSettings: (settings: Settings) => Effect.Effect<void, PedelecError>
  }
>()("pedelec/core/ProviderChoice") {
  static readonly layer = Layer.effect(
    ProviderChoice,
    Effect.gen(function* () {
      const settings = yield* SettingsStore
      const providers = yield* Providers

      const resolve = Effect.fn("ProviderChoice.resolve")(function* (input: CreateSessionInput) {
        const current = yield* settings.get
        const chosen = input.provider ?? current.defaultProvider
        if (chosen === null) return yield* Effect.fail(PedelecError.fromCode("DEFAULT_PROVIDER_NOT_SET", "core"))
        const adapter = yield* providers.adapter(chosen)
        const info = yield* providers.info(chosen)
        if (!info.available) {
          const code = input.provider === undefined ? "DEFAULT_PROVIDER_UNAVAILABLE" : "PROVIDER_UNAVAILABLE"
          const reason = info.error ?? "it was not found on this machine"
          return yield* Effect.fail(PedelecError.fromCode(code, "core", { details: { provider: chosen, reason } }))
        }
        const effortLevel = input.effortLevel ?? current.defaultEffortLevel
        const profile = current.effortProfiles[chosen]?.[effortLevel] ?? adapter.defaultEffort[effortLevel]
        yield* checkEffort(adapter, effortLevel, profile)
        const ollamaDefault = chosen === "ollama" ? current.ollama.defaultModel : undefined
        const model = input.model ?? profile.model ?? current.defaultModels[chosen] ?? ollamaDefault
        if (chosen === "ollama" && model === undefined) {
          return yield* Effect.fail(PedelecError.fromCode("MODEL_REQUIRED", "core", { details: { provider: chosen } }))
        }
        return { adapter, effortLevel, profile, model, fullAccessOrigins: current.fullAccessOrigins } satisfies Choice
      })

      const check = Effect.fn("ProviderChoice.check")(function* (
        provider: ProviderCode,
        level: EffortLevel,
        profile: EffortProfile
      ) {
        const adapter = yield* providers.adapter(provider)
        yield* checkEffort(adapter, level, profile)
        return preview(adapter, level, profile)
      })

      return ProviderChoice.of({
        resolve,
        describe: providers.adapters.map(describeAdapter),
        check,
        checkSettings: Effect.fn("ProviderChoice.checkSettings")((settings: Settings) =>
          checkProfiles(providers.adapters, settings)
        )
      })
    })
  )
}
