// `tsx apps/core-daemon/bench/providers.ts [claude codex gemini opencode ollama]` (after `npx nx run-many -t build`): each live
// provider through Pedelec next to the bare CLI against the same scripted model server in the same run, so the ratio
// is Pedelec's overhead where absolute times (a CLI's own start-up on a shared 2-core box) mean little.
//   Pedelec: the real built Core (temp PEDELEC_HOME, the pinned CLI first on its PATH, configured as the conformance
//   suite does) and a host client; from session.send_text to the turn's first event and to turn_completed. Turn 1
//   starts a provider session; later turns resume it (warm turns, for an adapter that keeps its process).
//   Bare: the same CLI spawned with the adapter's own argv and environment (BareCli.ts); fresh, then resumed.
import { mkdir, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { mintSessionId } from "@pedelec/core/Mint"
import { freshSessionPrompt } from "@pedelec/core/Prompt"
import { startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import {
  type CliEnvironment,
  claudeEnvironment,
  codexEnvironment,
  geminiEnvironment,
  OPENCODE_MODEL,
  opencodeEnvironment
} from "../conformance/CliEnvironments.ts"
import { CLAUDE, CODEX, ensureCli, GEMINI, OPENCODE } from "../conformance/global-setup.ts"
import { cliBinDir, type RunningCore, removeHome, startCore, stopCore, tempDir } from "../test/harness.ts"
import { type BareCode, type BareRun, bareSession, runBare } from "./BareCli.ts"
import { measureOllama, type OllamaMeasured } from "./OllamaBench.ts"
import { type PedelecTurn, pedelecSession } from "./PedelecTurns.ts"

/**
 * Sessions of TURNS turns on each side, alternating: at least MIN_SESSIONS, and more up to MAX_SESSIONS while the
 * provider has used less than its budget, so a 1 s CLI gets more samples and a 20 s one still finishes in minutes.
 */
const MIN_SESSIONS = 3
const MAX_SESSIONS = 5
const BUDGET_MS = 60_000
const TURNS = 2
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

// Not console: Biome keeps console out of apps; a report is plain stdout lines.
const say = (line: string) => process.stdout.write(`${line}\n`)

interface Stats {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly n: number
}

const stats = (samples: ReadonlyArray<number>): Stats => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length }
}

const NAME = 48
const ms = (s: Stats) => `${s.median.toFixed(0).padStart(6)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`
const row = (name: string, first: Stats, done: Stats) =>
  `  ${name.padEnd(NAME)} ${ms(first).padEnd(24)} ${ms(done).padEnd(24)} n=${first.n}`
