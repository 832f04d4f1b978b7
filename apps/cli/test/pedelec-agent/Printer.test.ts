// pedelec-agent's stdout printer: what one turn of the event loop emits goes out as one write, in order, and each
// print settles once its write has; a later turn of the loop is a write of its own.
import { describe, expect, it } from "vitest"
import { makePrinter } from "../../src/pedelec-agent/Printer.ts"

describe("printer", () => {
  it("writes the events of one turn of the event loop together, in order, and settles them after the write", async () => {
    const writes: Array<string> = []
    const print = makePrinter((text, done) => {
      writes.push(text)
      setImmediate(done)
    })
    const burst = [
      print({ type: "delta", text: "a" }),
      print({ type: "delta", text: "b" }),
      print({ type: "message", text: "ab" }),
      Promise.resolve().then(() => print({ type: "completed" }))
    ]
    await Promise.all(burst)
    expect(writes).toEqual([
      '{"type":"delta","text":"a"}\n{"type":"delta","text":"b"}\n{"type":"message","text":"ab"}\n{"type":"completed"}\n'
    ])
    await print({ type: "usage", inputTokens: 1, outputTokens: 2 })
    expect(writes).toHaveLength(2)
  })
})
