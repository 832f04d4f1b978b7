/**
 * Feed — the monitor's events: each session's history paged from the log (`desktop.events.history` until `more` is
 * false), then its live tail from `desktop.events.watch`, kept gap-free and without duplicates by seq per session
 * (a live event that arrives early waits until the log has caught up to it), and all sessions merged in time order.
 * It also remembers the sessions it saw (the last RECENT of them, in localStorage) so an ended session's history
 * stays reachable after it left Core's live list. It bumps `revision` at most once a frame and feeds each event once to
 * the tool-call Pairs; it renders nothing, and describes or filters nothing (Describe.ts, Monitor.tsx).
 */
import { DesktopSession, type WatchItem } from "@pedelec/contracts/Desktop"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { signal } from "@preact/signals"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { call, watch } from "../bridge/Desktop.ts"
import { Pairs } from "./Describe.ts"

const PAGE = 5_000
const RECENT = 20
const RECENT_KEY = "pedelec.monitor.recent"
/** How long to wait before asking the log again when a live event is ahead of it. */
const CATCH_UP_MS = 200

export interface Known {
  readonly session: DesktopSession
  readonly live: boolean
}

/** One session's events, seq 1…n without a hole, and the live ones that arrived ahead of the log. */
interface Log {
  readonly events: Array<SessionEvent>
  readonly ahead: Map<number, SessionEvent>
  loading: boolean
  loaded: boolean
  error: PedelecErrorWire | undefined
}

const readRecent = (): Array<DesktopSession> => {
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(RECENT_KEY) ?? "[]")
    const decoded = Schema.decodeUnknownExit(Schema.Array(DesktopSession))(raw)
    return Exit.isSuccess(decoded) ? [...decoded.value] : []
  } catch {
    return []
  }
}

const writeRecent = (sessions: ReadonlyArray<DesktopSession>) => {
  const newest = [...sessions].sort((a, b) => b.createdAt - a.createdAt).slice(0, RECENT)
  localStorage.setItem(RECENT_KEY, JSON.stringify(Schema.encodeSync(Schema.Array(DesktopSession))(newest)))
}

/** A k-way merge by `at`; each log is already in seq order, which it keeps. */
const merge = (logs: ReadonlyArray<ReadonlyArray<SessionEvent>>): Array<SessionEvent> => {
  const heads = logs.map(() => 0)
  const out: Array<SessionEvent> = []
  const total = logs.reduce((sum, log) => sum + log.length, 0)
  while (out.length < total) {
    let pick = -1
    for (let i = 0; i < logs.length; i++) {
      const head = logs[i]![heads[i]!]
      if (head !== undefined && (pick < 0 || head.at < logs[pick]![heads[pick]!]!.at)) pick = i
    }
    out.push(logs[pick]![heads[pick]!]!)
    heads[pick]! += 1
  }
  return out
}

/** Bumped (at most once a frame) whenever the feed changed. */
export const revision = signal(0)

const emptyLog = (): Log => ({ events: [], ahead: new Map(), loading: false, loaded: false, error: undefined })

/** The feed of one open monitor: `start` opens the watch first, so nothing published while the log is read is lost. */
export class Feed {
  private readonly known = new Map<SessionId, Known>(
    readRecent().map((s) => [s.sessionId, { session: s, live: false }])
  )
  private readonly logs = new Map<SessionId, Log>()
  readonly pairs = new Pairs()
  private merged: Array<SessionEvent> = []
  private rebuild = false
  private listed = false
  private frame: number | undefined
  private stopped = false
  private unwatch: () => void = () => undefined

  private readonly onError: (error: PedelecErrorWire) => void

  constructor(onError: (error: PedelecErrorWire) => void) {
    this.onError = onError
  }

  start() {
    for (const sessionId of this.known.keys()) this.logOf(sessionId)
    this.unwatch = watch("desktop.events.watch", { onValue: (item) => this.onItem(item), onError: this.onError })
  }

  stop() {
    this.stopped = true
    if (this.frame !== undefined) cancelAnimationFrame(this.frame)
    this.unwatch()
  }

  /** Every event of every session, in time order (per session: by seq). */
  all(): ReadonlyArray<SessionEvent> {
    return this.merged
  }

  sessions(): ReadonlyArray<Known> {
    return [...this.known.values()]
  }

  /** True once the watch listed the live sessions and every known session's history has been read. */
  loaded() {
    return this.listed && [...this.logs.values()].every((log) => log.loaded || log.error !== undefined)
  }

  private changed() {
    if (this.frame !== undefined || this.stopped) return
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined
      if (this.rebuild) this.merged = merge([...this.logs.values()].map((log) => log.events))
      this.rebuild = false
      revision.value += 1
    })
  }

  private append(log: Log, event: SessionEvent) {
    log.events.push(event)
    this.pairs.add(event)
    const last = this.merged.at(-1)
    if (!this.rebuild && (last === undefined || last.at <= event.at)) this.merged.push(event)
    else this.rebuild = true
  }

  /** Takes an event from either source: a duplicate is dropped, one ahead of the log waits for the gap to fill. */
  private accept(log: Log, event: SessionEvent) {
    const next = log.events.length + 1
    if (event.seq < next) return
    if (event.seq > next) {
      log.ahead.set(event.seq, event)
      return
    }
    this.append(log, event)
    for (let seq = next + 1; log.ahead.has(seq); seq++) {
      this.append(log, log.ahead.get(seq)!)
      log.ahead.delete(seq)
    }
    for (const seq of log.ahead.keys()) if (seq <= log.events.length) log.ahead.delete(seq)
  }

  private async page(sessionId: SessionId, log: Log) {
    while (!this.stopped) {
      const afterSeq = log.events.length
      const outcome = await call("desktop.events.history", { sessionId, afterSeq, limit: PAGE })
      if (!outcome.ok) {
        log.error = outcome.error
        return this.onError(outcome.error)
      }
      for (const event of outcome.value.events) this.accept(log, event)
      this.changed()
      if (!outcome.value.more || log.events.length === afterSeq) return
    }
  }

  private async read(sessionId: SessionId, log: Log) {
    if (log.loading || this.stopped) return
    log.loading = true
    await this.page(sessionId, log)
    log.loading = false
    log.loaded = true
    this.changed()
    // A live event still ahead of the log: the log had not written its predecessors yet; ask again shortly.
    if (log.ahead.size > 0 && log.error === undefined) setTimeout(() => void this.read(sessionId, log), CATCH_UP_MS)
  }

  private logOf(sessionId: SessionId) {
    const existing = this.logs.get(sessionId)
    if (existing !== undefined) return existing
    const log = emptyLog()
    this.logs.set(sessionId, log)
    void this.read(sessionId, log)
    return log
  }

  private know(session: DesktopSession, live: boolean) {
    this.known.set(session.sessionId, { session, live })
    this.logOf(session.sessionId)
  }

  private onEvent(event: SessionEvent) {
    const log = this.logOf(event.sessionId)
    this.accept(log, event)
    if (log.ahead.size > 0 && !log.loading) void this.read(event.sessionId, log)
    const seen = this.known.get(event.sessionId)
    if (seen !== undefined && event.type === "ended") this.known.set(event.sessionId, { ...seen, live: false })
  }

  private onItem(item: WatchItem) {
    if (item.kind === "sessions") {
      this.listed = true
      for (const session of item.sessions) this.know(session, true)
    } else if (item.kind === "opened") this.know(item.session, true)
    else this.onEvent(item.event)
    if (item.kind !== "event" || item.event.type === "ended") writeRecent(this.sessions().map((k) => k.session))
    this.changed()
  }
}
