/**
 * Chain — the `chain` scenario: the browser half of Pedelec's hot paths, each next to a floor measured in the same
 * Chromium run (libs/chain: built extension, native host, Core, scripted agent, the test page).
 *   Floor: a bench-only MV3 extension relaying a page port to a Node echo host (chain/EchoExtension), i.e.
 *   Chromium's own page ↔ service worker ↔ native messaging transport with no Pedelec code in it.
 *   1. The raw echo itself: sequential round trips, pipelined throughput, one-way host → page bursts.
 *   2. A tool call as the agent sees it (pedelec-cli → Core → host → extension → SDK → handler → back), next to the
 *      raw echo round trip and to `node -e ""` (the agent spawns a process for every call anyway; Cli's figure);
 *      and the same call through `pedelec-cli mcp` (the MCP server an agent CLI keeps for its session, Mcp's) while
 *      the page holds a turn open, next to raw echo round trips taken in rounds with it: `tool_call_mcp_vs_raw_echo`,
 *      with the CPU each process used per MCP call (where a call's time goes, unlike a wall time on a shared box).
 *   3. Chat deltas as the page's onChatDelta got them (coalesced by Core), next to a host → page burst of the same
 *      shape; and lone deltas timed from the agent's emit, for the latency coalescing may add.
 *   4. One 3.6 MB chat message (the E2E size case): Core publish → page per event, and the CPU each process used.
 * It does not start the chain's parts itself (libs/chain does) nor time in-page code (chain/bench-page).
 */
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { type Chain as RunningChain, startChain } from "@pedelec/chain/Chain"
import { LAYOUT, missingBuilds } from "@pedelec/chain/Layout"
import { removeDir, tempDir } from "@pedelec/chain/Temp"
import { script } from "@pedelec/providers/scripted/Script"
import type { Page } from "playwright-core"
import { startup } from "./Cli.ts"
import { cpuBetween, cpuSnapshot } from "./Cpu.ts"
import { writeEchoExtension } from "./chain/EchoExtension.ts"
import {
  benchRoutes,
  burst,
  coreEvents,
  openBenchPage,
  pipelined,
  publishToPage,
  roundTrips,
  turn,
  waitForWorker
} from "./chain/PageRuns.ts"
import { startMcpServer, warmUp } from "./Mcp.ts"
import { type Report, type Results, report } from "./Report.ts"
import { MB, median, rate, stats } from "./Stats.ts"

const ROUND_TRIPS = 300
const CALLS = 30
const MCP_CALLS = 200
const SMALL = 64
const KB = 1024
/** A turn's text is at most 1,000,000 characters (contracts TurnText), so "a few large deltas" is 9 of 100,000. */
const DELTA_CASES = [
  { name: "2,000 deltas of 100 B", key: "100B", count: 2000, chars: 100 },
  { name: "9 deltas of 100 KB", key: "100KB", count: 9, chars: 100_000 }
] as const
/** The E2E size case: 600,000 "€" remembered twice, recalled as one 3.6 MB message. */
const EURO_PART = 600_000

/** The floor, after a short warm-up so neither the host's start nor a cold JIT is in the samples. */
const measureFloor = async (page: Page) => {
  await roundTrips(page, 30, SMALL)
  await pipelined(page, 200, KB)
  const trips = stats(await roundTrips(page, ROUND_TRIPS, SMALL))
  const small = await pipelined(page, 2000, KB)
  const large = await pipelined(page, 8, 512 * KB)
  const burstRate = (b: Awaited<ReturnType<typeof burst>>) => rate(b.messages, b.messages * b.chars, b.firstToLastMs)
  const bursts = [burstRate(await burst(page, 2000, 100)), burstRate(await burst(page, 9, 100_000))]
  // 3.6 MB of "€" in frames under Chrome's 1 MiB host → browser cap, as the native host chunks it. The median of
  // three: one pass swung 208–850 ms between runs on a loaded box.
  const euros: Array<number> = []
  for (let pass = 0; pass < 3; pass++) euros.push((await burst(page, 4, (2 * EURO_PART) / 4, "€")).ms)
  return {
    trips,
    small: rate(small.messages, small.messages * KB, small.ms),
    large: rate(large.messages, large.messages * 512 * KB, large.ms),
    bursts,
    euroMs: median(euros)
  }
}

