/** OutputLines: splitting stdout bytes into strict UTF-8 lines with a hard per-line limit. */
import { assert, describe, it } from "@effect/vitest"
import { LineTooLong, type OutputLine, Utf8LineSplitter } from "../src/OutputLines.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (t: string): OutputLine => ({ _tag: "Text", text: t })

const feed = (splitter: Utf8LineSplitter, chunks: ReadonlyArray<Uint8Array>) => {
  const out: Array<OutputLine> = []
  for (const chunk of chunks) {
    const lines = splitter.push(chunk)
    if (lines instanceof LineTooLong) throw new Error("unexpected LineTooLong")
    out.push(...lines)
  }
  return [...out, ...splitter.end()]
}

describe("Utf8LineSplitter", () => {
  it("splits on newlines across chunk boundaries and keeps a last line without one", () => {
    const lines = feed(new Utf8LineSplitter(), [bytes("one\ntw"), bytes("o\n\nthr"), bytes("ee")])
    assert.deepStrictEqual(lines, [text("one"), text("two"), text(""), text("three")])
  })

  it("drops the \\r of CRLF line ends", () => {
    assert.deepStrictEqual(feed(new Utf8LineSplitter(), [bytes("a\r\nb\r\n")]), [text("a"), text("b")])
  })

  it("decodes a multi-byte character split between chunks", () => {
    const all = bytes("größe 🚲\n")
    const cut = 3 // inside "ö"
    assert.deepStrictEqual(feed(new Utf8LineSplitter(), [all.subarray(0, cut), all.subarray(cut)]), [text("größe 🚲")])
  })

  it("reports invalid UTF-8 as an Invalid line instead of replacing bytes, and carries on", () => {
    const bad = Uint8Array.from([0x61, 0xff, 0xfe, 0x0a])
    const lines = feed(new Utf8LineSplitter(), [bad, bytes("fine\n")])
    assert.deepStrictEqual(lines, [{ _tag: "Invalid", bytes: 3 }, text("fine")])
  })

  it("decodes a long line fed in chunks cut anywhere, a CRLF cut between them included", () => {
    const line = `{"text":"${"€🚲ö".repeat(5_000)}"}`
    const all = bytes(`${line}\r\nnext\r`)
    for (const size of [1, 2, 3, 7, 4096]) {
      const chunks = Array.from({ length: Math.ceil(all.length / size) }, (_, i) =>
        all.subarray(i * size, (i + 1) * size)
      )
      assert.deepStrictEqual(feed(new Utf8LineSplitter(), chunks), [text(line), text("next")])
    }
  })

  it("reports a line invalid when its bad bytes come in a middle chunk, or it ends inside a character", () => {
    const chunks = [bytes("ab"), Uint8Array.from([0xe2, 0x28]), bytes("cd\nok\n"), Uint8Array.from([0x61, 0xe2, 0x82])]
    assert.deepStrictEqual(feed(new Utf8LineSplitter(), chunks), [
      { _tag: "Invalid", bytes: 6 },
      text("ok"),
      { _tag: "Invalid", bytes: 3 }
    ])
  })

  it("accepts a line of exactly the limit", () => {
    assert.deepStrictEqual(feed(new Utf8LineSplitter(8), [bytes("12345678\n")]), [text("12345678")])
  })

  it("fails a longer line as soon as it passes the limit, newline or not", () => {
    assert.instanceOf(new Utf8LineSplitter(8).push(bytes("123456789\n")), LineTooLong)
    const splitter = new Utf8LineSplitter(8)
    assert.deepStrictEqual(splitter.push(bytes("12345")), [])
    assert.instanceOf(splitter.push(bytes("6789")), LineTooLong)
  })

  it("does not keep a reference to the caller's buffer", () => {
    const splitter = new Utf8LineSplitter()
    const buffer = bytes("abc")
    splitter.push(buffer)
    buffer.fill(0x7a)
    assert.deepStrictEqual(splitter.end(), [text("abc")])
  })
})
