/**
 * Providers — the registry of provider adapters Core can run, and what `listProviders()` reports about them:
 * detection at start (in the background) and on demand, found providers cached until a rescan. The scripted test
 * agent exists only when enabled. It does not start processes (adapters do, for Sessions) and does not choose a
 * session's provider (Sessions, from settings).
 */
import { existsSync } from "node:fs"
import path from "node:path"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode, ProviderInfo } from "@pedelec/contracts/Provider"
import { AntigravityAdapter } from "@pedelec/providers/antigravity/AntigravityAdapter"
import { ClaudeAdapter } from "@pedelec/providers/claude/ClaudeAdapter"
import { CodexAdapter } from "@pedelec/providers/codex/CodexAdapter"
import { CursorAdapter } from "@pedelec/providers/cursor/CursorAdapter"
import { GeminiAdapter } from "@pedelec/providers/gemini/GeminiAdapter"
import { makeOllamaAdapter } from "@pedelec/providers/ollama/OllamaAdapter"
import { OpencodeAdapter } from "@pedelec/providers/opencode/OpencodeAdapter"
import type { ProviderAdapter } from "@pedelec/providers/Provider"
import { ScriptedAdapter } from "@pedelec/providers/scripted/ScriptedAdapter"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CoreConfig } from "./CoreConfig.ts"
import { SettingsStore } from "./SettingsStore.ts"

/** pedelec-agent sits beside pedelec-cli; the connection is read from the settings each time it is needed. */
const ollamaAdapter = Effect.gen(function* () {
  const config = yield* CoreConfig
  const settings = yield* SettingsStore
  const agent = config.binDir === undefined ? undefined : path.join(config.binDir, "pedelec-agent")
  return makeOllamaAdapter({
    agentCommand: agent !== undefined && existsSync(agent) ? agent : undefined,
    connection: Effect.gen(function* () {
      const { ollama } = yield* settings.get
      const secrets = yield* settings.getSecrets
      return { baseUrl: ollama.baseUrl, timeoutMs: ollama.timeoutMs, apiKey: secrets.ollamaApiKey }
    })
  })
})

export class Providers extends Context.Service<
  Providers,
  {
    readonly adapter: (code: ProviderCode) => Effect.Effect<ProviderAdapter, PedelecError>
    /** Detection of one provider, cached. */
    readonly info: (code: ProviderCode) => Effect.Effect<ProviderInfo, PedelecError>
    readonly list: (rescan: boolean) => Effect.Effect<ReadonlyArray<ProviderInfo>>
  }
>()("pedelec/core/Providers") {
  /** A registry over the given adapters (tests pass their own). */
  static readonly layerWith = (adapters: ReadonlyArray<ProviderAdapter>) =>
    Layer.effect(
      Providers,
      Effect.gen(function* () {
        const config = yield* CoreConfig
        const usable = adapters.filter((adapter) => adapter.code !== "scripted" || config.enableScripted)
        const byCode = new Map(usable.map((adapter) => [adapter.code, adapter]))
        const detected = new Map<ProviderCode, ProviderInfo>()

        const adapter = Effect.fn("Providers.adapter")(function* (code: ProviderCode) {
          const found = byCode.get(code)
          if (!found)
            return yield* Effect.fail(
              PedelecError.fromCode("PROVIDER_NOT_FOUND", "core", { details: { provider: code } })
            )
          return found
        })

        /** One look per provider at a time: a rescan or a createSession during a look waits for it. */
        const looking = new Map<ProviderCode, Deferred.Deferred<ProviderInfo>>()
        const look = (found: ProviderAdapter) =>
          Effect.gen(function* () {
            const running = looking.get(found.code)
            if (running) return yield* Deferred.await(running)
            const done = yield* Deferred.make<ProviderInfo>()
            looking.set(found.code, done)
            const fresh = yield* found.detect.pipe(
              Effect.tap((result) => Effect.sync(() => detected.set(found.code, result))),
              Effect.onExit((exit) =>
                Effect.andThen(
                  Effect.sync(() => looking.delete(found.code)),
                  Deferred.done(done, exit)
                )
              )
            )
            return fresh
          })

        const info = Effect.fn("Providers.info")(function* (code: ProviderCode) {
          const found = yield* adapter(code)
          const cached = detected.get(code)
          // Only a found provider is remembered: one the user has just installed, signed in to or configured
          // (Ollama's key) must work on the next try, without a rescan.
          if (cached?.available) return cached
          return yield* look(found)
        })

        const list = Effect.fn("Providers.list")(function* (rescan: boolean) {
          if (rescan) detected.clear()
          return yield* Effect.forEach(usable, (found) => info(found.code).pipe(Effect.orDie), {
            concurrency: "unbounded"
          })
        })

        // Scanned at start, in the background, so the first listProviders() or createSession() finds it done.
        yield* Effect.forkScoped(list(true))
        return Providers.of({ adapter, info, list })
      })
    )

  static readonly layer = Layer.unwrap(
    Effect.map(ollamaAdapter, (ollama) =>
      Providers.layerWith([
        ScriptedAdapter,
        ClaudeAdapter,
        CodexAdapter,
        GeminiAdapter,
        OpencodeAdapter,
        CursorAdapter,
        AntigravityAdapter,
        ollama
      ])
    )
  )
}
