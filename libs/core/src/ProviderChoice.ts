/**
 * ProviderChoice — which provider, model and effort profile a new session runs with: the request first, then the
 * settings' defaults (a level the settings leave out runs the adapter's default profile), checked against what the
 * provider's adapter allows and what is installed. Snapshotting the result into the session is SessionSetup's;
 * later settings edits never reach a live session.
 */
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortLevel, EffortProfile, ProviderCode } from "@pedelec/contracts/Provider"
import type { CreateSessionInput } from "@pedelec/contracts/Session"
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

export class ProviderChoice extends Context.Service<
  ProviderChoice,
  { readonly resolve: (input: CreateSessionInput) => Effect.Effect<Choice, PedelecError> }
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

      return ProviderChoice.of({ resolve })
    })
  )
}
