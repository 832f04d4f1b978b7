/**
 * AgentProcess/Descendants — every process an agent CLI started, kept known while it lives (updated from a table
 * the shared AgentProcess/Watch scan hands it), and the release sequence that ends them all: SIGINT leaves first, a
 * grace, then ProcessTree's kill of the whole tree. It does not start the CLI or read its output
 * (AgentProcess), nor scan on a timer (Watch); ProcessTree owns the process table and the signals.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ProcessTree from "../ProcessTree.ts"
import type { ProcessRecord } from "../Provider.ts"

/** After SIGINT, how long the CLI gets to wind down before the tree is killed. */
const INTERRUPT_GRACE_MS = 1_500
/** After SIGTERM, how long before SIGKILL. */
const TERM_GRACE_MS = 1_000
const EXIT_REAP_MS = 2_000

/** Every process seen, by pid and start time (a pid may be reused by a stranger once its process is gone). */
export type Seen = Map<string, ProcessRecord>

const keyOf = (record: ProcessRecord) => `${record.pid}:${record.startTime}`

export const seenFrom = (leader: ProcessRecord): Seen => new Map([[keyOf(leader), leader]])

/** ESRCH: no such pid at all. Asked of the kernel, not of a table a failed read (EMFILE) could have left short. */
const pidGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

/** Dead for good: a zombie, a pid now held by another process (another start time), or no such pid. */
const isDead = (record: ProcessRecord, current: ProcessTree.ProcessInfo | undefined) =>
  current === undefined ? pidGone(record.pid) : !ProcessTree.matches(record, current)

/**
 * Descendants are found through parent links, which a child loses when its parent dies: this looks from every
 * process already seen, and at their groups, so a setsid grandchild stays known. A record no longer in the table
 * and dead for good is dropped: the set stays as small as what is alive, and so does every later look at it.
 */
export const update = (seen: Seen, table: ReadonlyArray<ProcessTree.ProcessInfo>): void => {
  const byPid = new Map(table.map((info) => [info.pid, info]))
  for (const [key, record] of seen) if (isDead(record, byPid.get(record.pid))) seen.delete(key)
  const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
  const groups = new Set(live.map((r) => r.pgid))
  const found = [
    ...ProcessTree.descendantsOf(
      live.map((r) => r.pid),
      table
    ),
    ...table.filter((info) => groups.has(info.pgid) && info.pid !== process.pid && !info.state.startsWith("Z"))
  ]
  for (const info of found) seen.set(keyOf(info), { pid: info.pid, pgid: info.pgid, startTime: info.startTime })
}

/** One look now, on a table of its own: what release needs before it signals. */
export const track = (seen: Seen) => Effect.map(ProcessTree.snapshot, (table) => update(seen, table))

/** The processes seen that are still alive. */
export const liveOf = (seen: Seen) => Effect.suspend(() => ProcessTree.liveRecords([...seen.values()]))

/** How often an unwind looks again: a parent reaps a child that died within a few ms. */
const UNWIND_POLL_MS = 20

/** SIGINT to the processes seen that are alive and childless (not even a zombie child left); returns how many live. */
const interruptLeaves = (seen: Seen, table: ReadonlyArray<ProcessTree.ProcessInfo>, asked: Set<string>) => {
  update(seen, table)
  const byPid = new Map(table.map((info) => [info.pid, info]))
  const parents = new Set(table.map((info) => info.ppid))
  const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
  for (const record of live) {
    if (parents.has(record.pid) || asked.has(keyOf(record)) || record.pid <= 1 || record.pid === process.pid) continue
    asked.add(keyOf(record))
    try {
      process.kill(record.pid, "SIGINT")
    } catch {
      // Gone since the look: nothing to ask.
    }
  }
  return live.length
}

/**
 * Asks the tree to stop leaves first: a process gets SIGINT once none of its children is left, not even as a zombie,
 * so every parent is still there to reap its child. All at once, a parent dies first (codex's bwrap does on SIGINT)
 * and its orphaned child's zombie waits for PID 1, which in a container may never reap it (issue 14). A level that
 * ignores SIGINT holds its parents back for half the grace; then every group seen is asked, as a turn cancel always
 * asked the CLI. True once nothing seen is alive.
 */
const unwind = Effect.fnUntraced(function* (seen: Seen) {
  const asked = new Set<string>()
  // Timed by the clock, not by rounds: a look at the whole table takes longer on a loaded machine.
  const startedAt = yield* Clock.currentTimeMillis
  let groupsAsked = false
  for (let waited = 0; waited < INTERRUPT_GRACE_MS; waited = (yield* Clock.currentTimeMillis) - startedAt) {
    if (interruptLeaves(seen, yield* ProcessTree.snapshot, asked) === 0) return true
    if (!groupsAsked && waited >= INTERRUPT_GRACE_MS / 2) {
      groupsAsked = true
      yield* ProcessTree.signalGroups([...seen.values()], "SIGINT")
    }
    yield* Effect.sleep(UNWIND_POLL_MS)
  }
  return (yield* liveOf(seen)).length === 0
})

/** Asks the tree to stop (leaves first), waits a grace, then kills whatever is left and waits for node to reap the CLI. */
export const release = Effect.fnUntraced(function* (seen: Seen, exit: Effect.Effect<unknown>) {
  yield* track(seen)
  if ((yield* liveOf(seen)).length === 0) return
  if (!(yield* unwind(seen))) {
    yield* track(seen)
    yield* ProcessTree.killTree([...seen.values()], { graceMs: TERM_GRACE_MS })
  }
  // A killed CLI can be a zombie for a moment; once node has reaped it, its pid is really free.
  yield* Effect.timeoutOption(exit, EXIT_REAP_MS)
})
