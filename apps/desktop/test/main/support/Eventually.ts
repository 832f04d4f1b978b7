// Waiting in real time for something a test cannot await directly (a file written, a process started or gone).
import * as Effect from "effect/Effect"

/** Real time passes (files written, processes started) until `check` holds; the test fails after `timeoutMs`. */
export const eventually = (check: () => boolean, what: string, timeoutMs = 10_000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited < timeoutMs; waited += 5) {
      if (check()) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })
