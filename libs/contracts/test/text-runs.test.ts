// TextRuns, the runs both ends of a `textRefs` subscription keep: a ref only for a large text that is exactly what
// crossed (the turn's deltas since its last chat, or that chat), and a name resolved only to the same run.
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import { MIN_REF_TEXT, TextRuns } from "@pedelec/contracts/link/TextRuns"

const at = (type: string, seq: number, turnId = "turn-1") => ({ type, sessionId: "s", seq, at: 1, turnId })
const delta = (seq: number, text: string, turnId?: string) =>
  ({ ...at("chat_delta", seq, turnId), delta: text }) as SessionEvent & { type: "chat_delta" }
const chat = (seq: number, text: string, turnId?: string) =>
  ({ ...at("chat", seq, turnId), text }) as SessionEvent & { type: "chat" }
const completed = (seq: number, text: string) =>
  ({ ...at("turn_completed", seq), turnKind: "user", reason: "completed", text }) as SessionEvent & {
    type: "turn_completed"
  }

const big = "€".repeat(MIN_REF_TEXT)
const both = () => [new TextRuns(), new TextRuns()] as const

describe("TextRuns", () => {
  it("names a chat by its deltas and a completion by its chat, and both ends resolve the same text", () => {
    const [host, extension] = both()
    for (const event of [delta(1, big), delta(2, "!")]) {
      host.carried(event)
      extension.carried(event)
    }
    const message = chat(3, `${big}!`)
    const ref = host.refFor(message)
    assert.deepStrictEqual(ref, { fromSeq: 1, toSeq: 2 })
    assert.isTrue(extension.textOf(chat(3, ""), 1, 2) === message.text)
    host.carried(message)
    extension.carried(message)
    assert.deepStrictEqual(host.refFor(completed(4, message.text)), { fromSeq: 3, toSeq: 3 })
    assert.isTrue(extension.textOf(completed(4, ""), 3, 3) === message.text)
  })

  it("sends whole a small text, a text that differs from its deltas, and one whose deltas were of another turn", () => {
    const runs = new TextRuns()
    runs.carried(delta(1, "small"))
    assert.isUndefined(runs.refFor(chat(2, "small")))
    runs.carried(delta(3, big))
    assert.isUndefined(runs.refFor(chat(4, `${big}?`)))
    runs.carried(chat(4, `${big}?`))
    runs.carried(delta(5, big, "turn-2"))
    assert.isUndefined(runs.refFor(chat(6, big)), "turn-1's chat is not turn-2's deltas")
    assert.isUndefined(runs.refFor(completed(7, big)), "not the text of turn-1's chat")
  })

  it("resolves nothing after a reset, nor a range that is not the run it holds", () => {
    const runs = new TextRuns()
    runs.carried(delta(1, big))
    runs.carried(delta(2, "x"))
    assert.isUndefined(runs.textOf(chat(3, ""), 2, 2))
    assert.isUndefined(runs.textOf(chat(3, ""), 1, 3))
    runs.reset()
    assert.isUndefined(runs.textOf(chat(3, ""), 1, 2))
    runs.carried(completed(4, ""))
    assert.isUndefined(runs.textOf(completed(4, ""), 3, 3))
  })
})
