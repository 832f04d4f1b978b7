/**
 * IdleExit — for a Core started on demand (by the native host): after 10 minutes without any live session, the
 * process stops itself the normal way (SIGTERM), so every finalizer runs. It does not decide what a session is.
 */
import { Sessions } from "@pedelec/core/Sessions"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const IDLE_EXIT_MS = 10 * 60_000

export class IdleExit extends Context.Service<IdleExit, { readonly idleMs: number }>()("pedelec/desktop/IdleExit") {
  static readonly layerWith = (idleMs: number) =>
    Layer.effect(
      IdleExit,
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const check = Math.max(100, Math.min(30_000, Math.floor(idleMs / 10)))
        let idleSince = Date.now()
        yield* Effect.gen(function* () {
          while (true) {
            yield* Effect.sleep(check)
            const live = yield* sessions.list(undefined)
            if (live.length > 0) idleSince = Date.now()
            else if (Date.now() - idleSince >= idleMs) process.kill(process.pid, "SIGTERM")
          }
        }).pipe(Effect.forkScoped)
        return IdleExit.of({ idleMs })
      })
    )

  static readonly layer = IdleExit.layerWith(Number(process.env.PEDELEC_IDLE_EXIT_MS) || IDLE_EXIT_MS)
}