/** The agent's own timing of each call; the first pays for the agent's first spawn (cold caches) and is dropped. */
const measureToolCalls = async (page: Page, sessionId: string) => {
  const calls = Array.from({ length: CALLS + 1 }, () => 'call echo {"text":"ping"}')
  const run = await turn(page, sessionId, script(...calls))
  const reports = run.chatTexts.filter((text) => text.startsWith("tool echo exit "))
  const times = reports.slice(1).map((text) => Number(/\(([\d.]+) ms\)$/.exec(text)?.[1]))
  if (reports.length !== CALLS + 1 || times.some((ms) => !Number.isFinite(ms)) || !reports[1]?.includes(" exit 0: "))
    throw new Error(`unexpected agent output: ${reports.slice(0, 3).join(" | ")}`)
  return stats(times)
}

const MCP_ROUNDS = 5
/**
 * MCP_CALLS calls of the page's `echo` through a `pedelec-cli mcp` for the session, one at a time, while the page
 * holds a turn open (Core takes tool calls only during one); timed at the MCP client, as the agent's CLI sees them,
 * on a chain warmed by Mcp's warmUp (a new agent's server on a Core, host and extension that have served before).
 * They alternate with raw echo round trips in MCP_ROUNDS rounds, so a load that comes and goes on a shared box
 * weighs on both sides of `tool_call_mcp_vs_raw_echo` alike. The CPU per call, by process, counts the calls alone.
 */
const measureMcpToolCalls = async (chain: RunningChain, page: Page, sessionId: string) => {
  await page.evaluate(({ sessionId, text }) => window.bench.holdTurn(sessionId, text), {
    sessionId,
    text: script("sleep 600000")
  })
  const echo = { name: "echo", arguments: { text: "ping" } }
  await warmUp(chain.home, sessionId, echo)
  const server = await startMcpServer(chain.home, sessionId, echo)
  try {
    const calls: Array<number> = []
    const trips: Array<number> = []
    const cpu = new Map<string, number>()
    await server.call() // the new server's own first call: left out, as for the shell
    for (let round = 0; round < MCP_ROUNDS; round++) {
      trips.push(...(await roundTrips(page, ROUND_TRIPS / MCP_ROUNDS, SMALL)))
      // Only the calls' share: the raw trips between them would count in Chromium's and the echo host's CPU.
      const before = await cpuSnapshot()
      for (let i = 0; i < MCP_CALLS / MCP_ROUNDS; i++) calls.push(await server.call())
      for (const [role, ms] of cpuBetween(before, await cpuSnapshot())) cpu.set(role, (cpu.get(role) ?? 0) + ms)
    }
    const cpuPerCall = [...cpu].map(([role, ms]) => [role, ms / MCP_CALLS] as const).sort((a, b) => b[1] - a[1])
    return { calls: stats(calls), trips: stats(trips), cpuPerCall }
  } finally {
    server.close()
    await page.evaluate(() => window.bench.releaseTurn())
  }
}

/**
 * The text of `count` deltas as onChatDelta saw it: Core coalesces deltas that queue up, so the page may get fewer
 * calls with the same text. The time runs from Core's publish of the first (its `at`, so the first event's transit
 * is in it, unlike the raw burst's first-to-last) to the page's receipt of the last; the rate counts the deltas the
 * agent wrote.
 */
const measureDeltas = async (chain: RunningChain, page: Page, sessionId: string) => {
  const runs = []
  for (const shape of DELTA_CASES) {
    const text = script(...Array.from({ length: shape.count }, () => `delta ${"d".repeat(shape.chars)}`))
    const run = await turn(page, sessionId, text)
    const chars = run.deltas.reduce((sum, [, , , n]) => sum + n, 0)
    if (chars !== shape.count * shape.chars) throw new Error(`${shape.name}: the page saw ${chars} characters`)
    const events = await coreEvents(chain.home, sessionId)
    const firstAt = events.get(run.deltas[0]![0])?.at ?? Number.NaN
    const ms = run.deltas.at(-1)![1] - firstAt
    const latency = stats(await publishToPage(chain.home, sessionId, run.deltas))
    runs.push({ ...shape, events: run.deltas.length, rate: rate(shape.count, chars, ms), latency })
  }
  return runs
}

const LONE_DELTAS = 40
/**
 * Lone deltas, 25 ms apart (slower than the chain drains them, so nothing queues): each carries the agent's emit
 * time (`stamp`). Emit → Core publish is what coalescing could add; emit → page is what a reader sees.
 */
