/**
 * SessionEvents — the per-session event stream: gives each event the session's next `seq`, keeps a bounded replay
 * buffer, appends to the durable log, and fans events out to subscribers. A subscriber asking for events after a
 * `seq` gets exactly the missing ones (buffer, then log), then live ones, never a duplicate; past both it gets
 * `EVENT_REPLAY_GAP`. It does not decide what happens in a session (Sessions) or who may subscribe (the IPC roles).
 */

import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { EventLog } from "./EventLog.ts"

/** An event as its producer describes it; SessionEvents stamps `sessionId`, `seq` and `at`. */
export type EventBody = SessionEvent extends infer E
  ? E extends SessionEvent
    ? Omit<E, "sessionId" | "seq" | "at">
    : never
  : never

/** Events kept in memory per session for fast replay; older ones come from the log. */
export const REPLAY_BUFFER_SIZE = 512

interface Channel {
  seq: number
  readonly buffer: Array<SessionEvent>
  readonly pubsub: PubSub.PubSub<SessionEvent>
  readonly lock: Semaphore.Semaphore
}

export class SessionEvents extends Context.Service<
  SessionEvents,
  {
    /** Starts (or continues, after a restart) a session's numbering after `lastSeq`. Idempotent. */
    readonly open: (sessionId: SessionId, lastSeq: number) => Effect.Effect<void>
    readonly publish: (sessionId: SessionId, body: EventBody) => Effect.Effect<SessionEvent, PedelecError>
    /** Events with `seq > afterSeq`, then live ones; ends after `ended`. */
    readonly subscribe: (sessionId: SessionId, afterSeq: number) => Stream.Stream<SessionEvent, PedelecError>
    readonly lastSeq: (sessionId: SessionId) => Effect.Effect<number, PedelecError>
    /** Forgets a session's in-memory stream; its log stays readable. */
    readonly close: (sessionId: SessionId) => Effect.Effect<void>
  }
>()("pedelec/core/SessionEvents") {
  static readonly layer = Layer.effect(
    SessionEvents,
    Effect.gen(function* () {
      const log = yield* EventLog
      const channels = new Map<SessionId, Channel>()

      const channelOf = (sessionId: SessionId) =>
        Effect.suspend(() => {
          const channel = channels.get(sessionId)
          return channel
            ? Effect.succeed(channel)
            : Effect.fail(PedelecError.fromCode("SESSION_NOT_FOUND", "core", { details: { sessionId } }))
        })

      const open = Effect.fn("SessionEvents.open")(function* (sessionId: SessionId, lastSeq: number) {
        if (channels.has(sessionId)) return
        const pubsub = yield* PubSub.unbounded<SessionEvent>()
        channels.set(sessionId, { seq: lastSeq, buffer: [], pubsub, lock: Semaphore.makeUnsafe(1) })
      })

      const publish = Effect.fn("SessionEvents.publish")(function* (sessionId: SessionId, body: EventBody) {
        const channel = yield* channelOf(sessionId)
        // One permit per session: seq order, log order and delivery order are the same order.
        return yield* channel.lock.withPermits(1)(
          Effect.gen(function* () {
            const at = yield* Clock.currentTimeMillis
            const event = { ...body, sessionId, seq: channel.seq + 1, at } as SessionEvent
            yield* log.append(event)
            channel.seq = event.seq
            channel.buffer.push(event)
            if (channel.buffer.length > REPLAY_BUFFER_SIZE) channel.buffer.shift()
            yield* PubSub.publish(channel.pubsub, event)
            return event
          })
        )
      })

      const replayFrom = Effect.fnUntraced(function* (
        sessionId: SessionId,
        afterSeq: number,
        buffered: ReadonlyArray<SessionEvent>,
        upTo: number
      ) {
        const firstBuffered = buffered[0]?.seq ?? upTo + 1
        if (afterSeq + 1 >= firstBuffered) return buffered.filter((event) => event.seq > afterSeq)
        const logged = (yield* log.readAfter(sessionId, afterSeq)).filter((event) => event.seq < firstBuffered)
        const replay = [...logged, ...buffered]
        const contiguous = replay.every((event, index) => event.seq === afterSeq + 1 + index)
        if (!contiguous || (replay.at(-1)?.seq ?? afterSeq) !== upTo) {
          return yield* Effect.fail(
            PedelecError.fromCode("EVENT_REPLAY_GAP", "core", { details: { sessionId, afterSeq, lastSeq: upTo } })
          )
        }
        return replay
      })

      const subscribe = (sessionId: SessionId, afterSeq: number): Stream.Stream<SessionEvent, PedelecError> =>
        Stream.unwrap(
          Effect.gen(function* () {
            const channel = yield* channelOf(sessionId)
            // Subscribe before reading the buffer: an event published in between is then in both, and the
            // `seq > upTo` filter drops the live copy, so nothing is lost and nothing is doubled.
            const subscription = yield* PubSub.subscribe(channel.pubsub)
            const upTo = channel.seq
            const replay = yield* replayFrom(sessionId, afterSeq, channel.buffer.slice(), upTo)
            const live = Stream.fromSubscription(subscription).pipe(Stream.filter((event) => event.seq > upTo))
            return Stream.concat(Stream.fromIterable(replay), live).pipe(
              Stream.takeUntil((event) => event.type === "ended")
            )
          })
        )

      const lastSeq = Effect.fn("SessionEvents.lastSeq")(function* (sessionId: SessionId) {
        return (yield* channelOf(sessionId)).seq
      })

      const close = Effect.fn("SessionEvents.close")(function* (sessionId: SessionId) {
        const channel = channels.get(sessionId)
        if (!channel) return
        channels.delete(sessionId)
        yield* PubSub.shutdown(channel.pubsub)
      })

      return SessionEvents.of({ open, publish, subscribe, lastSeq, close })
    })
  )
}
