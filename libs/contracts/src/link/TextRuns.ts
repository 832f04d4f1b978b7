/**
 * TextRuns — what a `textRefs` subscription has carried that a later event may name instead of carrying its text
 * again: the chat_delta texts since its turn's last `chat`, and that `chat`. One on each end of a link, fed every
 * event in the order it crossed: per subscription from Core to the extension (Core's `session.subscribe_refs`
 * stream sends, the native host passes each crossing on as it is as a HostTextRef), per session on a page port
 * (PageTextRef). The sender's `send` says how an event crosses, the receiver's `receive` what a crossing stands for;
 * both record what crossed, so both hold the same runs. A ref is only ever sent for a text that is exactly what was
 * carried, and resolved only to the same run, so a loss on the way makes a ref unresolvable, never wrong. A receiving
 * end that never sends (the page) uses TextRunsReceiver, which leaves `send` out of its bundle. Pure, no Effect.
 */
import type { SessionEvent } from "../Events.ts"
import { HOST_LIMITS } from "./HostLimits.ts"

/** Texts below this cross whole: a ref saves nothing worth a second path for them. */
export const MIN_REF_TEXT = 32 * 1024

type Texted = Extract<SessionEvent, { readonly type: "chat" | "turn_completed" }>

/** An event as it crosses a link: whole, or with its text emptied and named by the seqs it was carried as. */
export type Crossing =
  | { readonly kind: "event"; readonly event: SessionEvent }
  | { readonly kind: "text_ref"; readonly event: Texted; readonly fromSeq: number; readonly toSeq: number }

/** What a ref may name: the turn's chat_delta texts since its last chat, or that chat (its one part). */
interface Held {
  readonly type: "chat_delta" | "chat"
  readonly turnId: string
  readonly fromSeq: number
  toSeq: number
  readonly parts: Array<string>
  units: number
}

const hold = (event: Extract<SessionEvent, { readonly type: Held["type"] }>, text: string): Held => ({
  type: event.type,
  turnId: event.turnId,
  fromSeq: event.seq,
  toSeq: event.seq,
  parts: [text],
  units: text.length
})

const joined = (held: Held): string => (held.parts.length === 1 ? held.parts[0]! : held.parts.join(""))

/** The receiving half: what a crossing stands for. */
export class TextRunsReceiver {
  protected held: Held | undefined

  /** The event a crossing stands for (recorded as carried); undefined, with everything held dropped, for a lost text. */
  receive(crossing: Crossing): SessionEvent | undefined {
    const held = crossing.kind === "text_ref" ? this.heldFor(crossing.event) : undefined
    const event =
      crossing.kind === "event"
        ? crossing.event
        : held?.fromSeq === crossing.fromSeq && held.toSeq === crossing.toSeq
          ? { ...crossing.event, text: joined(held) }
          : undefined
    if (event === undefined) this.reset()
    else this.carried(event)
    return event
  }

  /** Something on the link was lost: nothing carried before it may be named. */
  reset(): void {
    this.held = undefined
  }

  /** What a ref of `event` names, when this end holds it: a chat's deltas, a completion's chat, of its turn. */
  protected heldFor(event: Texted): Held | undefined {
    const held = this.held
    const type = event.type === "chat" ? "chat_delta" : "chat"
    return held?.type === type && held.turnId === event.turnId ? held : undefined
  }

  protected carried(event: SessionEvent): void {
    const held = this.held
    if (event.type === "chat_delta") {
      if (held?.type === "chat_delta" && held.turnId === event.turnId) {
        held.parts.push(event.delta)
        held.toSeq = event.seq
        held.units += event.delta.length
      } else this.held = hold(event, event.delta)
      // Bounded: a run past the logical cap can name no chat (none is that long), so it is not kept.
      if (this.held!.units > HOST_LIMITS.maxLogicalMessage) this.held = undefined
    } else if (event.type === "chat") this.held = hold(event, event.text)
    else if (event.type === "turn_completed") this.held = undefined
  }
}

/** Both halves: a sending end also says how an event crosses. */
export class TextRuns extends TextRunsReceiver {
  /** How `event` crosses (recorded as carried): as a ref when its text is exactly what this end carried for it. */
  send(event: SessionEvent): Crossing {
    const ref = event.type === "chat" || event.type === "turn_completed" ? this.#refFor(event) : undefined
    this.carried(event)
    return ref ?? { kind: "event", event }
  }

  #refFor(event: Texted): Crossing | undefined {
    const held = this.heldFor(event)
    const { text } = event
    if (held === undefined || text.length < MIN_REF_TEXT || held.units !== text.length) return undefined
    if (joined(held) !== text) return undefined
    return { kind: "text_ref", event: { ...event, text: "" }, fromSeq: held.fromSeq, toSeq: held.toSeq }
  }
}
