/**
 * AgentProcess/Descendants — every process an agent CLI started, kept known while it lives, and the release
 * sequence that ends them all: SIGINT to every group seen, a grace, then ProcessTree's kill of the whole tree. It
 * does not start the CLI or read its output (AgentProcess); ProcessTree owns the process table and the signals.
 */
import * as Effect from "effect/Effect"
import * as ProcessTree from "../ProcessTree.ts"
import type { ProcessRecord } from "../Provider.ts"

const TRACK_INTERVAL_MS = 200
/** After SIGINT, how long the CLI gets to wind down before the tree is killed. */
const INTERRUPT_GRACE_MS = 1_500
/** After SIGTERM, how long before SIGKILL. */
const TERM_GRACE_MS = 1_000
const EXIT_REAP_MS = 2_000

/** Every process seen, by pid and start time (a pid may be reused by a stranger once its process is gone). */
export type Seen = Map<string, ProcessRecord>

const keyOf = (record: ProcessRecord) => `${record.pid}:${record.startTime}`

export const seenFrom = (leader: ProcessRecord): Seen => new Map([[keyOf(leader), leader]])

/**
 * Descendants are found through parent links, which a child loses when its parent dies: this looks from every
 * process already seen, and at their groups, so a setsid grandchild stays known.
 */
export const track = Effect.fnUntraced(function* (seen: Seen) {
  const table = yield* ProcessTree.snapshot
  const byPid = new Map(table.map((info) => [info.pid, info]))
  const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
  const groups = new Set(live.map((r) => r.pgid))
  const found = [
    ...ProcessTree.descendantsOf(
      live.map((r) => r.pid),
      table
    ),
    ...table.filter((info) => groups.has(info.pgid) && info.pid !== process.pid)
  ]
  for (const info of found) seen.set(keyOf(info), { pid: info.pid, pgid: info.pgid, startTime: info.startTime })
})

/** Tracks often while the CLI lives: a child orphaned between two looks is lost to the parent links. */
export const trackWhileRunning = Effect.fnUntraced(function* (running: Effect.Effect<boolean>, seen: Seen) {
  while (yield* running) {
    yield* track(seen)
    yield* Effect.sleep(TRACK_INTERVAL_MS)
  }
})

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
