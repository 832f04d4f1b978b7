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

/** Bytes `text` takes inside a JSON string literal, as JSON.stringify escapes it. */
const escapedBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text)) - 2

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * Cuts `json` into slices whose escaped size fits `budget` bytes each. Measured a slice at a time (a per-character
 * loop took 480 ms for 3.6 MB): every unit costs at least one byte, so `budget` units is the most a slice can hold,
 * and an oversized guess shrinks in proportion to its overshoot.
 */
const slices = (json: string, budget: number): Array<string> => {
  const out: Array<string> = []
  let start = 0
  while (start < json.length) {
    let end = Math.min(json.length, start + budget)
    let bytes = escapedBytes(json.slice(start, end))
    while (bytes > budget) {
      end = start + Math.max(1, Math.floor(((end - start) * budget) / bytes))
      bytes = escapedBytes(json.slice(start, end))
    }
    // A pair is never cut, so each slice stays well-formed UTF-16.
    if (end < json.length && end - start > 1 && isHighSurrogate(json.charCodeAt(end - 1))) end--
    out.push(json.slice(start, end))
    start = end
  }
  return out
}

/**
 * Frames for one logical message: one frame when its JSON fits, else ChunkFrames (each frame's final JSON within
 * `maxFrameToBrowser`) whose `data` concatenate to the JSON; refused above `maxLogicalMessage` or 64 chunks.
 */
export const frameMessage = (json: string, messageId: string, limits: FramingLimits = HOST_LIMITS): Outbound => {
  const bytes = Buffer.byteLength(json, "utf8")
  if (bytes <= limits.maxFrameToBrowser) return { _tag: "Frames", frames: [encodeFrame(json)] }
  if (bytes > limits.maxLogicalMessage) return { _tag: "TooLarge", bytes, limit: limits.maxLogicalMessage }
  const envelope = (index: number, count: number, data: string) =>
    JSON.stringify({ kind: "chunk", messageId, index, count, data })
  // The envelope at its widest (two-digit index and count), so the budget holds for every chunk.
  const budget = limits.maxFrameToBrowser - Buffer.byteLength(envelope(MAX_CHUNKS, MAX_CHUNKS, ""))
  const pieces = slices(json, budget)
  if (pieces.length > MAX_CHUNKS) return { _tag: "TooLarge", bytes, limit: limits.maxLogicalMessage }
  const frames = pieces.map((data, index) => {
    const frame = envelope(index, pieces.length, data)
    if (Buffer.byteLength(frame) > limits.maxFrameToBrowser) throw new Error(`chunk ${index} exceeds the frame limit`)
    return encodeFrame(frame)
  })
  return { _tag: "Frames", frames }
}
