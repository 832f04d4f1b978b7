// Chrome's framing, pure: frames cut at every byte offset, several per chunk, multi-byte UTF-8 across chunk edges, an
// oversized inbound frame skipped without buffering, and outbound chunking that reassembles exactly within 1 MiB.

import { assert, describe, it } from "@effect/vitest"
import { ChunkFrame } from "@pedelec/contracts/link/HostLink"
import * as Schema from "effect/Schema"
import { encodeFrame, FrameDecoder, frameMessage, type Inbound, peekRequestId } from "../src/Framing.ts"

const texts = (inbound: ReadonlyArray<Inbound>) => inbound.map((item) => (item._tag === "Frame" ? item.text : item))

const feed = (decoder: FrameDecoder, bytes: Buffer, cuts: ReadonlyArray<number>) => {
  const out: Array<Inbound> = []
  let start = 0
  for (const cut of [...cuts, bytes.length]) {
    out.push(...decoder.push(bytes.subarray(start, cut)))
    start = cut
  }
  return out
}

/** The frames' bodies, checked against the header and the limit, as the extension would read them. */
const bodies = (frames: ReadonlyArray<Buffer>, limit: number) =>
  frames.map((frame) => {
    const length = frame.readUInt32LE(0)
    assert.strictEqual(length, frame.length - 4)
    assert.isAtMost(length, limit)
    return frame.subarray(4).toString("utf8")
  })

const reassemble = (frames: ReadonlyArray<Buffer>, limit: number) => {
  const chunks = bodies(frames, limit).map((body) => Schema.decodeUnknownSync(ChunkFrame)(JSON.parse(body)))
  chunks.forEach((chunk, index) => {
    assert.strictEqual(chunk.index, index)
    assert.strictEqual(chunk.count, chunks.length)
    assert.strictEqual(chunk.messageId, chunks[0]!.messageId)
  })
  return chunks.map((chunk) => chunk.data).join("")
}

describe("FrameDecoder", () => {
  const messages = ['{"a":1}', '{"é":"€𝄞 — ü"}', "{}", '{"id":"r1","x":"𝄞𝄞𝄞"}']
  const stream = Buffer.concat(messages.map(encodeFrame))

  it("yields the same frames whatever the chunking: every single cut, every pair of cuts, one byte at a time", () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      assert.deepStrictEqual(texts(feed(new FrameDecoder(), stream, [cut])), messages)
    }
    for (let first = 0; first <= stream.length; first += 3) {
      for (let second = first; second <= stream.length; second += 2) {
        assert.deepStrictEqual(texts(feed(new FrameDecoder(), stream, [first, second])), messages)
      }
    }
    const bytewise = Array.from({ length: stream.length }, (_, index) => index)
    assert.deepStrictEqual(texts(feed(new FrameDecoder(), stream, bytewise)), messages)
  })

  it("is idle only between frames", () => {
    const decoder = new FrameDecoder()
    decoder.push(stream.subarray(0, 2))
    assert.isFalse(decoder.idle)
    decoder.push(stream.subarray(2, encodeFrame(messages[0]!).length))
    assert.isTrue(decoder.idle)
  })

  it("reports an oversized frame once, with its head, skips its body and reads the next frame", () => {
    const big = Buffer.from(`{"kind":"request","id":"big-1","params":"${"x".repeat(10_000)}"}`)
    const header = Buffer.alloc(4)
    header.writeUInt32LE(big.length)
    const bytes = Buffer.concat([header, big, encodeFrame('{"after":true}')])
    for (const step of [1, 7, 4096, bytes.length]) {
      const cuts = Array.from({ length: Math.ceil(bytes.length / step) }, (_, index) => index * step).slice(1)
      const out = feed(new FrameDecoder(1000), bytes, cuts)
      assert.strictEqual(out.length, 2, `step ${step}`)
      const [refused, after] = out
      assert.strictEqual(refused?._tag, "TooLarge")
      if (refused?._tag === "TooLarge") {
        assert.strictEqual(refused.bytes, big.length)
        assert.isAtMost(Buffer.byteLength(refused.head), 4096)
        assert.strictEqual(peekRequestId(refused.head), "big-1")
      }
      assert.deepStrictEqual(after, { _tag: "Frame", text: '{"after":true}' })
    }
  })

  it("reports a refused frame before its body has arrived", () => {
    const header = Buffer.alloc(4)
    header.writeUInt32LE(40 * 1024 * 1024)
    const decoder = new FrameDecoder(16 * 1024 * 1024)
    assert.deepStrictEqual(decoder.push(header), [])
    const out = decoder.push(Buffer.from(`{"id":"r9",${" ".repeat(5000)}`))
    assert.strictEqual(out.length, 1)
    assert.strictEqual(out[0]?._tag, "TooLarge")
  })

  it("reports a length over Chrome's 64 MiB as Desync, with what followed it, and reads nothing after", () => {
    const header = Buffer.alloc(4)
    header.writeUInt32LE(0xffffffff)
    const decoder = new FrameDecoder()
    const out = decoder.push(Buffer.concat([header, Buffer.from('{"id":"r7"')]))
    assert.deepStrictEqual(out, [{ _tag: "Desync", bytes: 0xffffffff, head: '{"id":"r7"' }])
    assert.deepStrictEqual(decoder.push(encodeFrame('{"after":true}')), [])
    assert.isFalse(decoder.idle)
  })
})

describe("frameMessage", () => {
  const limits = { maxFrameToHost: 1 << 20, maxFrameToBrowser: 200, maxLogicalMessage: 5000 }

  it("sends a message that fits as one plain frame", () => {
    const json = JSON.stringify({ kind: "response", id: "a", ok: true, result: "x".repeat(100) })
    const out = frameMessage(json, "m1", limits)
    assert.strictEqual(out._tag, "Frames")
    if (out._tag === "Frames") assert.deepStrictEqual(bodies(out.frames, 200), [json])
  })

  it("splits a larger one into chunk frames within the limit that reassemble exactly, whatever the characters", () => {
    const samples = [
      "x".repeat(3000),
      '"\\'.repeat(700),
      "é€𝄞\u2028".repeat(150),
      "a𝄞".repeat(400),
      `${"q".repeat(137)}\u0001\u001f${"😀".repeat(300)}`
    ]
    for (const sample of samples) {
      const json = JSON.stringify({ kind: "event", data: sample, lone: "\ud800 \udc00" })
      const out = frameMessage(json, "m2", limits)
      assert.strictEqual(out._tag, "Frames")
      if (out._tag !== "Frames") continue
      assert.isAbove(out.frames.length, 1)
      assert.strictEqual(reassemble(out.frames, 200), json)
    }
  })

  it("never cuts inside an escape or a character, at every frame limit from 100 to 180 bytes", () => {
    // Escapes of every width side by side, a text `\u` that is no escape, and 2-, 3- and 4-byte characters.
    const json = JSON.stringify({ kind: "event", data: '\\u0041\u0001"\\\\"é€𝄞\ud800x'.repeat(6) })
    // A JSON text with raw lone surrogates and a newline, whose own escaping writes `\uXXXX` and `\n`.
    const raw = `{"kind":"event",\n"data":"${"\udc00a\ud800b".repeat(30)}"}`
    for (const text of [json, raw]) {
      for (let frame = 100; frame <= 180; frame++) {
        const out = frameMessage(text, "m5", { ...limits, maxFrameToBrowser: frame })
        assert.strictEqual(out._tag, "Frames")
        if (out._tag === "Frames") assert.strictEqual(reassemble(out.frames, frame), text)
      }
    }
  })

  it("refuses a message over the logical cap", () => {
    const json = JSON.stringify({ data: "y".repeat(6000) })
    assert.deepStrictEqual(frameMessage(json, "m3", limits), {
      _tag: "TooLarge",
      bytes: Buffer.byteLength(json),
      limit: 5000
    })
  })

  it("chunks 3 MiB at the real limits into frames of at most 1 MiB", () => {
    const json = JSON.stringify({ kind: "event", data: '€"\\z'.repeat(3 * 1024 * 256) })
    const out = frameMessage(json, "m4")
    assert.strictEqual(out._tag, "Frames")
    if (out._tag === "Frames") assert.strictEqual(reassemble(out.frames, 1024 * 1024), json)
  })
})
