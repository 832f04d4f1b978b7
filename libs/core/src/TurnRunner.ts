/**
 * TurnRunner — runs one turn on a session process: sends the prompt, turns the provider's events into session
 * events (chat, chat deltas; hidden for prepare turns), records the provider's session id, and watches for stalls
 * (a clock that stops while a tool call is with the page). It returns how the turn ended; it does not publish the
 * completion or change the status (Sessions does), and cancelling a turn is interrupting this effect.
 *
 * Deltas are coalesced by natural batching, never by a timer: the provider's events are read ahead into a bounded
 * buffer, and the deltas that came in one read of the CLI's output or queued up while the previous event was being
 * published go out as one `chat_delta`. A lone delta waits for nothing; a burst costs one seq, one log line and one
 * frame per batch instead of per delta (2,000 deltas of 100 B reached the page at 0.22× the raw burst when each was
 * its own event, 0.85–1.15× in 38 events when only what queued was merged, 1.8–2.6× in 4 since a read's lines
 * arrive together: providers' TurnProcess).
 */
import type { SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import type { TurnKind } from "@pedelec/contracts/Session"
import type { SessionProcess, TurnInput } from "@pedelec/providers/Provider"
import type * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { CoreConfig } from "./CoreConfig.ts"
import type { ToolActivity } from "./Session.ts"
import { type EventBody, SessionEvents } from "./SessionEvents.ts"

export interface TurnJob {
  readonly sessionId: SessionId
  readonly turnId: TurnId
  readonly kind: TurnKind
  readonly provider: ProviderCode
  readonly input: TurnInput
  readonly process: SessionProcess
  /** Whether a call is with the page: the stall clock does not run while one is. */
  readonly toolActivity: SubscriptionRef.SubscriptionRef<ToolActivity>
  readonly onProviderSession: (providerSessionId: string) => Effect.Effect<void>
}

export type TurnOutcome =
  | { readonly reason: "completed"; readonly text: string }
  | { readonly reason: "failed"; readonly error: PedelecError }

/** What one turn has seen so far. */
interface Progress {
  lastEventAt: number
  lastMessage: string
  /** Deltas since the last whole message. */
  streamed: string
  ended: TurnOutcome | undefined
}

type Publish = (body: EventBody) => Effect.Effect<void, PedelecError>

/** Provider events read ahead of publishing; past it the CLI's stdout backs up, as it would without the buffer. */
const READ_AHEAD = 1_024
/** A coalesced delta stays far below the 1 MiB frame every hop to the page allows (3 UTF-8 bytes per char at most). */
export const MAX_COALESCED_DELTA_CHARS = 64 * 1024

/** Consecutive deltas in one batch become one, up to the cap; every other event keeps its place. */
export const coalesceDeltas = (
  events: Arr.NonEmptyReadonlyArray<ProviderEvent>
): Arr.NonEmptyReadonlyArray<ProviderEvent> => {
  const out: Array<ProviderEvent> = []
  for (const event of events) {
    const last = out.at(-1)
    if (
      event.type === "delta" &&
      last?.type === "delta" &&
      last.text.length + event.text.length <= MAX_COALESCED_DELTA_CHARS
    ) {
      out[out.length - 1] = { type: "delta", text: last.text + event.text }
    } else out.push(event)
  }
  return out as unknown as Arr.NonEmptyReadonlyArray<ProviderEvent>
}

const handleEvent = Effect.fnUntraced(function* (
  job: TurnJob,
  progress: Progress,
  publish: Publish,
  event: ProviderEvent
) {
  progress.lastEventAt = yield* Clock.currentTimeMillis
  switch (event.type) {
    case "session":
      return yield* job.onProviderSession(event.providerSessionId)
    case "delta":
      progress.streamed += event.text
      return yield* publish({ type: "chat_delta", turnId: job.turnId, delta: event.text })
    case "message":
      // A provider that does not stream still gives one delta per message, so a UI may use deltas alone.
      if (progress.streamed.length === 0) yield* publish({ type: "chat_delta", turnId: job.turnId, delta: event.text })
      progress.streamed = ""
      progress.lastMessage = event.text
      return yield* publish({ type: "chat", turnId: job.turnId, text: event.text })
    case "completed":
      // Deltas with no closing message still make one complete message.
      if (progress.streamed.length > 0) {
        progress.lastMessage = progress.streamed
        progress.streamed = ""
        yield* publish({ type: "chat", turnId: job.turnId, text: progress.lastMessage })
      }
      progress.ended = { reason: "completed", text: event.text ?? progress.lastMessage }
      return
    case "error": {
      const details = { provider: job.provider, ...event.details }
      const error = PedelecError.fromCode(event.code, "provider", { details, message: event.message })
      progress.ended = { reason: "failed", error }
      return
    }
    case "tool_activity":
    case "usage":
      return
  }
})

/** Fails `PROVIDER_STALLED` once the provider has been silent `stallTimeoutMs` with no call at the page. */
const watchStalls = (job: TurnJob, progress: Progress, stallTimeoutMs: number) =>
  Effect.gen(function* () {
    const tick = Math.max(50, Math.min(1_000, Math.floor(stallTimeoutMs / 4)))
    while (true) {
      yield* Effect.sleep(tick)
      const now = yield* Clock.currentTimeMillis
      const activity = yield* SubscriptionRef.get(job.toolActivity)
      const quietSince = Math.max(progress.lastEventAt, activity.changedAt)
      if (!activity.pending && now - quietSince >= stallTimeoutMs) {
        const details = { provider: job.provider, timeoutMs: stallTimeoutMs }
        return yield* Effect.fail(PedelecError.fromCode("PROVIDER_STALLED", "core", { details }))
      }
    }
  })

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
        const progress: Progress = {
          lastEventAt: yield* Clock.currentTimeMillis,
          lastMessage: "",
          streamed: "",
          ended: undefined
        }
        const publish: Publish = (body) =>
          job.kind === "user" ? events.publish(job.sessionId, body).pipe(Effect.asVoid) : Effect.void
        const consume = job.process.send(job.input).pipe(
          Stream.takeUntil((event) => event.type === "completed" || event.type === "error"),
          Stream.buffer({ capacity: READ_AHEAD }),
          Stream.mapArray(coalesceDeltas),
          Stream.runForEach((event) => handleEvent(job, progress, publish, event))
        )
        const result = yield* Effect.raceFirst(consume, watchStalls(job, progress, config.stallTimeoutMs)).pipe(
          Effect.result
        )
        if (result._tag === "Failure") return { reason: "failed", error: result.failure } satisfies TurnOutcome
        if (progress.ended) return progress.ended
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
