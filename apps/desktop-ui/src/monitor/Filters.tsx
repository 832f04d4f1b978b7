/**
 * Filters — what the monitor shows: the chosen session (or all), origin, event types and search text, as signals
 * that outlive the screen (the Sessions screen's "Events" action sets the session), the predicate they make, and
 * the toolbar that edits them. Narrowing yields a list of indices into the feed, so the rows themselves are never
 * re-rendered to hide them. It reads no events from Core.
 */
import type { SessionEvent, SessionEventType } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { signal } from "@preact/signals"
import { jsonOf, summary, TYPES } from "./Describe.ts"
import type { Known } from "./Feed.ts"

export const ALL = "all"

export const sessionFilter = signal<string>(ALL)
export const originFilter = signal<string>(ALL)
/** The types hidden (empty: every type shows). */
export const hiddenTypes = signal<ReadonlySet<SessionEventType>>(new Set())
export const searchText = signal("")

export const clearFilters = () => {
  sessionFilter.value = ALL
  originFilter.value = ALL
  hiddenTypes.value = new Set()
  searchText.value = ""
}

export const filtering = () =>
  sessionFilter.value !== ALL || originFilter.value !== ALL || hiddenTypes.value.size > 0 || searchText.value !== ""

/** Changes exactly when a filter does (the screen's memo key). */
export const filterKey = () =>
  [sessionFilter.value, originFilter.value, [...hiddenTypes.value].join(","), searchText.value].join("\u0000")

const lower = new WeakMap<SessionEvent, string>()
const haystack = (event: SessionEvent) => {
  const cached = lower.get(event)
  if (cached !== undefined) return cached
  const text = `${summary(event)}\n${jsonOf(event)}`.toLowerCase()
  lower.set(event, text)
  return text
}

/** The indices of the events that pass every filter. */
export const narrow = (
  events: ReadonlyArray<SessionEvent>,
  originOf: (sessionId: SessionId) => string | undefined
): ReadonlyArray<number> => {
  const session = sessionFilter.value
  const origin = originFilter.value
  const hidden = hiddenTypes.value
  const needle = searchText.value.trim().toLowerCase()
  const out: Array<number> = []
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (session !== ALL && event.sessionId !== session) continue
    if (origin !== ALL && originOf(event.sessionId) !== origin) continue
    if (hidden.has(event.type)) continue
    if (needle !== "" && !haystack(event).includes(needle)) continue
    out.push(i)
  }
  return out
}

const toggle = (type: SessionEventType) => {
  const next = new Set(hiddenTypes.value)
  if (next.has(type)) next.delete(type)
  else next.add(type)
  hiddenTypes.value = next
}

export const sessionLabel = ({ session, live }: Known) =>
  `${session.origin} · ${session.provider} · ${session.sessionId.slice(0, 8)}${live ? "" : " (ended)"}`

const Select = (props: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly options: ReadonlyArray<readonly [string, string]>
  readonly onChange: (value: string) => void
}) => (
  <label class="mon-field" for={props.id}>
    <span>{props.label}</span>
    <select class="mon-input" id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value={ALL}>All</option>
      {props.options.map(([value, text]) => (
        <option value={value} key={value}>
          {text}
        </option>
      ))}
    </select>
  </label>
)

export const Toolbar = ({ sessions }: { readonly sessions: ReadonlyArray<Known> }) => {
  const origins = [...new Set(sessions.map((k) => k.session.origin))].sort()
  return (
    <div class="mon-toolbar">
      <div class="mon-row">
        <Select
          id="mon-session"
          label="Session"
          value={sessionFilter.value}
          options={sessions.map((k) => [k.session.sessionId, sessionLabel(k)] as const)}
          onChange={(v) => (sessionFilter.value = v)}
        />
        <Select
          id="mon-origin"
          label="Origin"
          value={originFilter.value}
          options={origins.map((o) => [o, o] as const)}
          onChange={(v) => (originFilter.value = v)}
        />
        <label class="mon-field grow" for="mon-search">
          <span>Search</span>
          <input
            id="mon-search"
            class="mon-input grow"
            type="search"
            placeholder="Text, tool name, error code…"
            value={searchText.value}
            onInput={(e) => (searchText.value = e.currentTarget.value)}
          />
        </label>
      </div>
      <fieldset class="mon-types">
        <legend>Types</legend>
        {TYPES.map((type) => (
          <button
            type="button"
            key={type}
            class={hiddenTypes.value.has(type) ? "chip off" : "chip"}
            aria-pressed={!hiddenTypes.value.has(type)}
            onClick={() => toggle(type)}
          >
            {type}
          </button>
        ))}
      </fieldset>
    </div>
  )
}
