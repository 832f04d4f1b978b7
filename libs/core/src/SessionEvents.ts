/**
 * SessionEvents — the per-session event stream: gives each event the session's next `seq`, keeps a bounded replay
 * buffer, appends to the durable log, and fans events out to subscribers. A subscriber asking for events after a
 * `seq` gets exactly the missing ones (buffer, then log), then live ones, never a duplicate; past both it gets
 * `EVENT_REPLAY_GAP`. Beside each session's stream, one all-sessions stream for onlookers (the desktop role): every
 * event of every session and each session that goes live, holding nothing of any session. It does not decide what
 * happens in a session (Sessions) or who may subscribe (the IPC roles).
 */

import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { EventLog } from "./EventLog.ts"
import { SecretScrubber } from "./SecretScrubber.ts"

/** An event as its producer describes it; SessionEvents stamps `sessionId`, `seq` and `at`. */
export type EventBody = SessionEvent extends infer E
  ? E extends SessionEvent
    ? Omit<E, "sessionId" | "seq" | "at">
    : never
  : never

/** Events kept in memory per session for fast replay; older ones come from the log. */
export const REPLAY_BUFFER_SIZE = 512
/**
 * The buffer is cut back to REPLAY_BUFFER_SIZE once it holds this many more: a cut moves every event kept (4 µs at
 * 512), so cutting one per publish cost each event that much, and every 64th now.
 */
const TRIM_SLACK = 64

interface Channel {
  seq: number
  readonly buffer: Array<SessionEvent>
  readonly pubsub: PubSub.PubSub<SessionEvent>
  readonly lock: Semaphore.Semaphore
}

/** What the all-sessions stream carries: an event as it is published, or a session that just went live. */
export type Notice =
  | { readonly kind: "event"; readonly event: SessionEvent }
  | { readonly kind: "opened"; readonly sessionId: SessionId }

