/**
 * AgentProcess/Descendants — every process an agent CLI started, kept known while it lives (updated from a table
 * the shared AgentProcess/Watch scan hands it), and the release sequence that ends them all: SIGINT leaves first, a
 * grace, then SIGKILL leaves first, and ProcessTree's kill of whatever is left. It does not start the CLI or read its output
 * (AgentProcess), nor scan on a timer (Watch); ProcessTree owns the process table and the signals.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ProcessTree from "../ProcessTree.ts"
import type { ProcessRecord } from "../Provider.ts"

/**
 * After SIGINT, how long the CLI gets to wind down before the tree is killed. Release runs when the session or Core
 * goes (a stopped turn's wind-down is the adapter's interruptGraceMs, before this): a user who ends a session expects
 * it gone within a second (issue 14). A CLI that honours SIGINT is gone in ~0.1 s (codex); gemini ignores it and
 * took 3 s to end at 1,500 ms + SIGTERM's 1,000 ms, so it is SIGKILL (leaves first) after the grace, no SIGTERM.
 */
const INTERRUPT_GRACE_MS = 400
/** After the last SIGKILL, how long the kernel gets to take the survivors. */
const KILL_WAIT_MS = 200
const EXIT_REAP_MS = 2_000

/** Every process seen, by pid and start time (a pid may be reused by a stranger once its process is gone). */
export type Seen = Map<string, ProcessRecord>

const keyOf = (record: ProcessRecord) => `${record.pid}:${record.startTime}`

export const seenFrom = (leader: ProcessRecord): Seen => new Map([[keyOf(leader), leader]])

const remember = (seen: Seen, info: ProcessTree.ProcessInfo) =>
  seen.set(keyOf(info), { pid: info.pid, pgid: info.pgid, startTime: info.startTime })

/** ESRCH: no such pid at all. Asked of the kernel, not of a table a failed read (EMFILE) could have left short. */
const pidGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

/**
 * Dead for good: a pid now held by another process (another start time), or no such pid. Not a zombie: until it is
 * reaped it holds its pid and its group's id, so the group's members are still found from it (a CLI that exited
 * before any look saw its children, while Core had not reaped it yet: seen once, in a Core's stop on Node 24).
 */
const isDead = (record: ProcessRecord, current: ProcessTree.ProcessInfo | undefined) =>
  current === undefined ? pidGone(record.pid) : current.startTime !== record.startTime

/**
 * Descendants are found through parent links, which a child loses when its parent dies: this looks from every
 * process already seen, and at their groups, so a setsid grandchild stays known. A record no longer in the table
 * and dead for good is dropped: the set stays as small as what is alive or not yet reaped, and so does every later
 * look at it. The table may be partial (Watch's holds only the trees below what was seen): a group member outside
 * it is not found.
 */
export const update = (seen: Seen, table: ReadonlyArray<ProcessTree.ProcessInfo>): void => {
  const byPid = new Map(table.map((info) => [info.pid, info]))
  for (const [key, record] of seen) if (isDead(record, byPid.get(record.pid))) seen.delete(key)
  const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
  const groups = new Set([...seen.values()].filter((r) => byPid.has(r.pid)).map((r) => r.pgid))
  const found = [
    ...ProcessTree.descendantsOf(
      live.map((r) => r.pid),
      table
    ),
    ...table.filter((info) => groups.has(info.pgid) && info.pid !== process.pid && !info.state.startsWith("Z"))
  ]
  for (const info of found) remember(seen, info)
}

/** Processes of the agent that no parent link or group shows (AgentProcess/Tag), picked from a table. */
export type Strays = (table: ReadonlyArray<ProcessTree.ProcessInfo>) => ReadonlyArray<ProcessTree.ProcessInfo>

/** One look now, on a table of its own, strays taken in: what release needs before it signals. */
export const track = (seen: Seen, strays: Strays) =>
  Effect.map(ProcessTree.snapshot, (table) => {
    for (const info of strays(table)) remember(seen, info)
    update(seen, table)
  })