const times = (ours: Stats, floor: Stats) => `${(ours.median / floor.median).toFixed(2).padStart(6)}×`
const ratio = (name: string, first: [Stats, Stats], done: [Stats, Stats]) =>
  `  ${name.padEnd(NAME)} ${times(...first).padEnd(24)} ${times(...done)}`

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
  core: RunningCore,
  command: string,
  env: Record<string, string>,
  root: string
) => {
  const measured: Measured = { turn1: [], later: [], fresh: [], resumed: [] }
  const pedelec = async () => {
    const turns = await pedelecSession(core, provider, TEXT, TURNS, TURN_TIMEOUT_MS)
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

/** The scripted server, a temp root with the CLI's config, and a Core with the CLI first on its PATH, for one CLI. */
const measure = async (provider: Provider, binDir: string): Promise<Measured> => {
  const server = await startModelServer()
  const root = await tempDir(`pedelec-bench-${provider.code}-`)
  let core: RunningCore | undefined
  try {
    const configured = await provider.environment(root, server)
    const env = { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`, ...configured }
    core = await startCore({ env })
    const command = path.join(binDir, provider.pinned.command)
    // Untimed: the first run of a CLI also reads its hundreds of MB from disk, which is neither side's cost.
    await bareConversation(provider, command, env, root, 1)
    return await sessions(provider, core, command, env, root)
  } catch (error) {
    if (core !== undefined) process.stderr.write(`--- pedelec-core stderr ---\n${core.stderr().slice(-4_000)}\n`)
    throw error
  } finally {
    if (core !== undefined) {
      await stopCore(core)
      await removeHome(core.home)
    }
    await server.close()
    await rm(root, { recursive: true, force: true })
  }
}

const print = (provider: Provider, version: string, m: Measured, seconds: number) => {
  const first = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.firstEvent))
  const done = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.completed))
  const bare = (runs: ReadonlyArray<BareRun>, key: keyof Omit<BareRun, "providerSessionId">) =>
    stats(runs.map((run) => run[key]))
  const turn1 = [first(m.turn1), done(m.turn1)] as const
  const later = [first(m.later), done(m.later)] as const
  const fresh = [bare(m.fresh, "firstText"), bare(m.fresh, "completed")] as const
  const resumed = [bare(m.resumed, "firstText"), bare(m.resumed, "completed")] as const
  const count = m.turn1.length
  say(`${provider.code} ${version} (${count} sessions × ${TURNS} turns on each side, ${seconds.toFixed(0)} s)`)
  say(`  ${"".padEnd(NAME)} ${"  to first event".padEnd(24)}   to completion`)
  say(row("Pedelec turn 1 (new provider session)", ...turn1))
  say(row("Pedelec later turns (resumed)", ...later))
  say(row("bare CLI fresh: first text / completion line", ...fresh))
  say(row("bare CLI resumed: first text / completion line", ...resumed))
  say(row("bare CLI fresh: first stdout line / exit", bare(m.fresh, "firstLine"), bare(m.fresh, "exit")))
  say(row("bare CLI resumed: first stdout line / exit", bare(m.resumed, "firstLine"), bare(m.resumed, "exit")))
  const tail = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.messageToCompletion)).median.toFixed(0)
  say(`  Core's clock, last chat message → turn_completed: turn 1 ${tail(m.turn1)} ms, later turns ${tail(m.later)} ms`)
  say("  ratios (medians)")
  say(ratio("Pedelec turn 1 / bare fresh", [turn1[0], fresh[0]], [turn1[1], fresh[1]]))
  say(ratio("Pedelec later turns / bare resumed", [later[0], resumed[0]], [later[1], resumed[1]]))
  say(ratio("Pedelec later turns / Pedelec turn 1", [later[0], turn1[0]], [later[1], turn1[1]]))
  say(ratio("bare resumed / bare fresh", [resumed[0], fresh[0]], [resumed[1], fresh[1]]))
}

const printOllama = (m: OllamaMeasured, seconds: number) => {
  const first = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.firstEvent))
  const done = (turns: ReadonlyArray<PedelecTurn>) => stats(turns.map((t) => t.completed))
  const direct = [stats(m.direct.map((d) => d.firstText)), stats(m.direct.map((d) => d.done))] as const
  say(`ollama via pedelec-agent (${m.turn1.length} sessions × ${TURNS} turns, ${seconds.toFixed(0)} s)`)
  say(`  ${"".padEnd(NAME)} ${"  to first event".padEnd(24)}   to completion`)
  say(row("Pedelec turn 1 (new conversation)", first(m.turn1), done(m.turn1)))
  say(row("Pedelec later turns (resumed)", first(m.later), done(m.later)))
  say(row("direct POST /api/chat from the bench", ...direct))
  say("  ratios (medians)")
  say(ratio("Pedelec turn 1 / direct", [first(m.turn1), direct[0]], [done(m.turn1), direct[1]]))
  say(ratio("Pedelec later turns / direct", [first(m.later), direct[0]], [done(m.later), direct[1]]))
}

const main = async () => {
  const wanted = process.argv.slice(2)
  const unknown = wanted.filter((code) => code !== "ollama" && !PROVIDERS.some((p) => p.code === code))
  if (unknown.length > 0) throw new Error(`unknown provider(s) ${unknown.join(", ")}`)
  const chosen = PROVIDERS.filter((p) => wanted.length === 0 || wanted.includes(p.code))
  say(`Pedelec provider bench (${os.cpus().length} cores, node ${process.version}): "${TEXT}" per turn`)
  say("  Pedelec: session.send_text → the turn's first event from the provider (its first chat_delta) → turn_completed")
  say(
    "  bare: spawn → the first line the adapter's decoder reads as text → its completion line (or stdout line / exit)"
  )
  for (const provider of chosen) {
    let installed: Awaited<ReturnType<typeof ensureCli>>
    try {
      installed = await ensureCli(provider.pinned)
    } catch (error) {
      say(
        `${provider.code}: skipped, ${provider.pinned.packageName}@${provider.pinned.version} did not install: ${error}`
      )
      continue
    }
    const started = performance.now()
    try {
      const measured = await measure(provider, installed.binDir)
      print(provider, installed.version, measured, (performance.now() - started) / 1000)
    } catch (error) {
      say(`${provider.code}: FAILED after ${((performance.now() - started) / 1000).toFixed(0)} s: ${error}`)
      process.exitCode = 1
    }
  }
  if (wanted.length === 0 || wanted.includes("ollama")) {
    const started = performance.now()
    const measured = await measureOllama(TEXT, MAX_SESSIONS, TURNS, TURN_TIMEOUT_MS)
    printOllama(measured, (performance.now() - started) / 1000)
  }
}

await main()
