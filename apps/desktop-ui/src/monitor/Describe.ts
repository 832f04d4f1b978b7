/**
 * Describe — what the monitor says about one event: its type's label and tone, a one-line summary, its JSON (kept
 * per event, so search and copy stringify each event once), and tool calls paired with how they ended
 * (tool_call ↔ tool_result or tool_call_cancelled by toolCallId) with the time between. Pure over events; it holds
 * no screen state and renders nothing.
 */
import type { SessionEvent, SessionEventType } from "@pedelec/contracts/Events"
import type { Tone } from "../ui/Kit.tsx"

type Of<T extends SessionEventType> = Extract<SessionEvent, { type: T }>
export type ToolCall = Of<"tool_call">
export type ToolEnd = Of<"tool_result"> | Of<"tool_call_cancelled">

export const TYPES: ReadonlyArray<SessionEventType> = [
  "status_changed",
  "chat_delta",
  "chat",
  "tool_call",
  "tool_result",
  "tool_call_cancelled",
  "turn_completed",
  "error",
  "ended"
]

export const TYPE_TONES: Readonly<Record<SessionEventType, Tone>> = {
  status_changed: "neutral",
  chat_delta: "neutral",
  chat: "info",
  tool_call: "warn",
  tool_result: "ok",
  tool_call_cancelled: "bad",
  turn_completed: "ok",
  error: "bad",
  ended: "neutral"
}

const clip = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text)

const json = new WeakMap<SessionEvent, string>()

/** The event as one line of JSON, computed once per event. */
export const jsonOf = (event: SessionEvent): string => {
  const cached = json.get(event)
  if (cached !== undefined) return cached
  const text = JSON.stringify(event)
  json.set(event, text)
  return text
}

export const summary = (event: SessionEvent): string => {
  switch (event.type) {
    case "chat":
      return clip(event.text)
    case "chat_delta":
      return clip(event.delta)
    case "status_changed":
      return `${event.previous} → ${event.status}${event.turnKind === undefined ? "" : ` (${event.turnKind} turn)`}`
    case "tool_call":
      return `${event.tool} ${clip(JSON.stringify(event.args))}`
    case "tool_result":
      return event.outcome.ok
        ? `${event.tool} ok ${clip(JSON.stringify(event.outcome.result) ?? "")}`
        : `${event.tool} failed ${event.outcome.error.code}: ${event.outcome.error.message}`
    case "tool_call_cancelled":
      return `cancelled: ${event.reason}`
    case "turn_completed":
      return `${event.reason}${event.text === "" ? "" : ` · ${clip(event.text)}`}`
    case "error":
      return `${event.error.code}: ${event.error.message}`
    case "ended":
      return `session ended: ${event.reason}`
  }
}

export interface Pair {
  readonly call?: ToolCall
  readonly end?: ToolEnd
}

/** Tool calls by id, built as the feed takes each event (once, in any order). */
export class Pairs {
  private readonly byId = new Map<string, Pair>()

  of(event: SessionEvent): Pair | undefined {
    return "toolCallId" in event ? this.byId.get(event.toolCallId) : undefined
  }

  add(event: SessionEvent) {
    if (event.type !== "tool_call" && event.type !== "tool_result" && event.type !== "tool_call_cancelled") return
    const pair = this.byId.get(event.toolCallId) ?? {}
    this.byId.set(event.toolCallId, event.type === "tool_call" ? { ...pair, call: event } : { ...pair, end: event })
  }
}

/** How long a paired call took, call to result, or undefined while it runs. */
export const durationOf = (pair: Pair | undefined) =>
  pair?.call === undefined || pair.end === undefined ? undefined : pair.end.at - pair.call.at

export const formatDuration = (ms: number) => (ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(2)} s`)
