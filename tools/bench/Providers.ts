/**
 * Providers — the `providers` scenario: each live provider through Pedelec next to the bare CLI against the same
 * scripted model server in the same run, so the ratio is Pedelec's overhead where absolute times (a CLI's own
 * start-up on a shared 2-core box) mean little. `tsx tools/bench/run.ts providers codex ollama` runs only those.
 *   Pedelec: the real built Core (temp PEDELEC_HOME, the pinned CLI first on its PATH, configured as the conformance
 *   suite does) and a host client; from session.send_text to the turn's first event and to turn_completed. Turn 1
 *   starts a provider session; later turns resume it (warm turns, for an adapter that keeps its process).
 *   Bare: the same CLI spawned with the adapter's own argv and environment (providers/BareCli); fresh, then resumed.
 *   Ollama: pedelec-agent through Core next to one direct streaming /api/chat (providers/OllamaBench).
 * It does not install the CLIs (apps/core-daemon's conformance setup does) nor check their behaviour (that suite).
 */
import { mkdir, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { mintSessionId } from "@pedelec/core/Mint"
import { freshSessionPrompt } from "@pedelec/core/Prompt"
import {
  type CliEnvironment,
  claudeEnvironment,
  codexEnvironment,
  geminiEnvironment,
  OPENCODE_MODEL,
  opencodeEnvironment
} from "@pedelec/core-daemon/conformance/CliEnvironments"
import { CLAUDE, CODEX, ensureCli, GEMINI, OPENCODE } from "@pedelec/core-daemon/conformance/global-setup"
import { type CoreProcess, startCoreProcess } from "@pedelec/test-kit/core/CoreProcess"
import { startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { cliBinDir, tempDir } from "./BenchCore.ts"
import { type BareCode, type BareRun, bareSession, runBare } from "./providers/BareCli.ts"
import { measureOllama, type OllamaMeasured } from "./providers/OllamaBench.ts"
import { type PedelecTurn, pedelecSession } from "./providers/PedelecTurns.ts"
import { type Report, type Results, report } from "./Report.ts"
import { type Stats, stats } from "./Stats.ts"

/**
 * Sessions of TURNS turns on each side, alternating: at least MIN_SESSIONS, and more up to MAX_SESSIONS while the
 * provider has used less than its budget, so a 1 s CLI gets more samples and a 20 s one still finishes in minutes.
 */
const MIN_SESSIONS = 3
const MAX_SESSIONS = 5
const BUDGET_MS = 60_000
const TURNS = 2
/** Ollama turns take tens of ms against a floor of 5–14 ms: one later turn per session gave ratios 2.6–6.7 apart. */
const OLLAMA_TURNS = 6
const TURN_TIMEOUT_MS = 90_000
const TEXT = "TEXT[hello from the provider bench]END"

interface Provider {
  readonly code: BareCode
  readonly pinned: Parameters<typeof ensureCli>[0]
  readonly environment: CliEnvironment
  readonly model?: string
}

const PROVIDERS: ReadonlyArray<Provider> = [
  { code: "claude", pinned: CLAUDE, environment: claudeEnvironment },
  { code: "codex", pinned: CODEX, environment: codexEnvironment },
  { code: "gemini", pinned: GEMINI, environment: geminiEnvironment },
  { code: "opencode", pinned: OPENCODE, environment: opencodeEnvironment, model: OPENCODE_MODEL }
]

interface Measured {
  readonly turn1: Array<PedelecTurn>
  readonly later: Array<PedelecTurn>
  readonly fresh: Array<BareRun>
  readonly resumed: Array<BareRun>
}

/** One bare conversation, in its own workspace, resuming what each run reported as Core does. */
const bareConversation = async (
  provider: Provider,
  command: string,
  env: Record<string, string>,
  root: string,
  turns: number
) => {
  const sessionId = mintSessionId()
  const dir = path.join(root, "bare", sessionId)
  const workspace = path.join(dir, "workspace")
  await mkdir(workspace, { recursive: true })
  // What Core puts on top of its own environment for an agent (pedelec-cli first on PATH, the thread id).
  const agentEnv = {
    ...env,
    PATH: [cliBinDir, env.PATH].join(path.delimiter),
    PEDELEC_THREAD_ID: sessionId
  }
  const session = bareSession(provider.code, { sessionId, workspace, env: agentEnv, model: provider.model })
  // Core's prompt for a session without skills: no guidance, no page tools, the tools as shell commands.
  const promptContext = { sessionId, guidance: undefined, tools: [], denoAvailable: false, toolsAsFunctions: false }
  const runs: Array<BareRun> = []
  for (let turn = 0; turn < turns; turn++) {
    const previous = runs.at(-1)?.providerSessionId
    const prompt = turn === 0 ? freshSessionPrompt(promptContext, TEXT) : TEXT
    const input = { prompt, providerSessionId: previous, kind: "user" as const }
    runs.push(await runBare(provider.code, command, session, input, dir, TURN_TIMEOUT_MS))
  }
  return runs
}

/** Alternates Pedelec sessions and bare conversations, so neither side always runs right after the other. */
const sessions = async (
  provider: Provider,
  core: CoreProcess,
  command: string,
  env: Record<string, string>,
  root: string
) => {
  const measured: Measured = { turn1: [], later: [], fresh: [], resumed: [] }
  const pedelec = async () => {
    const turns = await pedelecSession(core.info, provider, TEXT, TURNS, TURN_TIMEOUT_MS)
    measured.turn1.push(turns[0]!)
    measured.later.push(...turns.slice(1))
  }
  const bare = async () => {
    const runs = await bareConversation(provider, command, env, root, TURNS)
    measured.fresh.push(runs[0]!)
    measured.resumed.push(...runs.slice(1))
  }
  const started = performance.now()
  for (
    let round = 0;
    round < MIN_SESSIONS || (round < MAX_SESSIONS && performance.now() - started < BUDGET_MS);
    round++
  ) {
    for (const side of round % 2 === 0 ? [pedelec, bare] : [bare, pedelec]) await side()
  }
  return measured
}

/**
 * The scripted server, a temp root with the CLI's config, and a Core with the CLI first on its PATH, for one CLI.
 * This Core needs the CLI's environment, which tools/bench/CoreProcess does not take: test-kit's start, beneath it.
 */
const measure = async (provider: Provider, binDir: string): Promise<Measured> => {
  const server = await startModelServer()
  const root = await tempDir(`pedelec-bench-${provider.code}-`)
  const home = await tempDir("pedelec-bench-core-")
  let core: CoreProcess | undefined
  try {
    const configured = await provider.environment(root, server)
    const env = { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`, ...configured }
    core = await startCoreProcess({ home, env })
    const command = path.join(binDir, provider.pinned.command)
    // Untimed: the first run of a CLI also reads its hundreds of MB from disk, which is neither side's cost.
    await bareConversation(provider, command, env, root, 1)
    return await sessions(provider, core, command, env, root)
  } catch (error) {
    if (core !== undefined) process.stderr.write(`--- pedelec-core stderr ---\n${core.stderr().slice(-4_000)}\n`)
    throw error
  } finally {
    await core?.stop()
    await server.close()
    await rm(home, { recursive: true, force: true })
    await rm(root, { recursive: true, force: true })
  }
}

const NAME = 48
const CELL = 24
const ms = (s: Stats) => `${s.median.toFixed(0).padStart(6)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`
const first = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.firstEvent))
const done = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.completed))

/** A measurement to its first event and to its completion, side by side. */
type Pair = readonly [first: Stats, done: Stats]

const pairRow = (out: Report, label: string, [toFirst, toDone]: Pair) =>
  out.columns(label, [ms(toFirst), ms(toDone), `n=${toFirst.n}`], CELL)

/** Median ratios for both columns, recorded as `<ours>_first_event_<floor>` and `<ours>_<floor>`. */
const pairRatio = (out: Report, label: string, names: readonly [ours: string, floor: string], o: Pair, f: Pair) =>
  out.factors(
    label,
    [
      { name: `${names[0]}_first_event_${names[1]}`, value: o[0].median / f[0].median },
      { name: `${names[0]}_${names[1]}`, value: o[1].median / f[1].median }
    ],
    CELL
  )

const header = (out: Report) => out.columns("", ["  to first event", "  to completion"], CELL + 1)

const print = (out: Report, provider: Provider, version: string, m: Measured, seconds: number) => {
  const bare = (runs: ReadonlyArray<BareRun>, key: keyof Omit<BareRun, "providerSessionId">) =>
    stats(runs.map((run) => run[key]))
  const turn1: Pair = [first(m.turn1), done(m.turn1)]
  const later: Pair = [first(m.later), done(m.later)]
  const fresh: Pair = [bare(m.fresh, "firstText"), bare(m.fresh, "completed")]
  const resumed: Pair = [bare(m.resumed, "firstText"), bare(m.resumed, "completed")]
  const count = m.turn1.length
  out.say(`${provider.code} ${version} (${count} sessions × ${TURNS} turns on each side, ${seconds.toFixed(0)} s)`)
  header(out)
  pairRow(out, "Pedelec turn 1 (new provider session)", turn1)
  pairRow(out, "Pedelec later turns (resumed)", later)
  pairRow(out, "bare CLI fresh: first text / completion line", fresh)
  pairRow(out, "bare CLI resumed: first text / completion line", resumed)
  pairRow(out, "bare CLI fresh: first stdout line / exit", [bare(m.fresh, "firstLine"), bare(m.fresh, "exit")])
  pairRow(out, "bare CLI resumed: first stdout line / exit", [bare(m.resumed, "firstLine"), bare(m.resumed, "exit")])
  const tail = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.messageToCompletion)).median.toFixed(0)
  out.say(
    `  Core's clock, last chat message → turn_completed: turn 1 ${tail(m.turn1)} ms, later turns ${tail(m.later)} ms`
  )
  out.say("  ratios (medians)")
  const code = provider.code
  pairRatio(out, "Pedelec turn 1 / bare fresh", [`${code}_first_turn`, "vs_bare_fresh"], turn1, fresh)
  pairRatio(out, "Pedelec later turns / bare resumed", [`${code}_later_turns`, "vs_bare_resumed"], later, resumed)
  pairRatio(out, "Pedelec later turns / Pedelec turn 1", [`${code}_later_turns`, "vs_first_turn"], later, turn1)
  pairRatio(out, "bare resumed / bare fresh", [`${code}_bare_resumed`, "vs_fresh"], resumed, fresh)
}

const printOllama = (out: Report, m: OllamaMeasured, seconds: number) => {
  const direct: Pair = [stats(m.direct.map((d) => d.firstText)), stats(m.direct.map((d) => d.done))]
  const turn1: Pair = [first(m.turn1), done(m.turn1)]
  const later: Pair = [first(m.later), done(m.later)]
  const turns = (m.turn1.length + m.later.length) / m.turn1.length
  out.say(`ollama via pedelec-agent (${m.turn1.length} sessions × ${turns} turns, ${seconds.toFixed(0)} s)`)
  header(out)
  pairRow(out, "Pedelec turn 1 (new conversation)", turn1)
  pairRow(out, "Pedelec later turns (resumed)", later)
  pairRow(out, "direct POST /api/chat from the bench", direct)
  out.say("  ratios (medians)")
  pairRatio(out, "Pedelec turn 1 / direct", ["ollama_first_turn", "vs_direct"], turn1, direct)
  pairRatio(out, "Pedelec later turns / direct", ["ollama_later_turns", "vs_direct"], later, direct)
  out.amounts(
    "CPU per later turn: Core, pedelec-agent",
    [
      { name: "ollama_later_turn_cpu_ms_core", value: m.coreCpu },
      { name: "ollama_later_turn_cpu_ms_agent", value: m.agentCpu }
    ],
    "ms"
  )
}

/** One CLI, installed at its pinned version if need be; a CLI that fails is reported and the others still run. */
const runProvider = async (out: Report, provider: Provider) => {
  let installed: Awaited<ReturnType<typeof ensureCli>>
  try {
    installed = await ensureCli(provider.pinned)
  } catch (error) {
    const pinned = `${provider.pinned.packageName}@${provider.pinned.version}`
    out.say(`${provider.code}: skipped, ${pinned} did not install: ${error}`)
    return
  }
  const started = performance.now()
  try {
    const measured = await measure(provider, installed.binDir)
    print(out, provider, installed.version, measured, (performance.now() - started) / 1000)
  } catch (error) {
    out.say(`${provider.code}: FAILED after ${((performance.now() - started) / 1000).toFixed(0)} s: ${error}`)
    process.exitCode = 1
  }
}

/** `codes`: the providers to run (claude codex gemini opencode ollama); all of them when empty. */
export const providers = async (results: Results, codes: ReadonlyArray<string>): Promise<void> => {
  const unknown = codes.filter((code) => code !== "ollama" && !PROVIDERS.some((p) => p.code === code))
  if (unknown.length > 0) throw new Error(`unknown provider(s) ${unknown.join(", ")}`)
  const out = report(results, NAME)
  out.say(`Pedelec provider bench (${os.cpus().length} cores, node ${process.version}): "${TEXT}" per turn`)
  out.say(
    "  Pedelec: session.send_text → the turn's first event from the provider (its first chat_delta) → turn_completed"
  )
  out.say(
    "  bare: spawn → the first line the adapter's decoder reads as text → its completion line (or stdout line / exit)"
  )
  for (const provider of PROVIDERS.filter((p) => codes.length === 0 || codes.includes(p.code)))
    await runProvider(out, provider)
  if (codes.length === 0 || codes.includes("ollama")) {
    const started = performance.now()
    const measured = await measureOllama(TEXT, MAX_SESSIONS, OLLAMA_TURNS, TURN_TIMEOUT_MS)
    printOllama(out, measured, (performance.now() - started) / 1000)
  }
}
