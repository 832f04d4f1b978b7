/**
 * AgentProcess/Descendants — every process an agent CLI started, kept known while it lives (updated from a table
 * the shared AgentProcess/Watch scan hands it), and the release sequence that ends them all: SIGINT to every group
 * seen, a grace, then ProcessTree's kill of the whole tree. It does not start the CLI or read its output
 * (AgentProcess), nor scan on a timer (Watch); ProcessTree owns the process table and the signals.
 */
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

/** Asks every group seen to stop, waits a grace, then kills whatever is left and waits for node to reap the CLI. */
export const release = Effect.fnUntraced(function* (seen: Seen, exit: Effect.Effect<unknown>) {
  yield* track(seen)
  if ((yield* liveOf(seen)).length === 0) return
  yield* ProcessTree.signalGroups([...seen.values()], "SIGINT")
  for (let waited = 0; waited < INTERRUPT_GRACE_MS && (yield* liveOf(seen)).length > 0; waited += 100) {
    yield* Effect.sleep(100)
  }
  yield* track(seen)
  yield* ProcessTree.killTree([...seen.values()], { graceMs: TERM_GRACE_MS })
  // A killed CLI can be a zombie for a moment; once node has reaped it, its pid is really free.
  yield* Effect.timeoutOption(exit, EXIT_REAP_MS)
})
