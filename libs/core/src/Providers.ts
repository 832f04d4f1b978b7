/**
 * Providers — the registry of provider adapters Core can run, and what `listProviders()` reports about them:
 * detection at start (in the background) and on demand, through one `Cache` (a look shared by whoever asks during
 * it, found providers kept until a rescan). The scripted test
 * agent exists only when enabled. It does not start processes (adapters do, for Sessions) and does not choose a
 * session's provider (Sessions, from settings).
 */
import { existsSync } from "node:fs"
import path from "node:path"
import type { LocalProvider } from "@pedelec/contracts/Desktop"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import { AntigravityAdapter } from "@pedelec/providers/antigravity/AntigravityAdapter"
import { ClaudeAdapter } from "@pedelec/providers/claude/ClaudeAdapter"
import { CodexAdapter } from "@pedelec/providers/codex/CodexAdapter"
import { CursorAdapter } from "@pedelec/providers/cursor/CursorAdapter"
import { GeminiAdapter } from "@pedelec/providers/gemini/GeminiAdapter"
import { makeOllamaAdapter } from "@pedelec/providers/ollama/OllamaAdapter"
import { OpencodeAdapter } from "@pedelec/providers/opencode/OpencodeAdapter"
import type { ProviderAdapter } from "@pedelec/providers/Provider"
import { ScriptedAdapter } from "@pedelec/providers/scripted/ScriptedAdapter"
import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
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

/**
 * One detection per provider at a time: whoever asks during a look (a rescan, a createSession) joins it. Only a found
 * provider is kept: one the user has just installed, signed in to or configured (Ollama's key) must work on the
 * next try, without a rescan.
 */
const detectionCache = (byCode: ReadonlyMap<ProviderCode, ProviderAdapter>) =>
  // Asked only for a code `Providers.adapter` has found.
  Cache.makeWith((code: ProviderCode) => byCode.get(code)!.detect, {
    capacity: Math.max(1, byCode.size),
    timeToLive: (exit) => (Exit.isSuccess(exit) && exit.value.available ? Duration.infinity : Duration.zero)
  })

/** A rescan forgets what was found; a look still running is kept, so the rescan joins it rather than start another. */
const forget = Effect.fnUntraced(function* (detections: Cache.Cache<ProviderCode, LocalProvider>, code: ProviderCode) {
  if (Option.isSome(yield* Cache.getSuccess(detections, code))) yield* Cache.invalidate(detections, code)
})

export class Providers extends Context.Service<
  Providers,
  {
    readonly adapter: (code: ProviderCode) => Effect.Effect<ProviderAdapter, PedelecError>
    /** Detection of one provider, cached. */
    readonly info: (code: ProviderCode) => Effect.Effect<LocalProvider, PedelecError>
    readonly list: (rescan: boolean) => Effect.Effect<ReadonlyArray<LocalProvider>>
    /** The adapters Core can run, in listing order (no detection). */
    readonly adapters: ReadonlyArray<ProviderAdapter>
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
        const detections = yield* detectionCache(byCode)

        const adapter = Effect.fn("Providers.adapter")(function* (code: ProviderCode) {
          const found = byCode.get(code)
          if (!found)
            return yield* Effect.fail(
              PedelecError.fromCode("PROVIDER_NOT_FOUND", "core", { details: { provider: code } })
            )
          return found
        })

        const info = Effect.fn("Providers.info")(function* (code: ProviderCode) {
          yield* adapter(code)
          return yield* Cache.get(detections, code)
        })

        const list = Effect.fn("Providers.list")(function* (rescan: boolean) {
          if (rescan) yield* Effect.forEach(usable, (found) => forget(detections, found.code), { discard: true })
          return yield* Effect.forEach(usable, (found) => info(found.code).pipe(Effect.orDie), {
            concurrency: "unbounded"
          })
        })

        // Scanned at start, in the background, so the first listProviders() or createSession() finds it done.
        yield* Effect.forkScoped(list(true))
        return Providers.of({ adapter, info, list, adapters: usable })
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