/**
 * Whether anything of the tree is alive, after a fresh look: a process seen, or any member of a group seen (the
 * leader's included). A child that kept the CLI's group but lost its parent before any scan saw it is only found
 * that way.
 */
export const treeAlive = (seen: Seen, leader: ProcessRecord) =>
  Effect.map(ProcessTree.snapshot, (table) => {
    update(seen, table)
    const groups = new Set([leader.pgid, ...[...seen.values()].map((record) => record.pgid)])
    return table.some((info) => groups.has(info.pgid) && info.pid !== process.pid && !info.state.startsWith("Z"))
  })

/** The processes seen that are still alive. */
export const liveOf = (seen: Seen) => Effect.suspend(() => ProcessTree.liveRecords([...seen.values()]))

/** How often an unwind looks again: a parent reaps a child that died within a few ms. */
const UNWIND_POLL_MS = 20

/** `signal` to the processes seen that are alive and childless (not even a zombie child left); returns how many live. */
const signalLeaves = (
  seen: Seen,
  table: ReadonlyArray<ProcessTree.ProcessInfo>,
  asked: Set<string>,
  signal: NodeJS.Signals
) => {
  update(seen, table)
  const byPid = new Map(table.map((info) => [info.pid, info]))
  const parents = new Set(table.map((info) => info.ppid))
  const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
  for (const record of live) {
    if (parents.has(record.pid) || asked.has(keyOf(record)) || record.pid <= 1 || record.pid === process.pid) continue
    asked.add(keyOf(record))
    try {
      process.kill(record.pid, signal)
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
    if (signalLeaves(seen, yield* ProcessTree.snapshot, asked, "SIGINT") === 0) return true
    if (!groupsAsked && waited >= INTERRUPT_GRACE_MS / 2) {
      groupsAsked = true
      yield* ProcessTree.signalGroups([...seen.values()], "SIGINT")
    }
    yield* Effect.sleep(UNWIND_POLL_MS)
  }
  return (yield* liveOf(seen)).length === 0
})

/** How long the leaves-first SIGKILL may take before whatever is left is killed all at once. */
const KILL_UNWIND_MS = 300

/**
 * SIGKILL leaves first, for the same reason as `unwind`: a parent killed before its child leaves the child's zombie
 * to PID 1 (gemini's shell under a killed gemini did, in a container whose PID 1 never reaped it). A parent alive
 * reaps its killed child at once; one that does not within KILL_UNWIND_MS is killed with the rest.
 */
const killLeavesFirst = Effect.fnUntraced(function* (seen: Seen) {
  const asked = new Set<string>()
  const startedAt = yield* Clock.currentTimeMillis
  for (let waited = 0; waited < KILL_UNWIND_MS; waited = (yield* Clock.currentTimeMillis) - startedAt) {
    if (signalLeaves(seen, yield* ProcessTree.snapshot, asked, "SIGKILL") === 0) return true
    yield* Effect.sleep(UNWIND_POLL_MS)
  }
  return false
})

/**
 * Asks the tree to stop (leaves first), waits a grace, then kills whatever is left and waits for node to reap the CLI.
 * The strays are looked for before the first signal, while the tree is whole, and again before the kill.
 */
export const release = Effect.fnUntraced(function* (seen: Seen, exit: Effect.Effect<unknown>, strays: Strays) {
  yield* track(seen, strays)
  if ((yield* liveOf(seen)).length === 0) return
  if (!(yield* unwind(seen))) {
    yield* track(seen, strays)
    if (!(yield* killLeavesFirst(seen))) {
      yield* ProcessTree.killTree([...seen.values()], { signal: "SIGKILL", graceMs: KILL_WAIT_MS })
    }
  }
  // A killed CLI can be a zombie for a moment; once node has reaped it, its pid is really free.
  yield* Effect.timeoutOption(exit, EXIT_REAP_MS)
})
