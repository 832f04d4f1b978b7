/**
 * Chunks — reassembles the ChunkFrames the native host splits a large message into (Chrome refuses host → browser
 * frames above 1 MiB; see apps/native-host/src/Framing.ts `frameMessage`). The host writes one logical message at a
 * time, so chunks arrive in order and never interleave: anything else (a gap, a repeat, another message starting, a
 * changed count) is a fault that drops the partial message, as does passing the 16 MiB cap. Pure and Effect-free;
 * NativeLink decides what a lost message is answered with, from the head of its first chunk.
 */

import type { ChunkFrame } from "@pedelec/contracts/link/HostLink"
import { HOST_LIMITS } from "@pedelec/contracts/link/HostLink"

export type ChunkResult =
  | { readonly _tag: "Complete"; readonly text: string }
  /** The message is lost; `head` is the start of its JSON text (to find whom it answered), `bytes` what arrived. */
  | {
      readonly _tag: "Failed"
      readonly reason: string
      readonly tooLarge: boolean
      readonly head: string
      readonly bytes: number
    }

const HEAD_CHARS = 512
const encoder = new TextEncoder()
/** A UTF-16 unit is at most 3 UTF-8 bytes (a pair, 2 units, is 4). */
const MAX_BYTES_PER_UNIT = 3

interface Partial {
  readonly messageId: string
  readonly count: number
  readonly parts: Array<string>
  readonly head: string
  /** UTF-16 units so far; `bytes` is counted exactly only once they could pass the cap. */
  units: number
  bytes: number | undefined
}

export class ChunkAssembler {
  private partial: Partial | undefined
  /** The message last given up on: its remaining chunks are ignored, so one lost message is reported once. */
  private dropped: string | undefined
  readonly limit: number

  constructor(maxBytes: number = HOST_LIMITS.maxLogicalMessage) {
    this.limit = maxBytes
  }

  /** What this frame finished, in order: nothing while a message is still arriving. */
  push(frame: ChunkFrame): Array<ChunkResult> {
    if (frame.messageId === this.dropped) return []
    this.dropped = undefined
    const current = this.partial
    if (current !== undefined && current.messageId !== frame.messageId) {
      // The host never interleaves messages: the earlier one is incomplete and lost; this one is judged on its own.
      const lost = this.fail(current, `message ${current.messageId} was interrupted by ${frame.messageId}`, false)
      return [lost, ...this.push(frame)]
    }
    return this.step(current, frame)
  }

  private step(current: Partial | undefined, frame: ChunkFrame): Array<ChunkResult> {
    if (current === undefined) {
      if (frame.index !== 0) {
        const orphan = { messageId: frame.messageId, count: frame.count, parts: [], head: "", units: 0, bytes: 0 }
        return [this.fail(orphan, `chunk ${frame.index} of message ${frame.messageId} arrived before chunk 0`, false)]
      }
      const started: Partial = {
        messageId: frame.messageId,
        count: frame.count,
        parts: [],
        head: frame.data.slice(0, HEAD_CHARS),
        units: 0,
        bytes: undefined
      }
      return this.accept(started, frame)
    }
    if (frame.count !== current.count) {
      return [this.fail(current, `message ${frame.messageId} changed its chunk count`, false)]
    }
    if (frame.index !== current.parts.length) {
      const expected = current.parts.length
      const reason = `chunk ${frame.index} of message ${frame.messageId} came where ${expected} was due`
      return [this.fail(current, reason, false)]
    }
    return this.accept(current, frame)
  }

  /** True while a message is half-assembled. */
  get busy(): boolean {
    return this.partial !== undefined
  }

  private accept(partial: Partial, frame: ChunkFrame): Array<ChunkResult> {
    partial.units += frame.data.length
    // Encoding every chunk only to count its bytes cost 10 ms a MiB; under the bound the cap cannot be passed.
    if (partial.bytes !== undefined) partial.bytes += byteLength(frame.data)
    else if (partial.units * MAX_BYTES_PER_UNIT > this.limit) partial.bytes = byteLength(frame.data, partial.parts)
    if (partial.bytes !== undefined && partial.bytes > this.limit) {
      return [this.fail(partial, `message ${frame.messageId} exceeds ${this.limit} bytes`, true)]
    }
    partial.parts.push(frame.data)
    if (partial.parts.length < partial.count) {
      this.partial = partial
      return []
    }
    this.partial = undefined
    return [{ _tag: "Complete", text: partial.parts.join("") }]
  }

  private fail(partial: Partial, reason: string, tooLarge: boolean): ChunkResult {
    this.partial = undefined
    this.dropped = partial.messageId
    const bytes = partial.bytes ?? byteLength("", partial.parts)
    return { _tag: "Failed", reason, tooLarge, head: partial.head, bytes }
  }
}

const byteLength = (text: string, earlier: ReadonlyArray<string> = []): number =>
  earlier.reduce((sum, part) => sum + encoder.encode(part).length, encoder.encode(text).length)
