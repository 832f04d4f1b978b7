/**
 * IdleExit — for a Core started on demand (by the native host): after 10 minutes without any live session
 * (`PEDELEC_IDLE_EXIT_MS` for tests), the process stops itself the normal way (SIGTERM), so every finalizer runs.
 * It does not decide what a session is.
 */
import { Sessions } from "@pedelec/core/Sessions"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const IDLE_EXIT_MS = 10 * 60_000

export class IdleExit extends Context.Service<IdleExit, { readonly idleMs: number }>()("pedelec/core-daemon/IdleExit") {
  static readonly layerWith = (idleMs: number) =>
    Layer.effect(
      IdleExit,
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const check = Math.max(100, Math.min(30_000, Math.floor(idleMs / 10)))
        let idleSince = yield* Clock.currentTimeMillis
        yield* Effect.gen(function* () {
          while (true) {
            yield* Effect.sleep(check)
            const live = yield* sessions.list(undefined)
            const now = yield* Clock.currentTimeMillis
            if (live.length > 0) idleSince = now
            else if (now - idleSince >= idleMs) process.kill(process.pid, "SIGTERM")
          }
        }).pipe(Effect.forkScoped)
        return IdleExit.of({ idleMs })
      })
    )

  /** Read when the layer is built, not when this module loads. */
  static readonly layer = Layer.unwrap(
    Effect.map(Config.Int("PEDELEC_IDLE_EXIT_MS").pipe(Config.withDefault(IDLE_EXIT_MS)), IdleExit.layerWith)
  )
}
