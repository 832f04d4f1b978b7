/**
 * Sessions — every live session of every origin (origin, provider, model, effort, status, workspace, started, last
 * activity) with End. The list is `desktop.events.watch`: the sessions live when it began, each one that goes
 * live, and every event — a session goes from the list at its `ended` event, so one a page ends disappears at once.
 * After a reconnect the watch starts again and its first item replaces the list. Ending is Core's; a row's Events
 * opens the event monitor (Monitor.tsx) on that session.
 */
import type { DesktopSession, WatchItem } from "@pedelec/contracts/Desktop"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { SessionStatus } from "@pedelec/contracts/Session"
import { useEffect, useState } from "preact/hooks"
import { call, generation, watch } from "../bridge/Desktop.ts"
import { go } from "../ui/App.tsx"
import { ago, Badge, Empty, ErrorNote, Loading, ScreenHeader, type Tone } from "../ui/Kit.tsx"
import { showEvents } from "./Monitor.tsx"

type Live = ReadonlyArray<DesktopSession>

/** The list after one watch item. */
const apply = (sessions: Live, item: WatchItem): Live => {
  if (item.kind === "sessions") return item.sessions
  if (item.kind === "opened") return [...sessions.filter((s) => s.sessionId !== item.session.sessionId), item.session]
  const { event } = item
  if (event.type === "ended") return sessions.filter((s) => s.sessionId !== event.sessionId)
  return sessions.map((s) =>
    s.sessionId !== event.sessionId
      ? s
      : {
          ...s,
          lastActivityAt: event.at,
          lastSeq: event.seq,
          ...(event.type === "status_changed" ? { status: event.status } : {})
        }
  )
}

const TONES: Readonly<Record<SessionStatus, Tone>> = {
  idle: "neutral",
  running: "info",
  waiting_tool_result: "warn",
  ended: "neutral",
  error: "bad"
}

const STATUS_WORDS: Readonly<Record<SessionStatus, string>> = {
  idle: "Idle",
  running: "Running",
  waiting_tool_result: "Waiting for the page",
  ended: "Ended",
  error: "Failed"
}

const time = (at: number) =>
  new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })

/** The event monitor, narrowed to this session. */
const openEvents = (session: DesktopSession) => {
  showEvents(session.sessionId)
  go("monitor")
}

const Row = (props: {
  readonly session: DesktopSession
  readonly now: number
  readonly onEnd: (s: DesktopSession) => void
}) => {
  const { session } = props
  return (
    <tr data-session={session.sessionId}>
      <td class="origin">{session.origin}</td>
      <td>{session.provider}</td>
      <td class="mono">{session.model ?? <span class="muted">default</span>}</td>
      <td>{session.effortLevel}</td>
      <td>
        <Badge tone={TONES[session.status]}>{STATUS_WORDS[session.status]}</Badge>
      </td>
      <td class="path" title={session.workspace.path}>
        {session.workspace.managed ? <span class="muted">managed · </span> : null}
        {session.workspace.path.split(/[\\/]/).slice(-2).join("/")}
      </td>
      <td>{time(session.createdAt)}</td>
      <td>{ago(session.lastActivityAt, props.now)}</td>
      <td>
        <div class="row-actions">
          <button type="button" class="button small" onClick={() => openEvents(session)}>
            Events
          </button>
          <button type="button" class="button small danger" onClick={() => props.onEnd(session)}>
            End
          </button>
        </div>
      </td>
    </tr>
  )
}

const Table = (props: { readonly sessions: Live; readonly onEnd: (s: DesktopSession) => void }) => {
  const now = Date.now()
  return (
    <div class="table-wrap">
      <table class="sessions">
        <thead>
          <tr>
            {["Origin", "Provider", "Model", "Effort", "Status", "Workspace", "Started", "Last activity", ""].map(
              (h) => (
                <th key={h}>{h}</th>
              )
            )}
          </tr>
        </thead>
        <tbody>
          {props.sessions.map((session) => (
            <Row session={session} now={now} onEnd={props.onEnd} key={session.sessionId} />
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** The live list, kept by the watch; restarted on each reconnect. */
const useLiveSessions = () => {
  const [sessions, setSessions] = useState<Live | undefined>(undefined)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const round = generation.value
  useEffect(() => {
    void round
    setError(undefined)
    return watch("desktop.events.watch", {
      onValue: (item) => setSessions((current) => apply(current ?? [], item)),
      onError: setError
    })
  }, [round])
  return { sessions, error, setSessions }
}

export const Sessions = () => {
  const { sessions, error, setSessions } = useLiveSessions()
  const [endError, setEndError] = useState<PedelecErrorWire | undefined>(undefined)
  const end = async (session: DesktopSession) => {
    const outcome = await call("desktop.session.end", { sessionId: session.sessionId })
    setEndError(outcome.ok || outcome.error.code === "SESSION_NOT_FOUND" ? undefined : outcome.error)
    if (outcome.ok) setSessions((current) => current?.filter((s) => s.sessionId !== session.sessionId))
  }
  return (
    <div class="screen" data-screen="sessions">
      <ScreenHeader title="Sessions" subtitle="Every agent session running now, for every site." />
      {endError === undefined ? null : <ErrorNote error={endError} />}
      {error !== undefined && sessions === undefined ? <ErrorNote error={error} /> : null}
      {sessions === undefined && error === undefined ? <Loading label="Loading sessions…" /> : null}
      {sessions !== undefined && sessions.length === 0 ? (
        <Empty title="No live sessions">When a page starts an agent, its session shows up here.</Empty>
      ) : null}
      {sessions !== undefined && sessions.length > 0 ? <Table sessions={sessions} onEnd={(s) => void end(s)} /> : null}
    </div>
  )
}
