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

interface Partial {
  readonly messageId: string
  readonly count: number
  readonly parts: Array<string>
  readonly head: string
  bytes: number
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
        const orphan = { messageId: frame.messageId, count: frame.count, parts: [], head: "", bytes: 0 }
        return [this.fail(orphan, `chunk ${frame.index} of message ${frame.messageId} arrived before chunk 0`, false)]
      }
      const started: Partial = {
        messageId: frame.messageId,
        count: frame.count,
        parts: [],
        head: frame.data.slice(0, HEAD_CHARS),
        bytes: 0
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
    partial.bytes += encoder.encode(frame.data).length
    if (partial.bytes > this.limit) {
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
    return { _tag: "Failed", reason, tooLarge, head: partial.head, bytes: partial.bytes }
  }
}
