/**
 * Framing — Chrome native messaging's wire format, pure: a 4-byte native-endian length before UTF-8 JSON; a decoder
 * that turns stdin chunks of any size into whole frames, skips (never buffers) an oversized one, and stops at a length
 * Chrome never sends (the stream is out of step and cannot be read again); and the split of
 * a large outbound message into ChunkFrames of at most 1 MiB each. No I/O and no Effect: NativeMessaging owns
 * stdin/stdout, Relay decides what a refused message is answered with.
 */
import os from "node:os"
import { HOST_LIMITS } from "@pedelec/contracts/link/HostLink"

const HEADER_BYTES = 4
// Chrome uses the machine's byte order; every platform it runs on is little-endian, but the spec says native.
const LITTLE_ENDIAN = os.endianness() === "LE"

export type FramingLimits = Pick<typeof HOST_LIMITS, "maxFrameToHost" | "maxFrameToBrowser" | "maxLogicalMessage">

export const encodeFrame = (json: string): Buffer => {
  const body = Buffer.from(json, "utf8")
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length)
  if (LITTLE_ENDIAN) frame.writeUInt32LE(body.length, 0)
  else frame.writeUInt32BE(body.length, 0)
  body.copy(frame, HEADER_BYTES)
  return frame
}

const readLength = (header: Buffer) => (LITTLE_ENDIAN ? header.readUInt32LE(0) : header.readUInt32BE(0))

/** What the decoder hands on: a whole frame's text, or the fact that a frame was too large (and its first bytes). */
export type Inbound =
  | { readonly _tag: "Frame"; readonly text: string }
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly limit: number; readonly head: string }
  /** A length above Chrome's own ceiling: not a frame but a broken stream; nothing after it is read. */
  | { readonly _tag: "Desync"; readonly bytes: number; readonly head: string }

/** Bytes of an oversized frame kept, enough to read the request id a well-behaved extension puts first. */
const HEAD_BYTES = 4096

/** Stateful, one per input stream: `push` every chunk in order and get the frames it completed. */
export class FrameDecoder {
  private readonly header = Buffer.alloc(HEADER_BYTES)
  private headerFill = 0
  /** Body length of the frame being read, or undefined while reading a header. */
  private length: number | undefined
  private received = 0
  private parts: Array<Buffer> = []
  private oversized = false
  private reported = false
  private desynced = false

  private readonly maxFrame: number

  constructor(maxFrame: number = HOST_LIMITS.maxFrameToHost) {
    this.maxFrame = maxFrame
  }

  push(chunk: Uint8Array): Array<Inbound> {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const out: Array<Inbound> = []
    let offset = 0
    while (offset < bytes.length && !this.desynced) {
      if (this.length === undefined) {
        const take = Math.min(HEADER_BYTES - this.headerFill, bytes.length - offset)
        bytes.copy(this.header, this.headerFill, offset, offset + take)
        this.headerFill += take
        offset += take
        if (this.headerFill === HEADER_BYTES) this.startBody(out, bytes.subarray(offset))
        continue
      }
      const take = Math.min(this.length - this.received, bytes.length - offset)
      this.keep(bytes.subarray(offset, offset + take))
      this.received += take
      offset += take
      this.finishIfDone(out)
    }
    return out
  }

  /** True when no frame is half-read: stdin ending now loses nothing. */
  get idle(): boolean {
    return this.length === undefined && this.headerFill === 0 && !this.desynced
  }

  private startBody(out: Array<Inbound>, rest: Buffer) {
    this.headerFill = 0
    this.length = readLength(this.header)
    if (this.length > HOST_LIMITS.maxFrameToHost) {
      // Whatever followed in this chunk is the best guess at the request the broken length belonged to.
      out.push({ _tag: "Desync", bytes: this.length, head: rest.subarray(0, HEAD_BYTES).toString("utf8") })
      this.desynced = true
      return
    }
    this.received = 0
    this.parts = []
    this.oversized = this.length > this.maxFrame
    this.reported = false
    this.finishIfDone(out)
  }

  private keep(piece: Buffer) {
    if (!this.oversized) return void this.parts.push(piece)
    const kept = this.parts.reduce((sum, part) => sum + part.length, 0)
    // Copied: a slice would pin the whole (possibly large) stdin chunk until the frame ends.
    if (kept < HEAD_BYTES) this.parts.push(Buffer.from(piece.subarray(0, HEAD_BYTES - kept)))
  }

