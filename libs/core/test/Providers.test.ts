// Providers' detection over fake adapters that count their looks and wait at a gate: one look per provider at a
// time (the start scan, info and a rescan during a look share it), a found provider kept until a rescan, a provider
// not found looked for again, an unknown code refused, and the scripted agent only when enabled.
import { assert, describe, it } from "@effect/vitest"
import type { LocalProvider } from "@pedelec/contracts/Desktop"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import { NO_EFFORT_PROFILES, type ProviderAdapter } from "@pedelec/providers/Provider"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { CoreConfig } from "../src/CoreConfig.ts"
import { Providers } from "../src/Providers.ts"

interface Fake {
  readonly adapter: ProviderAdapter
  readonly looks: () => number
  /** Each look waits for this gate; open it once to let every look through. */
  readonly open: Effect.Effect<void>
  setAvailable: (available: boolean) => void
}

const fake = Effect.fnUntraced(function* (code: ProviderCode, initially: { available: boolean; gated: boolean }) {
  const gate = yield* Deferred.make<void>()
  if (!initially.gated) yield* Deferred.succeed(gate, undefined)
  let looks = 0
  let available = initially.available
  const about = { code, name: code, experimental: false, effort: { supported: false, note: "" } }
  const detect = Effect.suspend(() => {
    looks++
    return Deferred.await(gate).pipe(
      Effect.map(
        (): LocalProvider => ({
          ...about,
          available,
          version: null,
          error: available ? null : "missing",
          location: null
        })
      )
    )
  })
  const adapter: ProviderAdapter = {
    ...about,
    effortAllowList: { argv: [], env: [] },
    defaultEffort: NO_EFFORT_PROFILES,
    detect,
    start: () => Effect.die("not started in these tests")
  }
  return {
    adapter,
    looks: () => looks,
    open: Deferred.succeed(gate, undefined).pipe(Effect.asVoid),
    setAvailable: (next: boolean) => {
      available = next
    }
  } satisfies Fake
})

/** Providers over the fakes, in the test's scope, once its start scan has begun every look it makes. */
const providersOver = Effect.fnUntraced(function* (fakes: ReadonlyArray<Fake>, enableScripted = false) {
  const layer = Providers.layerWith(fakes.map((one) => one.adapter)).pipe(
    Layer.provide(CoreConfig.layerWith({ enableScripted }))
  )
  const providers = Context.get(yield* Layer.build(layer), Providers)
  const scanned = fakes.filter((one) => one.adapter.code !== "scripted" || enableScripted)
  while (scanned.some((one) => one.looks() === 0)) yield* Effect.yieldNow
  return providers
})

describe("Providers", () => {
  it.effect("looks once per provider at a time: the start scan, info and a rescan during it share one look", () =>
    Effect.gen(function* () {
      const codex = yield* fake("codex", { available: true, gated: true })
      const providers = yield* providersOver([codex])
      const waiting = yield* Effect.forkChild(
        Effect.all([providers.info("codex"), providers.list(true), providers.info("codex")], { concurrency: 3 })
      )
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      assert.strictEqual(codex.looks(), 1)
      yield* codex.open
      const [info, listed] = yield* Fiber.join(waiting)
      assert.isTrue(info.available)
      assert.deepStrictEqual(listed, [info])
      assert.strictEqual(codex.looks(), 1)
    })
  )

  it.effect("keeps a found provider until a rescan, which looks again", () =>
    Effect.gen(function* () {
      const codex = yield* fake("codex", { available: true, gated: false })
      const providers = yield* providersOver([codex])
      yield* providers.info("codex")
      yield* providers.info("codex")
      yield* providers.list(false)
      assert.strictEqual(codex.looks(), 1)
      codex.setAvailable(false)
      const [rescanned] = yield* providers.list(true)
      assert.strictEqual(codex.looks(), 2)
      assert.isFalse(rescanned!.available)
    })
  )

  it.effect("looks again for a provider that was not found, without a rescan", () =>
    Effect.gen(function* () {
      const claude = yield* fake("claude", { available: false, gated: false })
      const providers = yield* providersOver([claude])
      assert.isFalse((yield* providers.info("claude")).available)
      const looked = claude.looks()
      claude.setAvailable(true)
      assert.isTrue((yield* providers.info("claude")).available)
      assert.strictEqual(claude.looks(), looked + 1)
      yield* providers.info("claude")
      assert.strictEqual(claude.looks(), looked + 1, "found now, so kept")
    })
  )

  it.effect("refuses a code it has no adapter for, and the scripted agent unless enabled", () =>
    Effect.gen(function* () {
      const scripted = yield* fake("scripted", { available: true, gated: false })
      const hidden = yield* providersOver([scripted])
      const refused = yield* Effect.flip(hidden.info("scripted"))
      assert.strictEqual(refused.code, "PROVIDER_NOT_FOUND")
      assert.deepStrictEqual(yield* hidden.list(false), [])
      const enabled = yield* providersOver([scripted], true)
      assert.isTrue((yield* enabled.info("scripted")).available)
    })
  )
})
