// SecretScrubber on a real SettingsStore in a temp home, on TestClock: a key set in secrets.json is hidden once the
// 1 s read has expired (not before: a burst of events costs one read), a replaced key stays hidden, and scrubDeep
// hands back the very object when nothing in it needed scrubbing (the per-event path copies nothing) and copies,
// never mutates, when something did.
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import { CorePaths } from "../src/CorePaths.ts"
import { HIDDEN, SecretScrubber, scrubDeep } from "../src/SecretScrubber.ts"
import { SettingsStore } from "../src/SettingsStore.ts"

const withScrubber = <A, E>(
  body: Effect.Effect<A, E, SecretScrubber | SettingsStore>,
  store: typeof SettingsStore.layer = SettingsStore.layer
) =>
  Effect.gen(function* () {
    const home = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-scrubber-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const layer = SecretScrubber.layer.pipe(
      Layer.provideMerge(store),
      Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer))
    )
    return yield* body.pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

const KEY = "sk-live-0123456789abcdef"
const NEXT_KEY = "sk-live-fedcba9876543210"

describe("SecretScrubber", () => {
  it.effect("hides a key from secrets.json after the read expires, and a replaced key still", () =>
    withScrubber(
      Effect.gen(function* () {
        const scrubber = yield* SecretScrubber
        const settings = yield* SettingsStore
        const event = { type: "error", error: { message: `upstream refused ${KEY}` } }
        // The first scrub reads secrets.json (none yet); the key set now is unknown until the read expires.
        assert.strictEqual(yield* scrubber.scrub(event), event)
        yield* settings.setSecret("ollamaApiKey", KEY)
        yield* TestClock.adjust(500)
        assert.strictEqual(yield* scrubber.scrub(event), event)
        yield* TestClock.adjust(600)
        assert.deepStrictEqual(yield* scrubber.scrub(event), {
          type: "error",
          error: { message: `upstream refused ${HIDDEN}` }
        })
        yield* settings.setSecret("ollamaApiKey", NEXT_KEY)
        yield* TestClock.adjust(1_100)
        const both = yield* scrubber.scrub([`${KEY} then ${NEXT_KEY}`])
        assert.deepStrictEqual(both, [`${HIDDEN} then ${HIDDEN}`])
      })
    )
  )

  it.effect("reads secrets.json again only when it changed, however often the second runs out", () =>
    Effect.gen(function* () {
      let reads = 0
      // The real store, with its reads counted: the scrubber's looks must not turn into reads.
      const counted = Layer.effect(
        SettingsStore,
        Effect.gen(function* () {
          const store = yield* SettingsStore
          return SettingsStore.of({
            ...store,
            getSecrets: Effect.andThen(
              Effect.sync(() => reads++),
              store.getSecrets
            )
          })
        })
      ).pipe(Layer.provide(SettingsStore.layer))
      yield* withScrubber(
        Effect.gen(function* () {
          const scrubber = yield* SecretScrubber
          const settings = yield* SettingsStore
          const event = { text: `upstream refused ${KEY}` }
          yield* settings.setSecret("ollamaApiKey", KEY)
          assert.deepStrictEqual(yield* scrubber.scrub(event), { text: `upstream refused ${HIDDEN}` })
          for (let second = 0; second < 5; second++) {
            yield* TestClock.adjust(1_100)
            yield* scrubber.scrub(event)
          }
          assert.strictEqual(reads, 1)
          yield* settings.setSecret("ollamaApiKey", NEXT_KEY)
          yield* TestClock.adjust(1_100)
          assert.deepStrictEqual(yield* scrubber.scrub([NEXT_KEY]), [HIDDEN])
          assert.strictEqual(reads, 2)
        }),
        counted
      )
    })
  )

  it("scrubDeep returns the same tree when nothing needs it, and a copy (input untouched) when something does", () => {
    const values = new Set([KEY])
    const clean = { type: "tool_result", outcome: { ok: true, result: { items: ["a", 1, null, { b: true }] } } }
    assert.strictEqual(scrubDeep(clean, values), clean)
    const dirty = { type: "chat", list: ["fine", `key ${KEY}`, { note: "Bearer abc.def" }], kept: { n: 1 } }
    const scrubbed = scrubDeep(dirty, values)
    assert.deepStrictEqual(scrubbed, {
      type: "chat",
      list: ["fine", `key ${HIDDEN}`, { note: `Bearer ${HIDDEN}` }],
      kept: { n: 1 }
    })
    assert.strictEqual(scrubbed.kept, dirty.kept)
    assert.deepStrictEqual(dirty.list, ["fine", `key ${KEY}`, { note: "Bearer abc.def" }])
  })
})
