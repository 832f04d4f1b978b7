/**
 * AgentProcess/Watch — the one periodic look at the process table for every agent this process runs: while at least
 * one agent is watched, a single fiber scans the table every 200 ms and updates every watched agent's Seen set from
 * that one table; with none watched, nothing runs. It does not decide what a descendant is (Descendants) nor signal
 * anything (Descendants' release, ProcessTree).
 *
 * Why one scan and not one per agent: each agent used to re-read every /proc/<pid>/stat on the machine every 200 ms,
 * so the cost grew with agents × processes; issue 14 profiled ≥ 42 % of a loaded Core's CPU there (25 sessions) and
 * 50 sessions failed 948 of 1,000 tool calls. Why a scan at all: a descendant that leaves the group (setsid) and
 * loses its parent is only findable through a parent link seen before, and Linux offers no portable notification.
 * Why only the watched trees (ProcessTree.treesOf, from every process seen): the whole table, read synchronously on
 * Core's main thread, was still ~12 % of a loaded Core's CPU (issue 15), 4–25 ms a look; a walk down from what was
 * seen costs what the agents run, not what the machine runs (~200 processes on the machine: 0.45 ms of CPU a look
 * at one agent's 4 processes where the whole table took 6.3 ms; eight agents' 32, 2.2 ms where it took 5.3 ms, as
 * every thread of a process has a children file to read). A walk finds no stranger of a seen group (a child that kept
 * the CLI's group but lost its parent before any look saw it), so every FULL_EVERY-th look reads the whole table,
 * which finds it by its group (release and treeAlive always do): one that then leaves the group as well is still
 * known, unless it does both within one such period. That costs the whole table's 4–25 ms once every 5 s.
 *
 * The scanner is shared by the whole process, not by one AgentProcess layer: adapters build that layer per session.
 */
import * as Effect from "effect/Effect"
import * as RcRef from "effect/RcRef"
import * as Scope from "effect/Scope"
import * as ProcessTree from "../ProcessTree.ts"
import { type Seen, update } from "./Descendants.ts"

/** How stale an agent's knowledge may get: a child orphaned and escaped between two looks is lost. */
const INTERVAL_MS = 200

/** Every how many looks the whole table is read, for a group's strangers (5 s at INTERVAL_MS). */
const FULL_EVERY = 25

/** The Seen sets of every agent alive in this process. */
const watched = new Set<Seen>()

/** Looks since the last one at the whole table. */
let looksSinceFull = 0

/** The table one look needs: the trees below every process any agent has seen, walked once for all of them. */
export const lookTable = (seens: Iterable<Seen>) =>
  Effect.suspend(() => ProcessTree.treesOf([...seens].flatMap((seen) => [...seen.values()].map((r) => r.pid))))

const lookAtAll = Effect.suspend(() => {
  looksSinceFull = (looksSinceFull + 1) % FULL_EVERY
  const table = looksSinceFull === 0 ? ProcessTree.snapshot : lookTable(watched)
  return Effect.map(table, (rows) => {
    for (const seen of watched) update(seen, rows)
  })
})

/**
 * One look at every watched tree now, between the periodic ones: for whoever is about to let agents end on their own
 * (Core cancelling a turn's tool calls lets a CLI run on and exit), so that what they started and kept is known
 * while it still has its parent. A setsid child whose CLI exits before any look saw it is lost (a loaded Core's
 * cancel can come before the first look of INTERVAL_MS).
 */
export const lookNow: Effect.Effect<void> = Effect.map(lookTable(watched), (rows) => {
  for (const seen of watched) update(seen, rows)
})

const scanning = Effect.forever(Effect.andThen(Effect.sleep(INTERVAL_MS), lookAtAll), { disableYield: true })

/**
 * The scanning fiber, started by the first watcher and interrupted when the last one leaves. Made once, in a scope
 * that lives as long as the module (this process): its context is the default one, so the scan keeps real time
 * even when the first watcher runs under a TestClock.
 */
const scanner = Effect.runSync(
  RcRef.make({ acquire: Effect.asVoid(Effect.forkScoped(scanning)) }).pipe(Scope.provide(Scope.makeUnsafe()))
)

/** Keeps `seen` up to date until the caller's scope closes. */
export const watch = (seen: Seen): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    yield* RcRef.get(scanner)
    yield* Effect.acquireRelease(
      Effect.sync(() => void watched.add(seen)),
      () => Effect.sync(() => void watched.delete(seen))
    )
  })
