/**
 * Cli — the `cli` scenario: what an agent pays for each pedelec-cli it spawns, next to a bare `node -e ""`.
 *   Start-up: `--version` (the fast path, no effect chunk) and `tool-list` with no Core (the effect chunk loaded,
 *   core.json looked for, exit 3), round robin with the node floor. Measured once per run: the chain scenario sets
 *   its tool call against the same node figure.
 *   A tool-call round trip as the scripted agent times it: spawn, Core, a host client that answers at once, back.
 * It does not go through a browser (Chain does) nor measure Core IPC on its own (Ipc does).
 */
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { mintCapability, mintSessionId } from "@pedelec/core/Mint"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type BenchCore, cliBinDir, hostClient, ORIGIN, withCore } from "./BenchCore.ts"
import { type Results, report } from "./Report.ts"
import { roundRobin, type Stats, stats } from "./Stats.ts"

const RUNS = 30
const CALLS = 30
const cliBin = path.join(cliBinDir, "pedelec-cli")

export interface Startup {
  readonly node: Stats
  readonly version: Stats
  readonly toolList: Stats
}

const measureStartup = async (): Promise<Startup> => {
  const empty = await mkdtemp(path.join(os.tmpdir(), "pedelec-bench-cli-"))
  try {
    // A well-formed thread and capability, so pedelec-cli gets as far as looking for a Core in the empty home. The
    // rest of the environment is this process's, as for the other cases (NODE_EXTRA_CA_CERTS alone costs ~90 ms).
    const agentEnv = {
      ...process.env,
      PEDELEC_HOME: empty,
      PEDELEC_THREAD_ID: mintSessionId(),
      PEDELEC_SESSION_CAP: mintCapability()
    }
    const [node, version, toolList] = await roundRobin(
      [
        { command: process.execPath, args: ["-e", ""] },
        { command: cliBin, args: ["--version"] },
        { command: cliBin, args: ["tool-list"], env: agentEnv }
      ],
      RUNS
    )
    return { node: node!, version: version!, toolList: toolList! }
  } finally {
    await rm(empty, { recursive: true, force: true })
  }
}

let startupOnce: Promise<Startup> | undefined

/** pedelec-cli's start-up next to node's, measured the first time a scenario asks and shared after that. */
export const startup = (): Promise<Startup> => {
  startupOnce ??= measureStartup()
  return startupOnce
}

/**
 * `calls` shell tool calls of a scripted agent (plus one cold one, left out), each answered at once by this host
 * client; the agent's own timings. `then` are script lines after them (Mcp holds the turn open). In the caller's scope.
 */
export const shellToolCalls = (core: BenchCore, calls: number, then: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    const ping = { name: "ping", description: "Answers at once.", argsSchema: { type: "object" as const } }
    const { sessionId } = yield* client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", skills: { guidance: "", tools: [ping] } }
    })
    const reports: Array<string> = []
    yield* client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true }).pipe(
      Stream.runForEach((event) => {
        if (event.type === "chat" && event.text.startsWith("tool ping")) reports.push(event.text)
        if (event.type !== "tool_call") return Effect.void
        const outcome = { ok: true as const, result: "pong" }
        return client["tool.submit_result"]({ origin: ORIGIN, sessionId, toolCallId: event.toolCallId, outcome })
      }),
      Effect.forkScoped
    )
    const lines = Array.from({ length: calls + 1 }, () => "call ping {}")
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script(...lines, ...then) })
    while (reports.length < calls + 1) yield* Effect.sleep(50)
    // The first call pays for a cold start of the agent's first spawn; the rest are steady state.
    const roundTrips = reports.slice(1).map((text) => Number(/\(([\d.]+) ms\)$/.exec(text)?.[1]))
    if (roundTrips.some((ms) => !Number.isFinite(ms)))
      throw new Error(`unexpected agent output: ${reports.join(" | ")}`)
    return { sessionId, shell: stats(roundTrips) }
  })

const toolCallRoundTrips = (core: BenchCore) =>
  shellToolCalls(core, CALLS).pipe(
    Effect.map(({ shell }) => shell),
    Effect.scoped,
    Effect.runPromise
  )

export const cli = async (results: Results): Promise<void> => {
  const { node, version, toolList } = await startup()
  const toolCall = await withCore("pedelec-bench-cli-", toolCallRoundTrips)
  const out = report(results, 44)
  out.say(`Pedelec bench: pedelec-cli (${os.cpus().length} cores, node ${process.version})`)
  out.row('node -e "" (spawn to exit)', node)
  out.row("pedelec-cli --version (spawn to exit)", version)
  out.row("pedelec-cli tool-list, no Core (exit 3)", toolList)
  out.row("pedelec-cli tool-call round trip", toolCall)
  out.say("ratios")
  out.ratio("tool-call round trip / node spawn", toolCall, node, [
    "tool_call_core_vs_node_spawn",
    "tool_call_core_p99_vs_node_spawn"
  ])
  out.ratio("pedelec-cli --version / node spawn", version, node, [
    "cli_version_vs_node_spawn",
    "cli_version_p99_vs_node_spawn"
  ])
  out.ratio("pedelec-cli tool-list, no Core / node spawn", toolList, node, [
    "cli_tool_list_no_core_vs_node_spawn",
    "cli_tool_list_no_core_p99_vs_node_spawn"
  ])
}
