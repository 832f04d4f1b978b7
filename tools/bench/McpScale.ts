/**
 * McpScale — the `mcp-scale` scenario: a page tool call through `pedelec-cli mcp` when SESSIONS sessions are live and
 * calling, next to the same calls from one session alone, on the same Core. Each session has a turn held open (Core
 * takes tool calls only during a turn), its own MCP server as its agent would, and a page (one host client, as the
 * native host multiplexes every tab) that answers at once. Two loads:
 * - At an agent's pace (`tool_call_p99_50_sessions_vs_1`): every server makes CALLS calls, one every PERIOD_MS, the
 *   servers' starts spread over one period, so SESSIONS × 1000 / PERIOD_MS calls a second reach Core in all (50 a
 *   second: a real agent waits on its model seconds between calls). What it shows is whether a call gets slower
 *   because many sessions are live (per-session loops, scans over every session), which is what scale means here.
 * - Saturated (`…_saturated_vs_1`, and calls a second): every server calls back to back, all at once. On 2 cores this
 *   is Core's and the servers' CPU per call, queued SESSIONS deep, not a latency anyone sees at an agent's pace.
 * It does not start the MCP servers inside the timing (an agent pays that once per session) nor go through a browser
 * (Chain does).
 */
import os from "node:os"
import { setTimeout as sleep } from "node:timers/promises"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type BenchCore, type HostClient, hostClient, ORIGIN, withCore } from "./BenchCore.ts"
import { type McpServer, startMcpServer, timedCalls } from "./Mcp.ts"
import { type Results, report } from "./Report.ts"
import { stats } from "./Stats.ts"

const SESSIONS = 50
const CALLS = 20
const PERIOD_MS = 1000

const ping = { name: "ping", description: "Answers at once.", argsSchema: { type: "object" as const } }

/** A session whose page answers every call at once, with a turn held open; resolves once the turn runs. */
const heldSession = (client: HostClient) =>
  Effect.gen(function* () {
    const { sessionId } = yield* client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", skills: { guidance: "", tools: [ping] } }
    })
    let running = false
    yield* client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true }).pipe(
      Stream.runForEach((event) => {
        if (event.type === "status_changed" && event.status === "running") running = true
        if (event.type !== "tool_call") return Effect.void
        const outcome = { ok: true as const, result: "pong" }
        return client["tool.submit_result"]({ origin: ORIGIN, sessionId, toolCallId: event.toolCallId, outcome })
      }),
      Effect.forkScoped
    )
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script("sleep 600000") })
    while (!running) yield* Effect.sleep(20)
    return sessionId
  })

const serversFor = (core: BenchCore, sessionIds: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(() => Promise.all(sessionIds.map((sessionId) => startMcpServer(core.home, sessionId)))),
    (servers) =>
      Effect.sync(() => {
        for (const server of servers) server.close()
      })
  )

/** CALLS calls, one every PERIOD_MS from `offsetMs` on (the next right away when one took longer). */
const pacedCalls = async (server: McpServer, offsetMs: number): Promise<Array<number>> => {
  await server.call()
  await sleep(offsetMs)
  const times: Array<number> = []
  const start = performance.now()
  for (let i = 0; i < CALLS; i++) {
    const wait = start + i * PERIOD_MS - performance.now()
    if (wait > 0) await sleep(wait)
    times.push(await server.call())
  }
  return times
}

const measure = (core: BenchCore) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    const sessionIds = yield* Effect.forEach(Array.from({ length: SESSIONS }), () => heldSession(client), {
      concurrency: 5
    })
    // The agent's MCP server starts once the agent's process (whose capability it reads) runs.
    yield* Effect.sleep(500)
    const servers: ReadonlyArray<McpServer> = yield* serversFor(core, sessionIds)
    const alone = yield* Effect.promise(() => timedCalls(servers[0]!, CALLS * 5))
    const spread = PERIOD_MS / SESSIONS
    const paced = yield* Effect.promise(() => Promise.all(servers.map((server, i) => pacedCalls(server, i * spread))))
    const started = performance.now()
    const together = yield* Effect.promise(() => Promise.all(servers.map((server) => timedCalls(server, CALLS))))
    const perSecond = (SESSIONS * CALLS * 1000) / (performance.now() - started)
    return { alone: stats(alone), paced: stats(paced.flat()), together: stats(together.flat()), perSecond }
  }).pipe(Effect.scoped)

export const mcpScale = async (results: Results): Promise<void> => {
  const measured = await withCore("pedelec-bench-mcp-scale-", (core) => Effect.runPromise(measure(core)))
  const out = report(results, 52)
  out.say(`Pedelec bench: mcp tool calls, 1 and ${SESSIONS} sessions at once (${os.cpus().length} cores)`)
  out.row("tools/call, one session alone", measured.alone)
  const rate = (SESSIONS * 1000) / PERIOD_MS
  out.row(`tools/call, ${SESSIONS} sessions × ${CALLS} calls, ${rate}/s in all`, measured.paced)
  out.row(`tools/call, ${SESSIONS} sessions × ${CALLS} calls back to back`, measured.together)
  out.say(`  saturated: ${measured.perSecond.toFixed(0)} calls/s through Core`)
  out.say("ratios")
  out.ratio(`${SESSIONS} sessions at an agent's pace / 1 session`, measured.paced, measured.alone, [
    "tool_call_p50_50_sessions_vs_1",
    "tool_call_p99_50_sessions_vs_1"
  ])
  out.ratio(`${SESSIONS} sessions saturated / 1 session`, measured.together, measured.alone, [
    "tool_call_p50_50_sessions_saturated_vs_1",
    "tool_call_p99_50_sessions_saturated_vs_1"
  ])
}
