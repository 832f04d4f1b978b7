/**
 * Monitor — the event monitor: every event of the sessions this window knows (live ones, and the recently ended
 * ones it saw), history from the log first and then the live tail (monitor/Feed.ts), narrowed by session, origin,
 * type and text (monitor/Filters.tsx), in a virtualised list (monitor/VirtualList.tsx) whose rows show the time,
 * session, type, a summary and, for a tool call, how long it took; a click shows the event whole
 * (monitor/Detail.tsx). It marks `monitor:open` and measures `monitor:first-paint` (open to the first frame with
 * the whole history painted) for the tests. The Sessions screen reaches it through `showEvents`.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { generation } from "../bridge/Desktop.ts"
import { durationOf, formatDuration, type Pairs, summary, TYPE_TONES } from "../monitor/Describe.ts"
import { CopyJson, Detail, stamp } from "../monitor/Detail.tsx"
import { Feed, revision } from "../monitor/Feed.ts"
import { ALL, clearFilters, filtering, filterKey, narrow, sessionFilter, Toolbar } from "../monitor/Filters.tsx"
import { VirtualList } from "../monitor/VirtualList.tsx"
import { Badge, Empty, ErrorNote, Loading, ScreenHeader } from "../ui/Kit.tsx"

const ROW_HEIGHT = 32

/** What the Sessions screen's "Events" action does before it shows this screen: only that session's events. */
export const showEvents = (sessionId: string) => {
  clearFilters()
  sessionFilter.value = sessionId
}

const keyOf = (event: SessionEvent) => `${event.sessionId}:${event.seq}`

/** One feed per connection: started on mount and again after each reconnect. */
const useFeed = () => {
  const [feed, setFeed] = useState<Feed | undefined>(undefined)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const [attempt, setAttempt] = useState(0)
  const round = generation.value
  useEffect(() => {
    void round
    void attempt
    performance.clearMarks("monitor:open")
    performance.clearMeasures("monitor:first-paint")
    performance.mark("monitor:open")
    setError(undefined)
    const started = new Feed(setError)
    started.start()
    setFeed(started)
    return () => started.stop()
  }, [round, attempt])
  return { feed, error, retry: () => setAttempt((n) => n + 1) }
}

/** After the first render with the whole history, the next frame is its paint: measure open → there, once. */
const useFirstPaint = (ready: boolean) => {
  const measured = useRef(false)
  useEffect(() => {
    if (!ready || measured.current) return
    measured.current = true
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        performance.mark("monitor:painted")
        performance.measure("monitor:first-paint", "monitor:open", "monitor:painted")
      })
    )
  }, [ready])
}

const Row = (props: {
  readonly event: SessionEvent
  readonly pairs: Pairs
  readonly selected: boolean
  readonly showSession: boolean
  readonly onPick: (event: SessionEvent) => void
}) => {
  const { event } = props
  const took = durationOf(props.pairs.of(event))
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row holds its own copy button, so it cannot be a <button>.
    <div
      class={props.selected ? "ev selected" : "ev"}
      data-seq={event.seq}
      data-type={event.type}
      data-session={event.sessionId}
      role="button"
      tabIndex={-1}
      onClick={() => props.onPick(event)}
      onKeyDown={(e) => (e.key === "Enter" ? props.onPick(event) : undefined)}
    >
      <span class="ev-seq">#{event.seq}</span>
      <span class="ev-time">{stamp(event.at)}</span>
      {props.showSession ? <span class="ev-session mono">{event.sessionId.slice(0, 8)}</span> : null}
      <span class="ev-type">
        <Badge tone={TYPE_TONES[event.type]}>{event.type}</Badge>
      </span>
      <span class="ev-summary">{summary(event)}</span>
      <span class="ev-took" data-duration={took}>
        {took === undefined ? "" : formatDuration(took)}
      </span>
      <CopyJson event={event} label="Copy" />
    </div>
  )
}

const States = (props: {
  readonly feed: Feed
  readonly shown: number
  readonly error: PedelecErrorWire | undefined
  readonly onRetry: () => void
}) => {
  const total = props.feed.all().length
  if (props.error !== undefined)
    return (
      <ErrorNote
        error={props.error}
        todo="The monitor could not read the event log. Check that Core runs (Health), then try again."
        onRetry={props.onRetry}
      />
    )
  if (!props.feed.loaded() && total === 0) return <Loading label="Reading the event logs…" />
  if (props.feed.sessions().length === 0)
    return <Empty title="No sessions yet">When a page starts an agent, its events show up here as they happen.</Empty>
  if (props.shown === 0 && filtering())
    return (
      <Empty title="No event matches these filters">
        <button type="button" class="button small" onClick={clearFilters}>
          Clear filters
        </button>
      </Empty>
    )
  if (total === 0) return <Empty title="No events yet">This session has not done anything so far.</Empty>
  return null
}

export const Monitor = () => {
  const { feed, error, retry } = useFeed()
  const [picked, setPicked] = useState<SessionEvent | undefined>(undefined)
  const rev = revision.value
  const all = feed?.all() ?? []
  const sessions = feed?.sessions() ?? []
  const origins = useMemo(() => new Map(sessions.map((k) => [k.session.sessionId, k.session.origin])), [feed, rev])
  const filters = filterKey()
  // rev is when `all` grew in place; filters, when a filter changed.
  const shown = useMemo(() => narrow(all, (id) => origins.get(id)), [all, rev, origins, filters])
  const ready = feed?.loaded() === true
  useFirstPaint(ready && all.length > 0)
  return (
    <div class="screen monitor" data-screen="monitor" data-state={ready ? "ready" : "loading"}>
      <ScreenHeader title="Event monitor" subtitle="History from the logs, then every event live, for every session.">
        <span class="mon-count" data-shown={shown.length} data-total={all.length}>
          {shown.length === all.length
            ? `${all.length.toLocaleString("en")} events`
            : `${shown.length.toLocaleString("en")} of ${all.length.toLocaleString("en")} events`}
        </span>
      </ScreenHeader>
      <Toolbar sessions={sessions} />
      {feed === undefined ? null : <States feed={feed} shown={shown.length} error={error} onRetry={retry} />}
      <div class={picked === undefined ? "mon-body" : "mon-body with-detail"}>
        {shown.length === 0 || feed === undefined ? null : (
          <VirtualList
            count={shown.length}
            rowHeight={ROW_HEIGHT}
            label="Events"
            keyOf={(i) => keyOf(all[shown[i]!]!)}
            row={(i) => (
              <Row
                event={all[shown[i]!]!}
                pairs={feed.pairs}
                selected={picked !== undefined && keyOf(picked) === keyOf(all[shown[i]!]!)}
                showSession={sessionFilter.value === ALL}
                onPick={setPicked}
              />
            )}
          />
        )}
        {picked === undefined || feed === undefined ? null : (
          <Detail
            event={picked}
            origin={origins.get(picked.sessionId)}
            pair={feed.pairs.of(picked)}
            onPick={setPicked}
            onClose={() => setPicked(undefined)}
          />
        )}
      </div>
    </div>
  )
}
