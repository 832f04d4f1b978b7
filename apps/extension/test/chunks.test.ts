/**
 * Reassembly of the native host's chunk frames (host/Chunks.ts): in order they make the message; a gap, a repeat, an
 * interleaved message or a changed count drop it and report it once; past the cap it is MESSAGE_TOO_LARGE.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChunkFrame } from "@pedelec/contracts/link/HostLink"
import { ChunkAssembler, type ChunkResult } from "../src/host/Chunks.ts"

/** Splits `text` into `count` chunk frames the way the host does: `data` slices concatenate to the JSON text. */
const split = (text: string, count: number, messageId = "m1"): Array<ChunkFrame> => {
  const size = Math.ceil(text.length / count)
  return Array.from({ length: count }, (_, index) => ({
    kind: "chunk" as const,
    messageId,
    index,
    count,
    data: text.slice(index * size, (index + 1) * size)
  }))
}

const feed = (assembler: ChunkAssembler, frames: ReadonlyArray<ChunkFrame>): Array<ChunkResult> =>
  frames.flatMap((frame) => assembler.push(frame))

const message = JSON.stringify({ kind: "response", id: "n7", ok: true, result: { text: "é🙂".repeat(500) } })

describe("ChunkAssembler", () => {
  it("joins chunks that arrive in order, and nothing completes early", () => {
    const assembler = new ChunkAssembler()
    const frames = split(message, 5)
    for (const frame of frames.slice(0, 4)) assert.deepStrictEqual(assembler.push(frame), [])
    assert.isTrue(assembler.busy)
    assert.deepStrictEqual(assembler.push(frames[4]!), [{ _tag: "Complete", text: message }])
    assert.isFalse(assembler.busy)
    assert.deepStrictEqual(
      JSON.parse(message),
      JSON.parse((feed(new ChunkAssembler(), frames)[0] as { text: string }).text)
    )
  })

  it("handles two messages one after the other", () => {
    const assembler = new ChunkAssembler()
    const results = feed(assembler, [...split(message, 3, "a"), ...split("[1,2,3]", 2, "b")])
    assert.deepStrictEqual(results, [
      { _tag: "Complete", text: message },
      { _tag: "Complete", text: "[1,2,3]" }
    ])
  })

  it("drops a message whose chunks come out of order, reports it once with its head, and recovers", () => {
    const assembler = new ChunkAssembler()
    const [first, second, third] = split(message, 3)
    const results = feed(assembler, [first!, third!, second!])
    assert.strictEqual(results.length, 1, "one report for the lost message, the later chunks are ignored")
    const [failed] = results
    assert.strictEqual(failed?._tag, "Failed")
    if (failed?._tag !== "Failed") return
    assert.isFalse(failed.tooLarge)
    assert.include(failed.reason, "chunk 2")
    assert.isTrue(failed.head.startsWith('{"kind":"response","id":"n7"'))
    assert.isFalse(assembler.busy)
    assert.deepStrictEqual(feed(assembler, split("{}", 2, "m2")), [{ _tag: "Complete", text: "{}" }])
  })

  it("refuses a message that starts with a chunk other than 0", () => {
    const [, second] = split(message, 3)
    const results = new ChunkAssembler().push(second!)
    assert.strictEqual(results[0]?._tag, "Failed")
  })

  it("drops a half message that another message interrupts, and still assembles the new one", () => {
    const assembler = new ChunkAssembler()
    const results = feed(assembler, [split(message, 3, "a")[0]!, ...split("[true]", 2, "b")])
    assert.deepStrictEqual(
      results.map((result) => result._tag),
      ["Failed", "Complete"]
    )
  })

  it("refuses a changed chunk count", () => {
    const assembler = new ChunkAssembler()
    const [first, second] = split(message, 3)
    const results = feed(assembler, [first!, { ...second!, count: 4 }])
    assert.strictEqual(results[0]?._tag, "Failed")
  })

  it("stops at the cap, counting UTF-8 bytes, and reports it as too large", () => {
    const text = "é".repeat(60) // 120 UTF-8 bytes, 60 UTF-16 units
    const assembler = new ChunkAssembler(100)
    const results = feed(assembler, split(text, 4))
    assert.strictEqual(results.length, 1)
    const [failed] = results
    assert.strictEqual(failed?._tag, "Failed")
    if (failed?._tag === "Failed") {
      assert.isTrue(failed.tooLarge)
      assert.isAbove(failed.bytes, 100)
    }
    assert.deepStrictEqual(feed(new ChunkAssembler(120), split(text, 4)), [{ _tag: "Complete", text }])
  })
})
