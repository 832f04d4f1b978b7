/**
 * Turns — what the SIGKILL probes check after each kill, on a real Core: a session's events as a subscriber saw
 * them against the session's log as Core replays it from seq 0, one completion per turn, seq strictly increasing,
 * no live process left with the session's PEDELEC_THREAD_ID, and nothing in `run/` but a live Core's own three
 * files. Each check returns what is wrong (empty when all holds), so a probe can tally trials instead of stopping
 * at the first failure.
 */
import { readdir } from "node:fs/promises"
import path from "node:path"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { collectEvents, ORIGIN, sessionProcesses } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

/** What a live Core keeps in `run/`; anything else after a kill is stale. */
const RUN_FILES = new Set(["core.json", "core.sock", "core.lock"])

export const staleRunFiles = async (home: string): Promise<Array<string>> =>
  (await readdir(path.join(home, "run")).catch(() => [] as Array<string>)).filter((name) => !RUN_FILES.has(name))

/** The session's log as Core replays it to a new subscriber (no tool claim), up to `lastSeq`. */
export const replayed = (client: HostClient, sessionId: SessionId, lastSeq: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const events = yield* collectEvents(
        client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: false })
      )
      yield* events.next((event): event is SessionEvent => event.seq >= lastSeq, 10_000).pipe(Effect.ignore)
      return events.seen.filter((event) => event.seq <= lastSeq)
    })
  )

/** One completion per turn, seqs strictly increasing, the replay equal to what the subscriber saw. */
export const eventProblems = (seen: ReadonlyArray<SessionEvent>, log: ReadonlyArray<SessionEvent>): Array<string> => {
  const problems: Array<string> = []
  const seqs = seen.map((event) => event.seq)
  if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1]!)) problems.push(`seqs not increasing: ${seqs.join(",")}`)
  const completions = new Map<string, number>()
  for (const event of seen)
    if (event.type === "turn_completed") completions.set(event.turnId, (completions.get(event.turnId) ?? 0) + 1)
  const turns = new Set(seen.flatMap((event) => ("turnId" in event && event.turnId ? [event.turnId] : [])))
  for (const turn of turns)
    if (completions.get(turn) !== 1) problems.push(`turn ${turn}: ${completions.get(turn) ?? 0} completions`)
  if (JSON.stringify(log) !== JSON.stringify(seen)) problems.push(`log (${log.length}) ≠ seen (${seen.length})`)
  return problems
}

/** Live processes of the session after a grace for the kill sequence to finish. */
export const orphansOf = async (sessionId: string, graceMs = 5_000): Promise<number> => {
  const deadline = Date.now() + graceMs
  while (true) {
    const found = await sessionProcesses(sessionId)
    if (found.length === 0 || Date.now() > deadline) return found.length
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
