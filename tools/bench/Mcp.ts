/**
 * Mcp — the `mcp` scenario: a page tool call through `pedelec-cli mcp` (one MCP server for the session, one Core
 * connection, the call as a JSON-RPC `tools/call` line on its stdin) next to the shell tool call an agent makes
 * today (a pedelec-cli spawn per call, timed by the scripted agent as in Cli) and the bare `node -e ""` floor (Cli's
 * start-up figures). Both kinds of call go to the same session and the same host client, which answers at once;
 * the scripted agent then sleeps so its turn, which Core needs for any tool call, stays open for the MCP calls.
 * Beside the times, the CPU Core and the MCP server each spend on a call (Cpu), which the VM's wake-ups move less.
 * It does not measure the MCP server's start-up, which an agent pays once per session.
 */
import { spawn } from "node:child_process"
import os from "node:os"
import path from "node:path"
import { createInterface } from "node:readline"
import { sessionCapability } from "@pedelec/test-kit/core/SessionCapability"
import * as Effect from "effect/Effect"
import { type BenchCore, cliBinDir, withCore } from "./BenchCore.ts"
import { shellToolCalls, startup } from "./Cli.ts"
import { cpuPerOperation, cpuSnapshot } from "./Cpu.ts"
import { type Results, report } from "./Report.ts"
import { type Stats, stats } from "./Stats.ts"

const CALLS = 30
/** Enough that a 10 ms CPU tick is under 1% of what Core spends on the calls (2.2–4.6 ms each on 2 cores). */
const MCP_CALLS = 500
/**
 * Calls through a throwaway MCP server before the measured one starts. Core, the native host and the extension
 * live as long as the user's machine session and are warm by a session's first tool call; an agent's
 * `pedelec-cli mcp` is new with the agent. Without this the figures were V8's cold tiers: one chain's MCP call
 * measured 6.6 ms after 1 call and 4.8 ms after 600, its CPU per call 17–20 ms against 8.
 */
const WARM_UP_CALLS = 300
const cliBin = path.join(cliBinDir, "pedelec-cli")

/** A running `pedelec-cli mcp` for a session, initialized as an agent's MCP client does it. */
export interface McpServer {
  /** One `tools/call` of the server's tool, in ms; throws on an error answer. */
  readonly call: () => Promise<number>
  readonly close: () => void
}

/** The tool a server calls: the bench sessions' `ping` unless the page has another (the chain's `echo`). */
export interface McpCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
}

export const startMcpServer = async (
  home: string,
  sessionId: string,
  tool: McpCall = { name: "ping", arguments: {} }
): Promise<McpServer> => {
  const env = {
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_THREAD_ID: sessionId,
    PEDELEC_SESSION_CAP: await sessionCapability(sessionId)
  }
  const child = spawn(cliBin, ["mcp"], { env, stdio: ["pipe", "pipe", "inherit"] })
  const waiting = new Map<number, (line: Record<string, unknown>) => void>()
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Record<string, unknown>
    if (typeof message.id === "number") waiting.get(message.id)?.(message)
  })
  let nextId = 0
  const ask = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = nextId++
      waiting.set(id, resolve)
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    })
  const close = () => {
    child.stdin.end()
    child.kill()
  }
  try {
    const clientInfo = { name: "bench", version: "0" }
    await ask("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo })
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`)
  } catch (error) {
    close()
    throw error
  }
  const call = async () => {
    const started = performance.now()
    const answer = await ask("tools/call", tool)
    const elapsed = performance.now() - started
    const result = answer.result as { readonly isError?: boolean } | undefined
    if (result === undefined || result.isError === true)
      throw new Error(`unexpected MCP answer: ${JSON.stringify(answer)}`)
    return elapsed
  }
  return { call, close }
}

/**
 * `calls` calls one at a time after one that runs the server's own first-call paths (left out, as for the shell:
 * an agent pays it once per session, with the server's start).
 */
export const timedCalls = async (server: McpServer, calls: number): Promise<Array<number>> => {
  await server.call()
  const times: Array<number> = []
  for (let i = 0; i < calls; i++) times.push(await server.call())
  return times
}

/** WARM_UP_CALLS calls through an MCP server of their own, closed before the caller starts the measured one. */
export const warmUp = async (home: string, sessionId: string, tool?: McpCall): Promise<void> => {
  const server = await startMcpServer(home, sessionId, tool)
  try {
    await timedCalls(server, WARM_UP_CALLS)
  } finally {
    server.close()
  }
}

interface McpMeasured {
  readonly times: Stats
  /** CPU ms per call: Core's, and the MCP server's (`pedelec-cli mcp`). */
  readonly coreCpu: number
  readonly serverCpu: number
}

/**
 * `pedelec-cli mcp` as the agent's MCP client runs it, on a warm Core: initialize once, then MCP_CALLS calls, one
 * at a time.
 */
const mcpCalls = async (core: BenchCore, sessionId: string): Promise<McpMeasured> => {
  await warmUp(core.home, sessionId)
  const server = await startMcpServer(core.home, sessionId)
  try {
    // Outside the CPU figures: the new server's first call, which runs its own first-call paths.
    await server.call()
    const before = await cpuSnapshot()
    const times = stats(await timedCalls(server, MCP_CALLS))
    const after = await cpuSnapshot()
    // timedCalls makes one call more than it times (its first, warm by now): it counts in the CPU per call.
    const calls = MCP_CALLS + 1
    return {
      times,
      coreCpu: cpuPerOperation(before, after, "pedelec-core", calls),
      serverCpu: cpuPerOperation(before, after, "pedelec-cli", calls)
    }
  } finally {
    server.close()
  }
}

export const mcp = async (results: Results): Promise<void> => {
  const { node } = await startup()
  const { shell, viaMcp } = await withCore("pedelec-bench-mcp-", (core) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // The shell calls first, then the turn is left open (Core takes tool calls only during one) for MCP.
          const session = yield* shellToolCalls(core, CALLS, ["sleep 600000"])
          const viaMcp = yield* Effect.promise(() => mcpCalls(core, session.sessionId))
          return { shell: session.shell, viaMcp }
        })
      )
    )
  )
  const out = report(results, 44)
  out.say(`Pedelec bench: page tool calls over pedelec-cli mcp (${os.cpus().length} cores, node ${process.version})`)
  out.row('node -e "" (spawn to exit)', node)
  out.row("pedelec-cli tool-call round trip (shell)", shell)
  out.row("tools/call through pedelec-cli mcp", viaMcp.times)
  out.amounts(
    "  CPU per call: Core, the MCP server",
    [
      { name: "mcp_call_cpu_ms_core", value: viaMcp.coreCpu },
      { name: "mcp_call_cpu_ms_mcp_server", value: viaMcp.serverCpu }
    ],
    "ms"
  )
  out.say("ratios")
  out.ratio("mcp tool call / node spawn", viaMcp.times, node, [
    "tool_call_mcp_vs_node_spawn",
    "tool_call_mcp_p99_vs_node_spawn"
  ])
  out.ratio("mcp tool call / shell tool call", viaMcp.times, shell, [
    "tool_call_mcp_vs_shell_tool_call",
    "tool_call_mcp_p99_vs_shell_tool_call"
  ])
}
