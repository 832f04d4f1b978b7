/**
 * Detail — one event whole: its type, session, origin and time, the tool call it belongs to (the call and how it
 * ended, with the time between, each a link to that event), its JSON pretty-printed and a copy-as-JSON button.
 * The selection is the screen's; this file only shows it.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import { useState } from "preact/hooks"
import { Badge } from "../ui/Kit.tsx"
import { durationOf, formatDuration, type Pair, TYPE_TONES } from "./Describe.ts"

export const prettyJson = (event: SessionEvent) => JSON.stringify(event, null, 2)

export const stamp = (at: number) => {
  const d = new Date(at)
  const hms = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })
  return `${hms}.${String(d.getMilliseconds()).padStart(3, "0")}`
}

/** Copies the event's JSON; says whether it worked, in place. */
export const CopyJson = ({ event, label = "Copy JSON" }: { readonly event: SessionEvent; readonly label?: string }) => {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle")
  const copy = (e: Event) => {
    e.stopPropagation()
    navigator.clipboard.writeText(prettyJson(event)).then(
      () => setState("copied"),
      () => setState("failed")
    )
  }
  return (
    <button type="button" class="button small" title="Copy this event as JSON" onClick={copy}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy refused" : label}
    </button>
  )
}

const PairFacts = (props: { readonly pair: Pair; readonly onPick: (event: SessionEvent) => void }) => {
  const { call, end } = props.pair
  const took = durationOf(props.pair)
  const link = (event: SessionEvent | undefined, missing: string) =>
    event === undefined ? (
      <span class="muted">{missing}</span>
    ) : (
      <button type="button" class="linkish" onClick={() => props.onPick(event)}>
        #{event.seq} {event.type} at {stamp(event.at)}
      </button>
    )
  return (
    <dl class="facts mon-pair">
      <dt>Call</dt>
      <dd>{link(call, "not in this log")}</dd>
      <dt>Ended by</dt>
      <dd>{link(end, "still waiting for the page")}</dd>
      <dt>Took</dt>
      <dd data-duration>{took === undefined ? <span class="muted">running</span> : formatDuration(took)}</dd>
    </dl>
  )
}

export const Detail = (props: {
  readonly event: SessionEvent
  readonly origin: string | undefined
  readonly pair: Pair | undefined
  readonly onPick: (event: SessionEvent) => void
  readonly onClose: () => void
}) => {
  const { event } = props
  return (
    <aside class="mon-detail" aria-label="Event details" data-detail={`${event.sessionId}:${event.seq}`}>
      <header>
        <Badge tone={TYPE_TONES[event.type]}>{event.type}</Badge>
        <span class="muted">#{event.seq}</span>
        <span class="spacer" />
        <CopyJson event={event} />
        <button type="button" class="button small" onClick={props.onClose} aria-label="Close details">
          Close
        </button>
      </header>
      <dl class="facts">
        <dt>Session</dt>
        <dd class="mono">{event.sessionId}</dd>
        <dt>Origin</dt>
        <dd>{props.origin ?? <span class="muted">unknown</span>}</dd>
        <dt>Time</dt>
        <dd>
          {new Date(event.at).toLocaleDateString()} {stamp(event.at)}
        </dd>
      </dl>
      {props.pair === undefined ? null : <PairFacts pair={props.pair} onPick={props.onPick} />}
      <pre class="mon-json">{prettyJson(event)}</pre>
    </aside>
  )
}
