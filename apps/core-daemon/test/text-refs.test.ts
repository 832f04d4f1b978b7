// `session.subscribe_refs` on a real Core: a large chat and its completion cross Core IPC as refs to what the same
// stream carried, the refs rebuild exactly the plain stream's events, and a stream that did not carry the deltas
// (a resubscribe from a later seq) gets the text whole.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { type Crossing, TextRuns } from "@pedelec/contracts/link/TextRuns"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import { coreForFile, hostClient, ORIGIN } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const core = coreForFile()

/** Over TextRuns' MIN_REF_TEXT, in a character that is 3 bytes of UTF-8. */
const BIG = "€".repeat(40_000)

const untilCompleted = (stream: Stream.Stream<Crossing, unknown>) =>
  stream.pipe(
    Stream.takeUntil((crossing) => crossing.event.type === "turn_completed"),
    Stream.runCollect,
    Effect.timeout(20_000)
  )

const subscribe = (client: HostClient, sessionId: SessionId, afterSeq: number, refs: boolean) => {
  const payload = { origin: ORIGIN, sessionId, afterSeq, claimTools: false }
  return untilCompleted(
    refs
      ? client["session.subscribe_refs"](payload)
      : client["session.subscribe"](payload).pipe(Stream.map((event): Crossing => ({ kind: "event", event })))
  )
}

type Texted = Extract<SessionEvent, { readonly type: "chat" | "turn_completed" }>
const isTexted = (event: SessionEvent): event is Texted => event.type === "chat" || event.type === "turn_completed"

const shapeOf = (crossings: ReadonlyArray<Crossing>) =>
  crossings.flatMap(({ kind, event }) => (isTexted(event) ? [[kind, event.type, event.text]] : []))

describe("session.subscribe_refs on a real Core", () => {
  it.live("names a large chat by its deltas and its completion by the chat, and rebuilds the plain events", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId } = yield* client["session.create"]({
        origin: ORIGIN,
        input: { provider: "scripted", autoEndOnDisconnect: false }
      })
      yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script("say small", `say ${BIG}`) })
      // From seq 0 both streams replay the whole turn, however far it got before they started.
      const plain = yield* subscribe(client, sessionId, 0, false)
      const refs = yield* subscribe(client, sessionId, 0, true)

      assert.deepStrictEqual(shapeOf(refs), [
        ["event", "chat", "small"],
        ["text_ref", "chat", ""],
        ["text_ref", "turn_completed", ""]
      ])
      const delta = refs.find((crossing) => crossing.event.type === "chat_delta" && crossing.event.delta === BIG)
      const chat = refs.find((crossing) => crossing.kind === "text_ref" && crossing.event.type === "chat")
      const completed = refs.at(-1)
      assert.deepStrictEqual(chat?.kind === "text_ref" ? [chat.fromSeq, chat.toSeq] : [], [
        delta?.event.seq,
        delta?.event.seq
      ])
      assert.deepStrictEqual(completed?.kind === "text_ref" ? [completed.fromSeq, completed.toSeq] : [], [
        chat?.event.seq,
        chat?.event.seq
      ])
      const runs = new TextRuns()
      const rebuilt = refs.map((crossing) => runs.receive(crossing))
      assert.deepStrictEqual(
        rebuilt,
        plain.map((crossing) => crossing.event)
      )

      // A stream that starts after the deltas never carried them: its chat comes whole, its completion names that.
      const later = yield* subscribe(client, sessionId, delta!.event.seq, true)
      assert.deepStrictEqual(shapeOf(later), [
        ["event", "chat", BIG],
        ["text_ref", "turn_completed", ""]
      ])
      const expected = plain.map((crossing) => crossing.event).filter((event) => event.seq > delta!.event.seq)
      const again = new TextRuns()
      assert.deepStrictEqual(
        later.map((crossing) => again.receive(crossing)),
        expected
      )
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )
})
