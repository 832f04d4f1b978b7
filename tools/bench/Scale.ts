/**
 * Scale — the `scale` scenario: what an idle session costs Core in memory. A fresh Core's resident set, then again
 * after SESSIONS sessions are created and left idle (no turn: the scripted provider starts its CLI per turn), each
 * with a subscriber as a page would hold; the difference per session is `core_rss_mib_per_idle_session`. Resident
 * memory moves with V8's collector, so each side is the median of a few samples a moment apart. It does not measure
 * a busy session (Chain, Mcp and the fault suite's load probe do).
 */
import { readFile } from "node:fs/promises"
import os from "node:os"
import { setTimeout as sleep } from "node:timers/promises"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type BenchCore, hostClient, ORIGIN, withCore } from "./BenchCore.ts"
import { type Results, report } from "./Report.ts"

const SESSIONS = 100
const SAMPLES = 5
const MiB = 1024 * 1024

/** VmRSS of a process, in bytes, from /proc/<pid>/status. */
const residentBytes = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1])
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS for ${pid}`)
  return kb * 1024
}

/** The median of SAMPLES readings 200 ms apart: one reading may land just before or after a collection. */
const settledResident = async (pid: number) => {
  const readings: Array<number> = []
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(200)
    readings.push(await residentBytes(pid))
  }
  return readings.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)]!
}

/** Creates SESSIONS idle sessions, each subscribed (claiming tools) as a page holds one, and reads RSS around it. */
const idleSessions = (core: BenchCore) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    // One session first: what the first pays once (modules, caches) is not a per-session cost.
    const create = client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", skills: { guidance: "", tools: [] } }
    })
    const hold = (sessionId: (typeof created)["sessionId"]) =>
      client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true }).pipe(
        Stream.runDrain,
        Effect.forkScoped
      )
    const created = yield* create
    yield* hold(created.sessionId)
    const before = yield* Effect.promise(() => settledResident(core.info.pid))
    for (let i = 0; i < SESSIONS; i++) yield* hold((yield* create).sessionId)
    const after = yield* Effect.promise(() => settledResident(core.info.pid))
    return { before, after }
  }).pipe(Effect.scoped)

export const scale = async (results: Results): Promise<void> => {
  const { before, after } = await withCore("pedelec-bench-scale-", (core) => Effect.runPromise(idleSessions(core)))
  const perSession = (after - before) / SESSIONS / MiB
  const out = report(results, 52)
  out.say(`Pedelec bench: Core memory per idle session (${os.cpus().length} cores, node ${process.version})`)
  out.say(`  Core RSS with 1 session      ${(before / MiB).toFixed(1).padStart(8)} MiB`)
  out.say(`  Core RSS with ${SESSIONS + 1} sessions  ${(after / MiB).toFixed(1).padStart(8)} MiB`)
  out.factors(`per idle session (MiB, subscribed, ${SESSIONS} sessions)`, [
    { name: "core_rss_mib_per_idle_session", value: perSession }
  ])
}
