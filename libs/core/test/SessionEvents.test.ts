import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { TurnId } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { CorePaths } from "../src/CorePaths.ts"
import { EventLog } from "../src/EventLog.ts"
import { mintSessionId } from "../src/Mint.ts"
import { REPLAY_BUFFER_SIZE, SessionEvents } from "../src/SessionEvents.ts"

const turnId = "turn-0001" as TurnId

const withEvents = <A, E>(body: Effect.Effect<A, E, SessionEvents | EventLog>) =>
  Effect.gen(function* () {
    const home = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-events-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const layer = SessionEvents.layer.pipe(
      Layer.provideMerge(EventLog.layer),
      Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer))
    )
    return yield* body.pipe(Effect.provide(layer))
  })

const seqs = (events: ReadonlyArray<SessionEvent>) => events.map((event) => event.seq)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe("SessionEvents", () => {
  it.live("numbers events per session from 1, gap-free", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const a = mintSessionId()
        const b = mintSessionId()
        yield* events.open(a, 0)
        yield* events.open(b, 0)
        for (let i = 0; i < 3; i++) {
          yield* events.publish(a, { type: "chat_delta", turnId, delta: `a${i}` })
          yield* events.publish(b, { type: "chat_delta", turnId, delta: `b${i}` })
        }
        assert.strictEqual(yield* events.lastSeq(a), 3)
        assert.strictEqual(yield* events.lastSeq(b), 3)
      })
    )
  )

  it.live("replays exactly the missing events from the buffer, then from the log, then live", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        const total = REPLAY_BUFFER_SIZE + 200
        for (let i = 1; i <= total; i++) yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: `${i}` })
        for (const afterSeq of [0, 1, 150, total - REPLAY_BUFFER_SIZE - 1, total - 10, total]) {
          const replayed = yield* events
            .subscribe(sessionId, afterSeq)
            .pipe(Stream.take(total - afterSeq), Stream.runCollect)
          assert.deepStrictEqual(seqs(replayed), range(afterSeq + 1, total), `after ${afterSeq}`)
        }
      })
    )
  )

  it.live("a subscriber sees every event once, in order, while others publish concurrently", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        for (let i = 0; i < 50; i++) yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: "x" })
        const reader = yield* events
          .subscribe(sessionId, 20)
          .pipe(Stream.take(480), Stream.runCollect, Effect.forkChild)
        yield* Effect.forEach(
          range(1, 450),
          (i) => events.publish(sessionId, { type: "chat_delta", turnId, delta: `${i}` }),
          { concurrency: 8, discard: true }
        )
        assert.deepStrictEqual(seqs(yield* Fiber.join(reader)), range(21, 500))
      })
    )
  )

  it.live("events published together reach a waiting subscriber as one chunk, numbered and logged in order", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const log = yield* EventLog
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        const chunks: Array<ReadonlyArray<string>> = []
        const reader = yield* events.subscribe(sessionId, 0).pipe(
          Stream.runForEachArray((chunk) => Effect.sync(() => void chunks.push(chunk.map((e) => e.type)))),
          Effect.forkChild
        )
        yield* Effect.sleep(10)
        yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: "a" })
        yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: "b" })
        const together = yield* events.publishAll(sessionId, [
          { type: "status_changed", status: "waiting_tool_result", previous: "running" },
          { type: "chat", turnId, text: "ab" },
          { type: "ended", reason: "requested" }
        ])
        yield* Fiber.join(reader)
        assert.deepStrictEqual(seqs(together), [3, 4, 5])
        // One by one, each is its own chunk: a subscriber writes each to its client alone.
        assert.deepStrictEqual(chunks, [["chat_delta"], ["chat_delta"], ["status_changed", "chat", "ended"]])
        assert.deepStrictEqual(seqs(yield* log.readAfter(sessionId, 0)), range(1, 5))
      })
    )
  )

  it.live("a subscription ends after the ended event", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        yield* events.publish(sessionId, { type: "chat", turnId, text: "bye" })
        yield* events.publish(sessionId, { type: "ended", reason: "requested" })
        const all = yield* events.subscribe(sessionId, 0).pipe(Stream.runCollect)
        assert.deepStrictEqual(
          all.map((e) => e.type),
          ["chat", "ended"]
        )
      })
    )
  )

  it.live("asking for events the log no longer has is EVENT_REPLAY_GAP", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const log = yield* EventLog
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        const total = REPLAY_BUFFER_SIZE + 100 // past the buffer and the slack it is cut back by
        for (let i = 1; i <= total; i++) yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: `${i}` })
        yield* log.remove(sessionId)
        const error = yield* events.subscribe(sessionId, 1).pipe(Stream.runCollect, Effect.flip)
        assert.strictEqual(error.code, "EVENT_REPLAY_GAP")
        const fromBuffer = yield* events.subscribe(sessionId, total - 3).pipe(Stream.take(3), Stream.runCollect)
        assert.deepStrictEqual(seqs(fromBuffer), range(total - 2, total))
      })
    )
  )

  it.live("numbering continues after a restart from the persisted last seq", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 41)
        const event = yield* events.publish(sessionId, { type: "chat", turnId, text: "again" })
        assert.strictEqual(event.seq, 42)
      })
    )
  )
  it.live("a subscriber still gets `ended` when the session closes right after publishing it", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: "x" })
        // A slow subscriber: still busy with the first event when the session publishes `ended` and closes.
        const subscriber = yield* events.subscribe(sessionId, 0).pipe(
          Stream.tap(() => Effect.sleep(50)),
          Stream.runCollect,
          Effect.forkChild
        )
        yield* Effect.sleep(10)
        yield* events.publish(sessionId, { type: "ended", reason: "requested" })
        yield* events.close(sessionId)
        const got = yield* Fiber.join(subscriber)
        assert.deepStrictEqual(
          got.map((event) => event.type),
          ["chat_delta", "ended"]
        )
      })
    )
  )

  it.live("the all-sessions watch sees every session's events and openings in publish order", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const [a, b] = [mintSessionId(), mintSessionId()]
        const watched = yield* Effect.scoped(
          Effect.gen(function* () {
            const notices = yield* events.watchAll
            const collector = yield* notices.pipe(Stream.take(4), Stream.runCollect, Effect.forkChild)
            yield* events.open(a, 0)
            yield* events.open(b, 0)
            yield* events.announce(a)
            yield* events.publish(a, { type: "chat_delta", turnId, delta: "a" })
            yield* events.publish(b, { type: "chat_delta", turnId, delta: "b" })
            yield* events.publish(a, { type: "ended", reason: "requested" })
            return yield* Fiber.join(collector)
          })
        )
        assert.deepStrictEqual(
          watched.map((notice) => (notice.kind === "opened" ? `opened ${notice.sessionId}` : notice.event.sessionId)),
          [`opened ${a}`, a, b, a]
        )
      })
    )
  )

  it.live("history pages through the log, also after close; a session never seen is SESSION_NOT_FOUND", () =>
    withEvents(
      Effect.gen(function* () {
        const events = yield* SessionEvents
        const sessionId = mintSessionId()
        yield* events.open(sessionId, 0)
        for (let i = 0; i < 5; i++) yield* events.publish(sessionId, { type: "chat_delta", turnId, delta: `${i}` })
        yield* events.close(sessionId)
        const first = yield* events.history(sessionId, 0, 3)
        assert.deepStrictEqual(seqs(first.events), [1, 2, 3])
        assert.isTrue(first.more)
        const rest = yield* events.history(sessionId, 3, 3)
        assert.deepStrictEqual(seqs(rest.events), [4, 5])
        assert.isFalse(rest.more)
        const unknown = yield* Effect.flip(events.history(mintSessionId(), 0, 10))
        assert.strictEqual(unknown.code, "SESSION_NOT_FOUND")
      })
    )
  )
})
