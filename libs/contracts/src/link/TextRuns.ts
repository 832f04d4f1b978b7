/**
 * TextRuns — what a `textRefs` subscription (HostLink's HostTextRef) has carried that a later event may name instead
 * of carrying its text again: the chat_delta texts since its turn's last `chat`, and that `chat`. One per
 * subscription on each end, fed every event in the order it crossed: the host asks `refFor` before it sends, the
 * extension `textOf` when a ref arrives; both record with `carried`, so both hold the same runs. Pure, no Effect.
 */
import type { SessionEvent } from "../Events.ts"
import { HOST_LIMITS } from "./HostLink.ts"

/** Texts below this cross whole: a ref saves nothing worth a second path for them. */
export const MIN_REF_TEXT = 32 * 1024

type Texted = Extract<SessionEvent, { readonly type: "chat" | "turn_completed" }>

interface Run {
  readonly turnId: string
  readonly fromSeq: number
  toSeq: number
  readonly parts: Array<string>
  units: number
}

const joined = (run: Run): string => (run.parts.length === 1 ? run.parts[0]! : run.parts.join(""))

export class TextRuns {
  #run: Run | undefined
  #chat: { readonly turnId: string; readonly seq: number; readonly text: string } | undefined

  /** The seqs `event`'s text can be sent as, when it is exactly what this subscription carried for it. */
  refFor(event: Texted): { readonly fromSeq: number; readonly toSeq: number } | undefined {
    if (event.text.length < MIN_REF_TEXT) return undefined
    if (event.type === "turn_completed") {
      const chat = this.#chat
      const same = chat !== undefined && chat.turnId === event.turnId && chat.text === event.text
      return same ? { fromSeq: chat.seq, toSeq: chat.seq } : undefined
    }
    const run = this.#run
    if (run === undefined || run.turnId !== event.turnId || run.units !== event.text.length) return undefined
    return joined(run) === event.text ? { fromSeq: run.fromSeq, toSeq: run.toSeq } : undefined
  }

  /** The text a ref names, when this end carried exactly that run; undefined when it did not (something was lost). */
  textOf(event: Texted, fromSeq: number, toSeq: number): string | undefined {
    if (event.type === "turn_completed") {
      const chat = this.#chat
      const held = chat !== undefined && chat.turnId === event.turnId && chat.seq === fromSeq && fromSeq === toSeq
      return held ? chat.text : undefined
    }
    const run = this.#run
    const held = run !== undefined && run.turnId === event.turnId && run.fromSeq === fromSeq && run.toSeq === toSeq
    return held ? joined(run) : undefined
  }

  /** Records an event that crossed whole (or was rebuilt whole). */
  carried(event: SessionEvent): void {
    switch (event.type) {
      case "chat_delta": {
        const run = this.#run
        if (run !== undefined && run.turnId === event.turnId) {
          run.parts.push(event.delta)
          run.toSeq = event.seq
          run.units += event.delta.length
        } else {
          const parts = [event.delta]
          this.#run = { turnId: event.turnId, fromSeq: event.seq, toSeq: event.seq, parts, units: event.delta.length }
        }
        // Bounded: a run past the logical cap can name no chat (none is that long), so it is not kept.
        if (this.#run!.units > HOST_LIMITS.maxLogicalMessage) this.#run = undefined
        return
      }
      case "chat":
        this.#run = undefined
        this.#chat = { turnId: event.turnId, seq: event.seq, text: event.text }
        return
      case "turn_completed":
        this.reset()
    }
  }

  /** Something on the subscription was lost: nothing carried before it may be named. */
  reset(): void {
    this.#run = undefined
    this.#chat = undefined
  }
}