const measureLoneDeltas = async (chain: RunningChain, page: Page, sessionId: string) => {
  const lines = Array.from({ length: LONE_DELTAS }, () => ["stamp", "sleep 25"]).flat()
  const run = await turn(page, sessionId, script(...lines))
  const events = await coreEvents(chain.home, sessionId)
  const emitted = (text: string) => Number(/^@(\d+) $/.exec(text)?.[1])
  const lone = run.deltaTexts.map((text, i) => ({ emit: emitted(text), arrival: run.deltas[i]! }))
  if (lone.length !== LONE_DELTAS || lone.some((d) => !Number.isFinite(d.emit)))
    throw new Error(`lone deltas: the page saw ${lone.length} of ${LONE_DELTAS}, or one merged`)
  const toCore = lone.map((d) => (events.get(d.arrival[0])?.at ?? Number.NaN) - d.emit)
  return { toCore: stats(toCore), toPage: stats(lone.map((d) => d.arrival[1] - d.emit)) }
}

/** A first turn remembers half (its own 1.8 MB echo included), the timed one the rest and recalls all of it. */
const measureBigMessage = async (chain: RunningChain, page: Page, sessionId: string) => {
  const part = "€".repeat(EURO_PART)
  await turn(page, sessionId, script(`remember ${part}`))
  const before = await cpuSnapshot()
  const big = await turn(page, sessionId, script(`remember ${part}`, "recall"))
  const cpu = cpuBetween(before, await cpuSnapshot())
  const events = await coreEvents(chain.home, sessionId)
  const arrivals = [...big.deltas.map((a) => ["chat_delta", a] as const), ...big.chats.map((a) => ["chat", a] as const)]
    .sort((a, b) => a[1][0] - b[1][0])
    .map(([kind, [seq, wall, , chars]]) => {
      const at = events.get(seq)?.at ?? Number.NaN
      return { kind, seq, chars, publishToPage: wall - at, sinceSend: at - big.sentAtWall }
    })
  return { ms: big.doneAt - big.sentAt, arrivals, cpu }
}

const measure = async (chain: RunningChain, echoId: string) => {
  const { page, sessionId } = await openBenchPage(chain)
  await page.evaluate((id) => window.bench.echoConnect(id), echoId)
  const floor = await measureFloor(page)
  const { node } = await startup()
  const tool = await measureToolCalls(page, sessionId)
  const mcp = await measureMcpToolCalls(chain, page, sessionId)
  const deltas = await measureDeltas(chain, page, sessionId)
  const lone = await measureLoneDeltas(chain, page, sessionId)
  const big = await measureBigMessage(chain, page, sessionId)
  return { floor, node, tool, mcp, deltas, lone, big }
}

type Measured = Awaited<ReturnType<typeof measure>>

const NAME = 52

const printMeasured = (out: Report, m: Measured) => {
  out.say(`Pedelec browser bench (${os.cpus().length} cores, node ${process.version}, ${path.basename(LAYOUT.root)})`)
  out.say("floor: page ↔ bench echo extension ↔ echo host (Chromium's own transport)")
  out.row(`raw echo round trip (${SMALL} B, sequential)`, m.floor.trips)
  out.rateRow("raw echo pipelined, 1 KB each way", m.floor.small)
  out.rateRow("raw echo pipelined, 512 KB each way", m.floor.large)
  out.rateRow("raw host → page burst, 100 B (first to last)", m.floor.bursts[0]!)
  out.rateRow("raw host → page burst, 100 KB (first to last)", m.floor.bursts[1]!)
  out.msRow("raw host → page, 3.6 MB of € in 4 frames", m.floor.euroMs, "request to last frame")
  out.say("tool call: pedelec-cli → Core → host → extension → SDK → handler → back (as the agent timed it)")
  out.row('node -e "" (spawn to exit; shared with cli)', m.node)
  out.row("tool-call round trip via the page", m.tool)
  out.row("tools/call through pedelec-cli mcp via the page", m.mcp.calls)
  out.row("  raw echo round trip, in rounds with those calls", m.mcp.trips)
  out.say("  CPU per MCP call, by process (/proc, 10 ms ticks over all the calls):")
  for (const [role, ms] of m.mcp.cpuPerCall) out.say(`    ${role.padEnd(NAME - 2)} ${ms.toFixed(2).padStart(8)} ms`)
  out.say("chat deltas at the page (Core's first publish to the page's last onChatDelta)")
  for (const run of m.deltas) out.rateRow(`${run.name} (${run.events} events at the page)`, run.rate)
  for (const run of m.deltas) out.row(`  Core publish → page, ${run.name}`, run.latency)
  out.row(`lone delta: agent emit → Core publish (${LONE_DELTAS}, 25 ms apart)`, m.lone.toCore)
  out.row("lone delta: agent emit → page", m.lone.toPage)
  out.say(`3.6 MB chat message (remember + recall; the turn took ${m.big.ms.toFixed(0)} ms at the page)`)
  for (const a of m.big.arrivals) {
    const size = a.chars >= 10_000 ? `${((a.chars * 3) / MB).toFixed(1)} MB` : `${a.chars} chars`
    const note = `Core publish → page; published ${a.sinceSend} ms after send`
    out.msRow(`${a.kind} #${a.seq} (${size})`, a.publishToPage, note)
  }
  out.say("  CPU during that turn, by process (/proc, 10 ms ticks):")
  for (const [role, ms] of m.big.cpu) out.say(`    ${role.padEnd(NAME - 2)} ${ms.toFixed(0).padStart(8)} ms`)
}

