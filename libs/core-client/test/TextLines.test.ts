import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { TextLineSplitter } from "../src/TextLines.ts"

const linesOf = (splitter: TextLineSplitter, text: string) => {
  const pushed = splitter.push(text)
  assert.strictEqual(pushed._tag, "Lines")
  return pushed._tag === "Lines" ? pushed.lines : []
}

describe("TextLineSplitter", () => {
  it("joins a line that spans pieces, drops a trailing \\r and keeps empty lines", () => {
    const splitter = new TextLineSplitter(100)
    assert.deepStrictEqual(linesOf(splitter, "ab"), [])
    assert.deepStrictEqual(linesOf(splitter, "c\r\n\nd"), ["abc", ""])
    assert.deepStrictEqual(linesOf(splitter, "e\nf\n"), ["de", "f"])
  })

  it("refuses a line over the limit, whether it ends or not, and starts afresh after", () => {
    const splitter = new TextLineSplitter(4)
    assert.deepStrictEqual(splitter.push("abcde"), { _tag: "TooLong" })
    assert.deepStrictEqual(linesOf(splitter, "ok\n"), ["ok"])
    assert.deepStrictEqual(linesOf(splitter, "ab"), [])
    assert.deepStrictEqual(splitter.push("cde\n"), { _tag: "TooLong" })
    assert.deepStrictEqual(linesOf(splitter, "abcd\n"), ["abcd"])
  })

  it("gives the same lines however the text is cut", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom("a", "é", "\n", "\r") }), { maxLength: 20 }), (pieces) => {
        const text = pieces.join("")
        const splitter = new TextLineSplitter(1_000)
        const lines = pieces.flatMap((piece) => linesOf(splitter, piece))
        const whole = text
          .split("\n")
          .slice(0, -1)
          .map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
        assert.deepStrictEqual(lines, whole)
      })
    )
  })
})