  private finishIfDone(out: Array<Inbound>) {
    const length = this.length!
    if (this.oversized && !this.reported) {
      const kept = this.parts.reduce((sum, part) => sum + part.length, 0)
      // Reported as soon as the head is in, so the answer does not wait for 64 MiB to stream past.
      if (kept >= HEAD_BYTES || this.received === length) {
        const head = Buffer.concat(this.parts).toString("utf8")
        out.push({ _tag: "TooLarge", bytes: length, limit: this.maxFrame, head })
        this.reported = true
        this.parts = []
      }
    }
    if (this.received < length) return
    if (!this.oversized) out.push({ _tag: "Frame", text: Buffer.concat(this.parts).toString("utf8") })
    this.length = undefined
    this.parts = []
  }
}

const ID_PATTERN = /"id"\s*:\s*"([A-Za-z0-9_-]{1,64})"/

/** The request id of a frame that cannot be decoded (too large, malformed), when one can be read. */
export const peekRequestId = (text: string): string | undefined => ID_PATTERN.exec(text)?.[1]

/** How a logical outbound message goes on the wire: its frames, or refused for its size. */
export type Outbound =
  | { readonly _tag: "Frames"; readonly frames: ReadonlyArray<Buffer> }
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly limit: number }

const MAX_CHUNKS = 64
const BACKSLASH = 0x5c
const LETTER_U = 0x75

/** Backslashes in a row ending at `at`: an odd run means the last of them starts an escape. */
const backslashesBefore = (bytes: Buffer, at: number, floor: number): number => {
  let run = 0
  while (at - run >= floor && bytes[at - run] === BACKSLASH) run++
  return run
}

/**
 * The latest cut at or before `cut` in a JSON string literal's UTF-8 bytes that splits neither a code point (a
 * surrogate pair is one 4-byte sequence in UTF-8) nor an escape (`\"`, `\\`, `\uXXXX`, all ASCII), so that each
 * piece is a well-formed literal body on its own.
 */
const safeCut = (bytes: Buffer, start: number, cut: number): number => {
  let at = cut
  while (at > start && (bytes[at]! & 0xc0) === 0x80) at--
  if (backslashesBefore(bytes, at - 1, start) % 2 === 1) return at - 1
  for (let back = 2; back <= 5 && at - back >= start; back++) {
    const escapeStart = at - back
    if (bytes[escapeStart + 1] !== LETTER_U || bytes[escapeStart] !== BACKSLASH) continue
    if (backslashesBefore(bytes, escapeStart, start) % 2 === 1) return escapeStart
  }
  return at
}

/**
 * Frames for one logical message: one frame when its JSON fits, else ChunkFrames (each frame's final JSON within
 * `maxFrameToBrowser`) whose `data` concatenate to the JSON; refused above `maxLogicalMessage` or 64 chunks. The JSON
 * is escaped and encoded once and its bytes cut, instead of each slice escaped and measured again (which took
 * 180 ms for 3.6 MB of "€").
 */
export const frameMessage = (json: string, messageId: string, limits: FramingLimits = HOST_LIMITS): Outbound => {
  const bytes = Buffer.byteLength(json, "utf8")
  if (bytes <= limits.maxFrameToBrowser) return { _tag: "Frames", frames: [encodeFrame(json)] }
  if (bytes > limits.maxLogicalMessage) return { _tag: "TooLarge", bytes, limit: limits.maxLogicalMessage }
  const head = (index: number, count: number) =>
    Buffer.from(`{"kind":"chunk","messageId":${JSON.stringify(messageId)},"index":${index},"count":${count},"data":`)
  // The envelope at its widest (two-digit index and count; the quotes of `data` are the literal's own).
  const budget = limits.maxFrameToBrowser - head(MAX_CHUNKS, MAX_CHUNKS).length - 3
  const literal = Buffer.from(JSON.stringify(json), "utf8")
  const end = literal.length - 1
  const cuts: Array<number> = []
  for (let start = 1; start < end; start = cuts.at(-1)!) {
    const cut = start + budget >= end ? end : safeCut(literal, start, start + budget)
    if (cut <= start) throw new Error("a chunk budget smaller than one character")
    cuts.push(cut)
    if (cuts.length > MAX_CHUNKS) return { _tag: "TooLarge", bytes, limit: limits.maxLogicalMessage }
  }
  const frames = cuts.map((cut, index) => {
    const start = index === 0 ? 1 : cuts[index - 1]!
    const prefix = head(index, cuts.length)
    const body = prefix.length + 1 + (cut - start) + 2
    const frame = Buffer.allocUnsafe(HEADER_BYTES + body)
    if (LITTLE_ENDIAN) frame.writeUInt32LE(body, 0)
    else frame.writeUInt32BE(body, 0)
    let at = HEADER_BYTES + prefix.copy(frame, HEADER_BYTES)
    at += frame.write('"', at)
    at += literal.copy(frame, at, start, cut)
    frame.write('"}', at)
    return frame
  })
  return { _tag: "Frames", frames }
}
