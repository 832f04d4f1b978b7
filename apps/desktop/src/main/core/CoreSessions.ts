/**
 * CoreSessions — what the tray needs from Core: every origin's live sessions, and ending one, over the bridge's
 * desktop-role connection (ToCore), which finds the Core through CoreAccess and connects again after Core went away.
 * A failure of the connection itself drops it and reads CORE_RUNTIME_UNAVAILABLE, so the next question starts
 * afresh. What the tray shows is TrayView's; the renderer's own questions go through the bridge, not here.
 */

import type { DesktopSession } from "@pedelec/contracts/Desktop"
import type { SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { DesktopClient } from "@pedelec/core-client/CoreClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { coreUnavailable, ToCore } from "../../bridge/ToCore.ts"

export interface CoreSessionsShape {
  readonly list: Effect.Effect<ReadonlyArray<DesktopSession>, PedelecError>
  /** Ends one session of any origin; one that already ended counts as ended. */
  readonly end: (sessionId: SessionId) => Effect.Effect<void, PedelecError>
}

const ask = <A>(core: ToCore["Service"], question: (client: DesktopClient) => Effect.Effect<A, unknown>) =>
  Effect.gen(function* () {
    const client = yield* core.client
    return yield* question(client).pipe(
      Effect.catch((error) =>
        error instanceof PedelecError && error.code !== "UNAUTHORIZED"
          ? Effect.fail(error)
          : core.drop(client).pipe(Effect.andThen(Effect.fail(coreUnavailable(`Core stopped answering (${error})`))))
      )
    )
  })

export class CoreSessions extends Context.Service<CoreSessions, CoreSessionsShape>()("pedelec/desktop/CoreSessions") {
  static readonly layer = Layer.effect(
    CoreSessions,
    Effect.gen(function* () {
      const core = yield* ToCore
      return CoreSessions.of({
        list: ask(core, (client) => client["desktop.session.list"]()).pipe(Effect.withSpan("CoreSessions.list")),
        end: (sessionId) =>
          ask(core, (client) => client["desktop.session.end"]({ sessionId })).pipe(
            Effect.catchIf(
              (error) => error.code === "SESSION_NOT_FOUND",
              () => Effect.void
            ),
            Effect.withSpan("CoreSessions.end")
          )
      })
    })
  )

  static readonly layerTest = (sessions: TestSessions) => Layer.succeed(CoreSessions, sessions)
}

/** A Core's live sessions as a test sets them, or the error every question fails with (Core unreachable). */
export interface TestSessions extends CoreSessionsShape {
  live: Array<DesktopSession>
  failure: PedelecError | undefined
  readonly ended: Array<SessionId>
}

export const makeTestSessions = (live: Array<DesktopSession> = []): TestSessions => {
  const sessions: TestSessions = {
    live,
    failure: undefined,
    ended: [],
    list: Effect.suspend(() => (sessions.failure ? Effect.fail(sessions.failure) : Effect.succeed([...sessions.live]))),
    end: (sessionId) =>
      Effect.suspend(() => {
        if (sessions.failure) return Effect.fail(sessions.failure)
        sessions.ended.push(sessionId)
        sessions.live = sessions.live.filter((session) => session.sessionId !== sessionId)
        return Effect.void
      })
  }
  return sessions
}
