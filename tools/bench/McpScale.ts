/**
 * McpScale — the `mcp-scale` scenario: a page tool call through `pedelec-cli mcp` when SESSIONS sessions call at
 * once, next to the same calls from one session alone, on the same Core. Each session has a turn held open (Core
 * takes tool calls only during a turn), its own MCP server as its agent would, and a page (one host client, as the
 * native host multiplexes every tab) that answers at once; every server makes CALLS calls one after another, all
 * servers together. `tool_call_p99_50_sessions_vs_1` is the p99 at SESSIONS over the p99 alone. It does not start
 * the MCP servers inside the timing (an agent pays that once per session) nor go through a browser (Chain does).
 */
import os from "node:os"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type BenchCore, type HostClient, hostClient, ORIGIN, withCore } from "./BenchCore.ts"
import { type McpServer, startMcpServer, timedCalls } from "./Mcp.ts"
import { type Results, report } from "./Report.ts"
import { stats } from "./Stats.ts"

const SESSIONS = 50
const CALLS = 20

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
    const together = yield* Effect.promise(() => Promise.all(servers.map((server) => timedCalls(server, CALLS))))
    return { alone: stats(alone), together: stats(together.flat()) }
  }).pipe(Effect.scoped)

export const mcpScale = async (results: Results): Promise<void> => {
  const measured = await withCore("pedelec-bench-mcp-scale-", (core) => Effect.runPromise(measure(core)))
  const out = report(results, 52)
  out.say(`Pedelec bench: mcp tool calls, 1 and ${SESSIONS} sessions at once (${os.cpus().length} cores)`)
  out.row("tools/call, one session alone", measured.alone)
  out.row(`tools/call, ${SESSIONS} sessions × ${CALLS} calls at once`, measured.together)
  out.say("ratios")
  out.ratio(`${SESSIONS} sessions / 1 session`, measured.together, measured.alone, [
    "tool_call_p50_50_sessions_vs_1",
    "tool_call_p99_50_sessions_vs_1"
  ])
}
