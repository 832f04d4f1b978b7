/**
 * TurnRunner — runs one turn on a session process: sends the prompt, turns the provider's events into session
 * events (chat, chat deltas; hidden for prepare turns), records the provider's session id, and watches for stalls
 * (a clock that stops while a tool call is with the page). It returns how the turn ended; it does not publish the
 * completion or change the status (Sessions does), and cancelling a turn is interrupting this effect.
 */
import type { SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import type { TurnKind } from "@pedelec/contracts/Session"
import type { SessionProcess, TurnInput } from "@pedelec/providers/Provider"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { CoreConfig } from "./CoreConfig.ts"
import { SessionEvents } from "./SessionEvents.ts"

/** Whether a tool call is with the page, and since when: the stall clock runs only while none is. */
export interface ToolActivity {
  readonly pending: boolean
  readonly changedAt: number
}

export interface TurnJob {
  readonly sessionId: SessionId
  readonly turnId: TurnId
  readonly kind: TurnKind
  readonly provider: ProviderCode
  readonly input: TurnInput
  readonly process: SessionProcess
  readonly toolActivity: () => ToolActivity
  readonly onProviderSession: (providerSessionId: string) => Effect.Effect<void>
}

export type TurnOutcome =
  | { readonly reason: "completed"; readonly text: string }
  | { readonly reason: "failed"; readonly error: PedelecError }

export class TurnRunner extends Context.Service<
  TurnRunner,
  { readonly run: (job: TurnJob) => Effect.Effect<TurnOutcome> }
>()("pedelec/core/TurnRunner") {
  static readonly layer = Layer.effect(
    TurnRunner,
    Effect.gen(function* () {
      const events = yield* SessionEvents
      const config = yield* CoreConfig

      const run = Effect.fn("TurnRunner.run")(function* (job: TurnJob) {
        const visible = job.kind === "user"
        let lastEventAt = yield* Clock.currentTimeMillis
        let lastMessage = ""
        let streamed = ""
        let ended: TurnOutcome | undefined

        const publish = (body: Parameters<typeof events.publish>[1]) =>
          visible ? events.publish(job.sessionId, body).pipe(Effect.asVoid) : Effect.void

        const handle = (event: ProviderEvent) =>
          Effect.gen(function* () {
            lastEventAt = yield* Clock.currentTimeMillis
            switch (event.type) {
              case "session":
                return yield* job.onProviderSession(event.providerSessionId)
              case "delta":
                streamed += event.text
                return yield* publish({ type: "chat_delta", turnId: job.turnId, delta: event.text })
              case "message":
                // A provider that does not stream still gives one delta per message, so a UI may use deltas alone.
                if (streamed.length === 0) {
                  yield* publish({ type: "chat_delta", turnId: job.turnId, delta: event.text })
                }
                streamed = ""
                lastMessage = event.text
                return yield* publish({ type: "chat", turnId: job.turnId, text: event.text })
              case "completed":
                // Deltas with no closing message still make one complete message.
                if (streamed.length > 0) {
                  lastMessage = streamed
                  streamed = ""
                  yield* publish({ type: "chat", turnId: job.turnId, text: lastMessage })
                }
                ended = { reason: "completed", text: event.text ?? lastMessage }
                return
              case "error": {
                const details = { provider: job.provider, ...event.details }
                const error = PedelecError.fromCode(event.code, "provider", { details, message: event.message })
                ended = { reason: "failed", error }
                return
              }
              case "tool_activity":
              case "usage":
                return
            }
          })

        const stalled = yield* Deferred.make<never, PedelecError>()
        const watchdog = Effect.gen(function* () {
          const tick = Math.max(50, Math.min(1_000, Math.floor(config.stallTimeoutMs / 4)))
          while (true) {
            yield* Effect.sleep(tick)
            const now = yield* Clock.currentTimeMillis
            const activity = job.toolActivity()
            const quietSince = Math.max(lastEventAt, activity.changedAt)
            if (!activity.pending && now - quietSince >= config.stallTimeoutMs) {
              const details = { provider: job.provider, timeoutMs: config.stallTimeoutMs }
              return yield* Deferred.fail(stalled, PedelecError.fromCode("PROVIDER_STALLED", "core", { details }))
            }
          }
        })

        const consume = job.process.send(job.input).pipe(
          Stream.takeUntil((event) => event.type === "completed" || event.type === "error"),
          Stream.runForEach(handle)
        )

        const result = yield* Effect.raceFirst(consume, Deferred.await(stalled)).pipe(
          Effect.raceFirst(watchdog.pipe(Effect.andThen(Effect.never))),
          Effect.result
        )
        if (result._tag === "Failure") return { reason: "failed", error: result.failure } satisfies TurnOutcome
        if (ended) return ended
        // The stream ended without saying how the turn ended: the CLI's output was incomplete.
        const error = PedelecError.fromCode("PROVIDER_OUTPUT_INVALID", "provider", {
          details: { provider: job.provider, reason: "the turn ended without a completion event" }
        })
        return { reason: "failed", error } satisfies TurnOutcome
      })

      return TurnRunner.of({ run })
    })
  )
}
