/**
 * HostTextRef through a page port and the worker's real services, over a fake browser: the subscription asks for
 * refs, a large chat named by its deltas and a turn_completed named by its chat reach the page whole, and a ref to
 * texts this link lost (a garbled chunk) reaches it as the same notice a lost event gives, never as a wrong text. A
 * page that reads refs itself gets them as PageTextRefs, named by what its port carried.
 */
import { assert, describe, it } from "@effect/vitest"
import { MIN_REF_TEXT } from "@pedelec/contracts/link/TextRuns"
import * as Effect from "effect/Effect"
import { waitUntil } from "./FakeChromeApi.ts"
import { posted, run, SESSION, subscribedPage } from "./PagePort.ts"

const TURN = "turn-0001"
const base = (type: string, seq: number) => ({ type, sessionId: SESSION, seq, at: 5, turnId: TURN })
const delta = (seq: number, text: string) => ({ ...base("chat_delta", seq), delta: text })
const chat = (seq: number, text: string) => ({ ...base("chat", seq), text })
const completed = (seq: number, text: string) => ({
  ...base("turn_completed", seq),
  turnKind: "user",
  reason: "completed",
  text
})

const events = (page: Parameters<typeof posted>[0]) =>
  posted(page)
    .filter((m) => m.kind === "event")
    .map((m) => m.event as { readonly type: string; readonly seq: number; readonly text?: string })

describe("text refs", () => {
  it.effect("asks for refs on subscribe, and rebuilds a chat from its deltas and a turn_completed from its chat", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription, asked } = yield* subscribedPage(fake)
        assert.strictEqual(asked, true)
        const [first, second] = ["€".repeat(MIN_REF_TEXT), "x".repeat(10)]
        native.emit({ kind: "event", subscription, event: delta(1, first) })
        native.emit({ kind: "event", subscription, event: delta(2, second) })
        native.emit({ kind: "text_ref", subscription, event: chat(3, ""), fromSeq: 1, toSeq: 2 })
        native.emit({ kind: "text_ref", subscription, event: completed(4, ""), fromSeq: 3, toSeq: 3 })
        yield* waitUntil(() => events(page).length === 4, "four events")
        const [, , rebuilt, done] = events(page)
        assert.deepStrictEqual([rebuilt!.type, rebuilt!.seq], ["chat", 3])
        assert.isTrue(rebuilt!.text === first + second, "the chat is its deltas")
        assert.isTrue(done!.text === first + second, "the completion is its chat")
        assert.isFalse(posted(page).some((m) => m.kind === "notice"))
      })
    )
  )

  it.effect("reports a ref to texts a garbled chunk lost as a notice, and passes no text for it", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription } = yield* subscribedPage(fake)
        native.emit({ kind: "event", subscription, event: delta(1, "a".repeat(MIN_REF_TEXT)) })
        // Delta 2 arrives garbled (its chunk 0 twice), delta 3 whole: seqs 1 to 3 would still look like a run here.
        const lostDelta = JSON.stringify({ kind: "event", subscription, event: delta(2, "b".repeat(100)) })
        native.emit({ kind: "chunk", messageId: "m1", index: 0, count: 2, data: lostDelta.slice(0, 80) })
        native.emit({ kind: "chunk", messageId: "m1", index: 0, count: 2, data: lostDelta.slice(0, 80) })
        native.emit({ kind: "event", subscription, event: delta(3, "c") })
        native.emit({ kind: "text_ref", subscription, event: chat(4, ""), fromSeq: 1, toSeq: 3 })
        yield* waitUntil(() => posted(page).filter((m) => m.kind === "notice").length === 2, "two notices")
        assert.deepStrictEqual(
          events(page).map((event) => event.seq),
          [1, 3],
          "neither the lost delta nor a chat built without it"
        )
        const notices = posted(page).filter((m) => m.kind === "notice")
        assert.deepStrictEqual(
          notices.map((m) => [m.sessionId, m.error?.code]),
          [
            [SESSION, "PROTOCOL_ERROR"],
            [SESSION, "PROTOCOL_ERROR"]
          ]
        )
      })
    )
  )

  it.effect("posts a page that reads refs a ref to what its port carried, and a text it did not carry whole", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native, subscription } = yield* subscribedPage(fake, true)
        const [first, second] = ["€".repeat(MIN_REF_TEXT), "x".repeat(10)]
        native.emit({ kind: "event", subscription, event: delta(1, first) })
        native.emit({ kind: "event", subscription, event: delta(2, second) })
        native.emit({ kind: "text_ref", subscription, event: chat(3, ""), fromSeq: 1, toSeq: 2 })
        native.emit({ kind: "text_ref", subscription, event: completed(4, ""), fromSeq: 3, toSeq: 3 })
        native.emit({ kind: "event", subscription, event: delta(5, first) })
        native.emit({ kind: "event", subscription, event: chat(6, `${first}?`) })
        const delivered = () => posted(page).filter((m) => m.kind === "event" || m.kind === "text_ref")
        yield* waitUntil(() => delivered().length === 6, "six events")
        assert.deepStrictEqual(
          delivered().map((m) => [m.kind, (m.event as { seq: number }).seq, m.fromSeq, m.toSeq]),
          [
            ["event", 1, undefined, undefined],
            ["event", 2, undefined, undefined],
            ["text_ref", 3, 1, 2],
            ["text_ref", 4, 3, 3],
            ["event", 5, undefined, undefined],
            ["event", 6, undefined, undefined]
          ]
        )
        const texts = delivered().map((m) => (m.event as { text?: string }).text)
        assert.deepStrictEqual([texts[2], texts[3]], ["", ""], "a ref carries no text")
        assert.isTrue(texts[5] === `${first}?`, "a chat that is not its deltas crosses whole")
      })
    )
  )
})
