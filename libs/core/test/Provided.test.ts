// Provided's `providing`: the picked services reach the effect over the caller's own context, as Effect.provide
// gives them: a picked service wins over the caller's of the same key, the caller's others stay visible, and the
// caller's context is left as it was for what runs after.
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { providing } from "../src/Provided.ts"

class Name extends Context.Service<Name, string>()("test/Name") {}
class Count extends Context.Service<Count, number>()("test/Count") {}

describe("providing", () => {
  it.effect("adds the picked services over the caller's, the picked winning", () =>
    Effect.gen(function* () {
      const provided = providing(Context.make(Name, "picked"))
      const seen = yield* provided(Effect.all([Effect.service(Name), Effect.service(Count)]))
      assert.deepStrictEqual(seen, ["picked", 7])
      assert.strictEqual(yield* Effect.service(Name), "caller's")
    }).pipe(Effect.provideService(Name, "caller's"), Effect.provideService(Count, 7))
  )

  it.effect("gives every picked service, many times over, without growing the caller's context", () =>
    Effect.gen(function* () {
      const provided = providing(Context.make(Name, "picked").pipe(Context.add(Count, 3)))
      for (let i = 0; i < 100; i++)
        assert.deepStrictEqual(yield* provided(Effect.all([Effect.service(Name), Effect.service(Count)])), [
          "picked",
          3
        ])
      const outer = yield* Effect.context<never>()
      assert.isFalse(outer.mapUnsafe.has(Name.key))
    })
  )
})
