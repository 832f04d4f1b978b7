// TextRuns, the runs both ends of a `textRefs` link keep: a ref only for a large text that is exactly what crossed
// (the turn's deltas since its last chat, or that chat), and a ref resolved only to the same run.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import { type Crossing, MIN_REF_TEXT, TextRuns } from "@pedelec/contracts/link/TextRuns"

const at = (type: string, seq: number, turnId = "turn-1") => ({ type, sessionId: "s", seq, at: 1, turnId })
const delta = (seq: number, text: string, turnId?: string) =>
  ({ ...at("chat_delta", seq, turnId), delta: text }) as SessionEvent & { type: "chat_delta" }
const chat = (seq: number, text: string, turnId?: string) =>
  ({ ...at("chat", seq, turnId), text }) as SessionEvent & { type: "chat" }
const completed = (seq: number, text: string) =>
  ({ ...at("turn_completed", seq), turnKind: "user", reason: "completed", text }) as SessionEvent & {
    type: "turn_completed"
  }
const ref = (event: SessionEvent & { type: "chat" | "turn_completed" }, fromSeq: number, toSeq: number): Crossing => ({
  kind: "text_ref",
  event: { ...event, text: "" },
  fromSeq,
  toSeq
})

const big = "€".repeat(MIN_REF_TEXT)

/** Sends each event through a fresh sender and receiver; what crossed and what the receiver made of it. */
const across = (events: ReadonlyArray<SessionEvent>) => {
  const [sender, receiver] = [new TextRuns(), new TextRuns()]
  return events.map((event) => {
    const crossing = sender.send(event)
    return { crossing, received: receiver.receive(crossing) }
  })
}

describe("TextRuns", () => {
  it("names a chat by its deltas and a completion by its chat, and the receiver rebuilds the same texts", () => {
    const text = `${big}!`
    const [, , named, done] = across([delta(1, big), delta(2, "!"), chat(3, text), completed(4, text)])
    assert.deepStrictEqual(named!.crossing, ref(chat(3, text), 1, 2))
    assert.isTrue(named!.received?.type === "chat" && named!.received.text === text)
    assert.deepStrictEqual(done!.crossing, ref(completed(4, text), 3, 3))
    assert.isTrue(done!.received?.type === "turn_completed" && done!.received.text === text)
  })

  it("sends whole a small text, a text that differs from its deltas, and one whose deltas were of another turn", () => {
    const crossed = across([
      delta(1, "small"),
      chat(2, "small"),
      delta(3, big),
      chat(4, `${big}?`),
      delta(5, big, "turn-2"),
      chat(6, big),
      completed(7, `${big}?`)
    ]).map(({ crossing }) => crossing.kind)
    assert.deepStrictEqual(crossed, ["event", "event", "event", "event", "event", "event", "event"])
  })

  it("resolves nothing after a reset, nor a range that is not the run it holds, and drops what it held then", () => {
    const runs = new TextRuns()
    runs.receive({ kind: "event", event: delta(1, big) })
    runs.receive({ kind: "event", event: delta(2, "x") })
    assert.isUndefined(runs.receive(ref(chat(3, ""), 2, 2)))
    runs.receive({ kind: "event", event: delta(1, big) })
    assert.isUndefined(runs.receive(ref(chat(3, ""), 1, 3)))
    assert.isUndefined(runs.receive(ref(chat(3, ""), 1, 1)), "the failed ref dropped the run")
    runs.receive({ kind: "event", event: delta(1, big) })
    runs.reset()
    assert.isUndefined(runs.receive(ref(chat(3, ""), 1, 1)))
    runs.receive({ kind: "event", event: chat(3, big) })
    runs.receive({ kind: "event", event: completed(4, big) })
    assert.isUndefined(runs.receive(ref(completed(4, ""), 3, 3)), "a completion ends what its turn held")
  })

  it("names nothing for a receiver that got the same delta twice (two subscriptions of one session)", () => {
    const sender = new TextRuns()
    const receiver = new TextRuns()
    for (const event of [delta(1, big), delta(1, big)]) receiver.receive(sender.send(event))
    assert.strictEqual(sender.send(chat(2, big)).kind, "event", "the run is twice the chat: sent whole")
  })
})
