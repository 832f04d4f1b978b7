// Sessions on a real Core: replay by seq, and the disconnect lease (many sessions at once: load.test.ts).
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import {
  collectEvents,
  coreForFile,
  exists,
  failureCode,
  hostClient,
  isStatus,
  isType,
  ORIGIN
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

/** Scaled down from SPEC's 10 s so a lease runs out within the test. */
const LEASE_MS = 2_000

const core = coreForFile({ env: { PEDELEC_LEASE_MS: String(LEASE_MS) } })

const seqsOf = (events: ReadonlyArray<SessionEvent>) => events.map((event) => event.seq)
const oneToN = (n: number) => Array.from({ length: n }, (_, index) => index + 1)

/** Waits (by polling resume) until the session's turn is over, without subscribing. */
const untilIdle = (client: HostClient, sessionId: SessionEvent["sessionId"]) =>
  Effect.gen(function* () {
    for (let polls = 0; polls < 300; polls++) {
      const info = yield* client["session.resume"]({ origin: ORIGIN, sessionId })
      if (info.status === "idle") return info
      yield* Effect.sleep(100)
    }
    return yield* Effect.die(new Error(`session ${sessionId} did not become idle`))
  })

describe("sessions on a real Core", () => {
  it.live("re-subscribing from the last seq seen replays exactly the missing events, past the buffer too", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId } = yield* client["session.create"]({
        origin: ORIGIN,
        input: { provider: "scripted", autoEndOnDisconnect: false }
      })
      const subscribe = (afterSeq: number) =>
        collectEvents(client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq, claimTools: false }))
      // Over 512 events, so the replay reaches back past Core's in-memory buffer into the log: a delta and a chat
      // each (consecutive deltas would be coalesced into far fewer events).
      const says = Array.from({ length: 300 }, (_, index) => `say ${index % 10}`)
      const first = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* subscribe(0)
          yield* client["session.send_text"]({
            origin: ORIGIN,
            sessionId,
            text: script("say one", ...says, "say end")
          })
          yield* events.next((event): event is SessionEvent => event.type === "chat" && event.text === "one")
          return events.seen
        })
      )
      // The stream is gone; the turn goes on without any subscriber.
      yield* untilIdle(client, sessionId)
      const lastSeen = first.at(-1)!.seq
      const rest = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* subscribe(lastSeen)
          yield* events.next(isStatus("idle"))
          return events.seen
        })
      )
      const full = yield* Effect.scoped(
        Effect.gen(function* () {
          const events = yield* subscribe(0)
          yield* events.next(isStatus("idle"))
          return events.seen
        })
      )
      assert.isAbove(full.length, 600)
      assert.deepStrictEqual(seqsOf(full), oneToN(full.length))
      assert.strictEqual(rest[0]?.seq, lastSeen + 1)
      assert.deepStrictEqual([...first, ...rest], full, "nothing lost, nothing doubled")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("the lease ends a session its last subscriber left, unless one comes back within the lease", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const input = { provider: "scripted", autoEndOnDisconnect: true } as const
      const left = yield* client["session.create"]({ origin: ORIGIN, input })
      const back = yield* client["session.create"]({ origin: ORIGIN, input })
      const watch = (sessionId: SessionEvent["sessionId"]) =>
        Effect.scoped(
          Effect.gen(function* () {
            const events = yield* collectEvents(
              client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true })
            )
            // Subscribed for real: the session's first turn is seen.
            yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script("say hi") })
            yield* events.next(isStatus("idle"))
          })
        )
      yield* Effect.all([watch(left.sessionId), watch(back.sessionId)], { concurrency: "unbounded" })
      const leftAt = Date.now()
      yield* Effect.sleep(LEASE_MS / 4)
      const again = yield* collectEvents(
        client["session.subscribe"]({ origin: ORIGIN, sessionId: back.sessionId, afterSeq: 0, claimTools: true })
      )
      // Its replay has started: Core holds the lease for it again.
      yield* again.next(isType("status_changed"))
      assert.isBelow(Date.now() - leftAt, LEASE_MS / 2, "the subscriber came back within half the lease")
      const stillThere = yield* client["session.resume"]({ origin: ORIGIN, sessionId: left.sessionId })
      assert.strictEqual(stillThere.status, "idle", "not ended before the lease runs out")
      yield* Effect.sleep(Math.max(0, leftAt + LEASE_MS + 1_500 - Date.now()))

      const ended = client["session.resume"]({ origin: ORIGIN, sessionId: left.sessionId })
      assert.strictEqual(yield* failureCode(ended), "SESSION_ENDED")
      assert.isFalse(yield* Effect.promise(() => exists(left.workspace.path)), "its managed workspace is gone")
      const kept = yield* client["session.resume"]({ origin: ORIGIN, sessionId: back.sessionId })
      assert.strictEqual(kept.status, "idle")
      assert.isTrue(yield* Effect.promise(() => exists(back.workspace.path)))
      yield* client["session.end"]({ origin: ORIGIN, sessionId: back.sessionId })
    }).pipe(Effect.scoped)
  )
})