const printRatios = (out: Report, m: Measured) => {
  out.say("ratios")
  out.ratio("tool-call round trip / raw echo round trip", m.tool, m.floor.trips, [
    "tool_call_shell_vs_raw_echo",
    "tool_call_shell_p99_vs_raw_echo"
  ])
  out.ratio("mcp tools/call via the page / raw echo round trip", m.mcp.calls, m.mcp.trips, [
    "tool_call_mcp_vs_raw_echo",
    "tool_call_mcp_p99_vs_raw_echo"
  ])
  out.ratio("tool-call round trip / node spawn", m.tool, m.node, [
    "tool_call_shell_vs_node_spawn",
    "tool_call_shell_p99_vs_node_spawn"
  ])
  for (const [index, run] of m.deltas.entries()) {
    const burstNames = [`deltas_${run.key}_vs_raw_burst`, `deltas_${run.key}_mb_vs_raw_burst`] as const
    out.rateRatio(`${run.name} / raw host → page burst`, run.rate, m.floor.bursts[index]!, burstNames)
    const echoNames = [`deltas_${run.key}_vs_raw_echo_1KB`, `deltas_${run.key}_mb_vs_raw_echo_1KB`] as const
    out.rateRatio(`${run.name} / raw echo pipelined 1 KB`, run.rate, m.floor.small, echoNames)
  }
  out.factors("lone delta: agent emit → Core publish, p99 (ms)", [
    { name: "delta_added_latency_p99_ms", value: m.lone.toCore.p99 }
  ])
  // One chat_delta and one chat carry the whole 3.6 MB; the last of each kind is the message.
  for (const kind of ["chat_delta", "chat"] as const) {
    const whole = m.big.arrivals.filter((a) => a.kind === kind && a.chars >= 1_000_000).at(-1)
    if (whole === undefined) continue
    const name = kind === "chat" ? "large_chat_vs_raw" : "large_chat_delta_vs_raw"
    const factor = { name, value: whole.publishToPage / m.floor.euroMs }
    out.factors(`3.6 MB ${kind}: Core → page / raw host → page`, [factor], 0, 1)
  }
}

/** Starts the chain with the echo relay beside Pedelec's extension, measures, and always takes it all down. */
export const chain = async (results: Results): Promise<void> => {
  const missing = missingBuilds()
  if (missing.length > 0) throw new Error(`missing build output of ${missing.join(", ")}; run \`npm run build\` first`)
  const scratch = await tempDir("bench")
  let running: RunningChain | undefined
  // Ctrl-C still removes Chromium, Core and the temp dirs.
  const interrupted = () => {
    void (running?.close() ?? Promise.resolve()).then(() => removeDir(scratch)).finally(() => process.exit(130))
  }
  process.once("SIGINT", interrupted)
  try {
    const echo = await writeEchoExtension(scratch)
    const options = { routes: await benchRoutes(), https: false, extraExtensionDirs: [echo.dir] }
    running = await startChain({ ...options, prepareProfile: echo.registerIn })
    await waitForWorker(running, echo.id)
    const measured = await measure(running, echo.id)
    const out = report(results, NAME)
    printMeasured(out, measured)
    printRatios(out, measured)
  } catch (error) {
    if (running !== undefined) {
      process.stderr.write(`--- native host log ---\n${await running.hostLog()}\n`)
      process.stderr.write(`--- pedelec-core stderr ---\n${running.core?.stderr() ?? "(no Core)"}\n`)
    }
    throw error
  } finally {
    process.off("SIGINT", interrupted)
    await running?.close()
    await removeDir(scratch)
    // Chromium's exit reaps its children a moment later; nothing else of ours outlives the run.
    await sleep(100)
  }
}