/** What every step works with: the durable log, the channel of each open session, and the all-sessions stream. */
interface Channels {
  readonly log: EventLog["Service"]
  /** Takes secrets out of every event before it is numbered: the log and every subscriber see the same text. */
  readonly scrub: <A>(value: A) => Effect.Effect<A>
  readonly bySession: Map<SessionId, Channel>
  readonly all: PubSub.PubSub<Notice>
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

// Untraced: it runs for every event (four per tool call), and a span costs more than the rest of it (~14 us).
const publishAll = Effect.fnUntraced(function* (
  channels: Channels,
  sessionId: SessionId,
  bodies: ReadonlyArray<EventBody>
) {
  const channel = yield* channelOf(channels, sessionId)
  // One permit per session: seq order, log order and delivery order are the same order.
  return yield* channel.lock.withPermits(1)(
    Effect.gen(function* () {
      const at = yield* Clock.currentTimeMillis
      const events: Array<SessionEvent> = []
      for (const body of bodies) {
        events.push({
          ...(yield* channels.scrub(body)),
          sessionId,
          seq: channel.seq + events.length + 1,
          at
        } as SessionEvent)
      }
      const logged = yield* Effect.result(channels.log.append(events))
      // Delivered even when the disk refused them: live subscribers must still hear how a turn ended (a later
      // replay from the log finds the hole and says EVENT_REPLAY_GAP). The caller learns of the failure all the same.
      channel.seq += events.length
      channel.buffer.push(...events)
      const over = channel.buffer.length - REPLAY_BUFFER_SIZE
      if (over >= TRIM_SLACK) channel.buffer.splice(0, over)
      // Offered together, so a subscriber takes them as one chunk: one write to each client instead of one per event.
      yield* PubSub.publishAll(channel.pubsub, events)
      yield* PubSub.publishAll(
        channels.all,
        events.map((event): Notice => ({ kind: "event", event }))
      )
      if (logged._tag === "Failure") return yield* Effect.fail(logged.failure)
      return events
    })
  )
})

const publish = (channels: Channels, sessionId: SessionId, body: EventBody) =>
  Effect.map(publishAll(channels, sessionId, [body]), (events) => events[0]!)

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

/** Up to `limit` logged events after `afterSeq`; a session neither open nor logged is `SESSION_NOT_FOUND`. */
const history = Effect.fn("SessionEvents.history")(function* (
  channels: Channels,
  sessionId: SessionId,
  afterSeq: number,
  limit: number
) {
  const logged = yield* channels.log.readAfter(sessionId, afterSeq)
  const known = logged.length > 0 || channels.bySession.has(sessionId) || (yield* channels.log.exists(sessionId))
  if (!known) {
    return yield* Effect.fail(PedelecError.fromCode("SESSION_NOT_FOUND", "core", { details: { sessionId } }))
  }
  return { events: logged.slice(0, limit), more: logged.length > limit }
})

const lastSeq = Effect.fn("SessionEvents.lastSeq")(function* (channels: Channels, sessionId: SessionId) {
  return (yield* channelOf(channels, sessionId)).seq
})

const close = Effect.fn("SessionEvents.close")(function* (channels: Channels, sessionId: SessionId) {
  const channel = channels.bySession.get(sessionId)
  if (!channel) return
  channels.bySession.delete(sessionId)
  // Subscribers stop at `ended` on their own; shutting down now would drop an `ended` one has not taken yet.
  if (channel.buffer.at(-1)?.type !== "ended") yield* PubSub.shutdown(channel.pubsub)
})

export class SessionEvents extends Context.Service<
  SessionEvents,
  {
    /** Starts (or continues, after a restart) a session's numbering after `lastSeq`. Idempotent. */
    readonly open: (sessionId: SessionId, lastSeq: number) => Effect.Effect<void>
    /**
     * Numbers, logs and delivers the event. A log write that fails still delivers it in memory, then fails with the
     * storage code (STORAGE_FULL / STORAGE_UNAVAILABLE), so a turn can end `failed` with an error subscribers see.
     */
    readonly publish: (sessionId: SessionId, body: EventBody) => Effect.Effect<SessionEvent, PedelecError>
    /** Several events as `publish` does each, in order, delivered together (one chunk to a subscriber that waits). */
    readonly publishAll: (
      sessionId: SessionId,
      bodies: ReadonlyArray<EventBody>
    ) => Effect.Effect<ReadonlyArray<SessionEvent>, PedelecError>
    /** Events with `seq > afterSeq`, then live ones; ends after `ended`. */
    readonly subscribe: (sessionId: SessionId, afterSeq: number) => Stream.Stream<SessionEvent, PedelecError>
    readonly lastSeq: (sessionId: SessionId) => Effect.Effect<number, PedelecError>
    /** Forgets a session's in-memory stream; its log stays readable. */
    readonly close: (sessionId: SessionId) => Effect.Effect<void>
    /** Tells onlookers a session went live (Sessions, once the session can be looked up). */
    readonly announce: (sessionId: SessionId) => Effect.Effect<void>
    /** Every session's notices from now on, in publish order; holds no session's lease. Subscribed when run. */
    readonly watchAll: Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope>
    /** When the session's last buffered event was published, if it has one since this Core started. */
    readonly lastEventAt: (sessionId: SessionId) => number | undefined
    /** From the durable log alone, so also for ended sessions; `more` when events past `limit` remain. */
    readonly history: (
      sessionId: SessionId,
      afterSeq: number,
      limit: number
    ) => Effect.Effect<{ readonly events: ReadonlyArray<SessionEvent>; readonly more: boolean }, PedelecError>
  }
>()("pedelec/core/SessionEvents") {
  static readonly layer = Layer.effect(
    SessionEvents,
    Effect.gen(function* () {
      // Optional for the unit tests that build this layer alone; CoreLayer always provides it.
      const scrubber = yield* Effect.serviceOption(SecretScrubber)
      const channels: Channels = {
        log: yield* EventLog,
        scrub: scrubber._tag === "Some" ? scrubber.value.scrub : Effect.succeed,
        bySession: new Map(),
        all: yield* PubSub.unbounded<Notice>()
      }
      return SessionEvents.of({
        open: (sessionId, lastSeq) => open(channels, sessionId, lastSeq),
        publish: (sessionId, body) => publish(channels, sessionId, body),
        publishAll: (sessionId, bodies) => publishAll(channels, sessionId, bodies),
        subscribe: (sessionId, afterSeq) => subscribe(channels, sessionId, afterSeq),
        lastSeq: (sessionId) => lastSeq(channels, sessionId),
        close: (sessionId) => close(channels, sessionId),
        announce: (sessionId) => PubSub.publish(channels.all, { kind: "opened", sessionId }).pipe(Effect.asVoid),
        watchAll: Effect.map(PubSub.subscribe(channels.all), Stream.fromSubscription),
        lastEventAt: (sessionId) => channels.bySession.get(sessionId)?.buffer.at(-1)?.at,
        history: (sessionId, afterSeq, limit) => history(channels, sessionId, afterSeq, limit)
      })
    })
  )
}
