// PageTextRef at the page: the SDK asks for refs when it subscribes, rebuilds a chat from the deltas its port carried
// and a completion from that chat before any callback sees them, and reports a ref to texts it does not have (a
// message it could not read, a new port) as an onError, never as a chat with another text.
import { MIN_REF_TEXT } from "@pedelec/contracts/link/TextRuns"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Pedelec } from "../src/index.ts"
import { events, FakeExtension, resetSeq, tick, uninstall } from "./FakeExtension.ts"

let chrome: FakeExtension
beforeEach(() => {
  chrome = new FakeExtension().install()
  resetSeq()
})
afterEach(uninstall)

const TURN = "turn0001"
const big = "€".repeat(MIN_REF_TEXT)

/** The event with its text emptied, named by the seqs the port carried it as. */
const refTo = (event: ReturnType<typeof events.chat>, fromSeq: number, toSeq: number) => ({
  kind: "text_ref",
  event: { ...event, text: "" },
  fromSeq,
  toSeq
})

const open = async () => {
  const session = await new Pedelec().createSession()
  const seen: Array<string> = []
  const chats: Array<string> = []
  const errors: Array<string> = []
  session.onChatDelta((delta, ctx) => seen.push(`${ctx.seq}:delta:${delta.length}`))
  session.onChat((text, ctx) => {
    seen.push(`${ctx.seq}:chat:${text.length}`)
    chats.push(text)
  })
  session.onError((error) => errors.push(error.code))
  return { session, seen, chats, errors }
}

describe("text refs", () => {
  it("asks for refs on subscribe, and rebuilds a chat from its deltas and a completion from its chat", async () => {
    const text = `${big}!`
    chrome.on("session.send_text", (_, port) => {
      const deltas = [events.delta(TURN, big), events.delta(TURN, "!")]
      for (const delta of deltas) port.event(delta)
      const chat = events.chat(TURN, text)
      port.push(refTo(chat, 1, 2))
      port.push(refTo(events.completed(TURN, text), chat.seq, chat.seq))
      return { result: { turnId: TURN } }
    })
    const { session, seen, chats, errors } = await open()
    expect(chrome.port.sent.find((request) => request.method === "session.subscribe")).toMatchObject({
      textRefs: true
    })
    const result = await session.sendText("go")
    expect(result.text === text).toBe(true)
    expect(chats.length === 1 && chats[0] === text).toBe(true)
    expect(seen).toEqual([`1:delta:${big.length}`, "2:delta:1", `3:chat:${text.length}`])
    expect(errors).toEqual([])
  })

  it("reports a ref past a message it could not read as PROTOCOL_ERROR, and passes no text for it", async () => {
    const { seen, errors } = await open()
    chrome.port.event(events.delta(TURN, big))
    // Delta 2 does not decode here, delta 3 does: seqs 1 to 3 would still look like a run without the loss.
    chrome.port.push({ kind: "event", event: { ...events.delta(TURN, "x"), delta: 42 } })
    chrome.port.event(events.delta(TURN, "y"))
    chrome.port.push(refTo(events.chat(TURN, ""), 1, 3))
    expect(seen).toEqual([`1:delta:${big.length}`, "3:delta:1"])
    expect(errors).toEqual(["PROTOCOL_ERROR"])
  })

  it("resolves nothing a previous port carried", async () => {
    const { seen, errors } = await open()
    chrome.port.event(events.delta(TURN, big))
    chrome.port.drop()
    await tick(300)
    expect(chrome.ports).toHaveLength(2)
    chrome.port.push(refTo(events.chat(TURN, ""), 1, 1))
    expect(seen).toEqual([`1:delta:${big.length}`])
    expect(errors).toEqual(["PROTOCOL_ERROR"])
  })
})
