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

/** What every step works with: the durable log, and the channel of each open session. */
interface Channels {
  readonly log: EventLog["Service"]
  readonly bySession: Map<SessionId, Channel>
}

const channelOf = (channels: Channels, sessionId: SessionId) =>
  Effect.suspend(() => {
    const channel = channels.bySession.get(sessionId)
    return channel
      ? Effect.succeed(channel)
      : Effect.fail(PedelecError.fromCode("SESSION_NOT_FOUND", "core", { details: { sessionId } }))
  })

const open = Effect.fn("SessionEvents.open")(function* (channels: Channels, sessionId: SessionId, lastSeq: number) {
  if (channels.bySession.has(sessionId)) return
  const pubsub = yield* PubSub.unbounded<SessionEvent>()
  channels.bySession.set(sessionId, { seq: lastSeq, buffer: [], pubsub, lock: Semaphore.makeUnsafe(1) })
})

const publish = Effect.fn("SessionEvents.publish")(function* (
  channels: Channels,
  sessionId: SessionId,
  body: EventBody
) {
  const channel = yield* channelOf(channels, sessionId)
  // One permit per session: seq order, log order and delivery order are the same order.
  return yield* channel.lock.withPermits(1)(
    Effect.gen(function* () {
      const at = yield* Clock.currentTimeMillis
      const event = { ...body, sessionId, seq: channel.seq + 1, at } as SessionEvent
      yield* channels.log.append(event)
      channel.seq = event.seq
      channel.buffer.push(event)
      if (channel.buffer.length > REPLAY_BUFFER_SIZE) channel.buffer.shift()
      yield* PubSub.publish(channel.pubsub, event)
      return event
    })
  )
})

/** The events after `afterSeq` up to `upTo`: from the buffer alone when it reaches back far enough, else log first. */
const replayFrom = Effect.fnUntraced(function* (
  channels: Channels,
  sessionId: SessionId,
  afterSeq: number,
  buffered: ReadonlyArray<SessionEvent>,
  upTo: number
) {
  const firstBuffered = buffered[0]?.seq ?? upTo + 1
  if (afterSeq + 1 >= firstBuffered) return buffered.filter((event) => event.seq > afterSeq)
  const logged = (yield* channels.log.readAfter(sessionId, afterSeq)).filter((event) => event.seq < firstBuffered)
  const replay = [...logged, ...buffered]
  const contiguous = replay.every((event, index) => event.seq === afterSeq + 1 + index)
  if (!contiguous || (replay.at(-1)?.seq ?? afterSeq) !== upTo) {
    return yield* Effect.fail(
      PedelecError.fromCode("EVENT_REPLAY_GAP", "core", { details: { sessionId, afterSeq, lastSeq: upTo } })
    )
  }
  return replay
})

const subscribe = (
  channels: Channels,
  sessionId: SessionId,
  afterSeq: number
): Stream.Stream<SessionEvent, PedelecError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const channel = yield* channelOf(channels, sessionId)
      // Subscribe before reading the buffer: an event published in between is then in both, and the
      // `seq > upTo` filter drops the live copy, so nothing is lost and nothing is doubled.
      const subscription = yield* PubSub.subscribe(channel.pubsub)
      const upTo = channel.seq
      const replay = yield* replayFrom(channels, sessionId, afterSeq, channel.buffer.slice(), upTo)
      const live = Stream.fromSubscription(subscription).pipe(Stream.filter((event) => event.seq > upTo))
      return Stream.concat(Stream.fromIterable(replay), live).pipe(Stream.takeUntil((event) => event.type === "ended"))
    })
  )

const lastSeq = Effect.fn("SessionEvents.lastSeq")(function* (channels: Channels, sessionId: SessionId) {
  return (yield* channelOf(channels, sessionId)).seq
})

const close = Effect.fn("SessionEvents.close")(function* (channels: Channels, sessionId: SessionId) {
  const channel = channels.bySession.get(sessionId)
  if (!channel) return
  channels.bySession.delete(sessionId)
  yield* PubSub.shutdown(channel.pubsub)
})

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
      const channels: Channels = { log: yield* EventLog, bySession: new Map() }
      return SessionEvents.of({
        open: (sessionId, lastSeq) => open(channels, sessionId, lastSeq),
        publish: (sessionId, body) => publish(channels, sessionId, body),
        subscribe: (sessionId, afterSeq) => subscribe(channels, sessionId, afterSeq),
        lastSeq: (sessionId) => lastSeq(channels, sessionId),
        close: (sessionId) => close(channels, sessionId)
      })
    })
  )
}
