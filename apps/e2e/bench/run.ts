// `npx tsx apps/e2e/bench/run.ts` (after `npx nx run-many -t build`): the browser half of Pedelec's hot paths, each
// next to a floor measured in the same Chromium run, so the ratios mean something where absolute times do not.
//   Floor: a bench-only MV3 extension relaying a page port to a Node echo host (EchoExtension), i.e. Chromium's own
//   page ↔ service worker ↔ native messaging transport with no Pedelec code in it.
//   1. The raw echo itself: sequential round trips, pipelined throughput, one-way host → page bursts.
//   2. A tool call as the agent sees it (pedelec-cli → Core → host → extension → SDK → handler → back), next to the
//      raw echo round trip and to `node -e ""` (the agent spawns a process for every call anyway).
//   3. Chat deltas counted by the page's onChatDelta, next to a host → page burst of the same shape.
//   4. One 3.6 MB chat message (the E2E size case): Core publish → page per event, and the CPU each process used.
import { spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { build } from "esbuild"
import type { Page } from "playwright-core"
import { approving } from "../src/chain/Browser.ts"
import { type Chain, startChain } from "../src/chain/Chain.ts"
import { LAYOUT, missingBuilds } from "../src/chain/Layout.ts"
import { removeDir, tempDir } from "../src/chain/Temp.ts"
import { testPageRoutes } from "../src/chain/TestPage.ts"
import { cpuBetween, cpuSnapshot } from "./Cpu.ts"
import { writeEchoExtension } from "./EchoExtension.ts"
import type { Arrival, BurstRun, EchoRun, TurnRun } from "./page/bench-page.ts"

const ROUND_TRIPS = 300
const CALLS = 30
const SPAWNS = 30
const SMALL = 64
const KB = 1024
const MB = 1e6
/** A turn's text is at most 1,000,000 characters (contracts TurnText), so "a few large deltas" is 9 of 100,000. */
const DELTA_CASES = [
  { name: "2,000 deltas of 100 B", count: 2000, chars: 100 },
  { name: "9 deltas of 100 KB", count: 9, chars: 100_000 }
] as const
/** The E2E size case: 600,000 "€" remembered twice, recalled as one 3.6 MB message. */
const EURO_PART = 600_000

interface Stats {
  readonly median: number
  readonly p99: number
  readonly n: number
}

const stats = (samples: ReadonlyArray<number>): Stats => {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return { median: at(0.5), p99: at(0.99), n: sorted.length }
}

interface Rate {
  readonly perSecond: number
  readonly mbPerSecond: number
  readonly ms: number
  readonly n: number
}

const rate = (messages: number, bytes: number, ms: number): Rate => ({
  perSecond: (messages * 1000) / ms,
  mbPerSecond: (bytes / MB) * (1000 / ms),
  ms,
  n: messages
})

const NAME = 52

// Not console: Biome keeps console out of apps; a report is plain stdout lines.
const say = (line: string) => process.stdout.write(`${line}\n`)

const row = (name: string, s: Stats) =>
  `  ${name.padEnd(NAME)} median ${s.median.toFixed(2).padStart(8)} ms   p99 ${s.p99.toFixed(2).padStart(8)} ms   n=${s.n}`

const rateRow = (name: string, r: Rate) =>
  `  ${name.padEnd(NAME)} ${r.perSecond.toFixed(0).padStart(8)} msg/s ${r.mbPerSecond.toFixed(2).padStart(8)} MB/s   n=${r.n} in ${r.ms.toFixed(0)} ms`

const msRow = (name: string, ms: number, note = "") =>
  `  ${name.padEnd(NAME)} ${ms.toFixed(0).padStart(8)} ms${note === "" ? "" : `   ${note}`}`

const ratio = (name: string, ours: Stats, floor: Stats) =>
  `  ${name.padEnd(NAME)} ${(ours.median / floor.median).toFixed(2)}× median, ${(ours.p99 / floor.p99).toFixed(2)}× p99`

const rateRatio = (name: string, ours: Rate, floor: Rate) =>
  `  ${name.padEnd(NAME)} ${(ours.perSecond / floor.perSecond).toFixed(2)}× msg/s, ${(ours.mbPerSecond / floor.mbPerSecond).toFixed(2)}× MB/s`

const script = (lines: ReadonlyArray<string>) => ["```pedelec-script", ...lines, "```"].join("\n")

const timeSpawn = (command: string, args: ReadonlyArray<string>) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, [...args], { stdio: "ignore" })
    child.once("error", reject)
    child.once("exit", () => resolve(performance.now() - started))
  })

const spawnTimes = async (command: string, args: ReadonlyArray<string>) => {
  const samples: Array<number> = []
  for (let i = 0; i < SPAWNS; i++) samples.push(await timeSpawn(command, args))
  return samples
}

/** The test page plus the bench's page module, bundled once (the probe and the SDK bundle come from TestPage). */
const benchRoutes = async () => {
  const bundled = await build({
    entryPoints: [path.join(LAYOUT.root, "apps/e2e/bench/page/bench-page.ts")],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    write: false,
    logLevel: "silent"
  })
  const code = bundled.outputFiles[0]!.text
  return { ...(await testPageRoutes()), "/bench.js": { type: "text/javascript", body: async () => code } }
}

/** The events Core published for a session, by seq, from its durable log (`at` is Core's Date.now()). */
const coreEvents = async (home: string, sessionId: string) => {
  const file = path.join(home, "logs", `${sessionId}.jsonl`)
  const events = new Map<number, { readonly type: string; readonly at: number }>()
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    if (line === "") continue
    const event = JSON.parse(line) as { readonly seq: number; readonly type: string; readonly at: number }
    events.set(event.seq, { type: event.type, at: event.at })
  }
  return events
}

/** Core publish → page receipt for each arrival, in ms (1 ms resolution: both sides read Date.now()). */
const publishToPage = async (home: string, sessionId: string, arrivals: ReadonlyArray<Arrival>) => {
  const events = await coreEvents(home, sessionId)
  return arrivals.map(([seq, wall]) => {
    const event = events.get(seq)
    if (event === undefined) throw new Error(`Core's log has no event ${seq} for ${sessionId}`)
    return wall - event.at
  })
}

const openBenchPage = async (chain: Chain): Promise<{ readonly page: Page; readonly sessionId: string }> => {
  const page = await chain.openPage(chain.origins.http)
  await page.addScriptTag({ url: "/bench.js", type: "module" })
  await page.waitForFunction(() => window.bench !== undefined, undefined, { timeout: 15_000 })
  const { value: sessionId } = await approving(chain.context, chain.extensionId, () =>
    page.evaluate(async (extensionId) => {
      const session = await window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
      window.e2e.keep(session)
      return session.sessionId
    }, chain.extensionId)
  )
  return { page, sessionId }
}

const waitForWorker = async (chain: Chain, extensionId: string) => {
  const ours = (url: string) => url.startsWith(`chrome-extension://${extensionId}/`)
  if (chain.context.serviceWorkers().some((worker) => ours(worker.url()))) return
  await chain.context.waitForEvent("serviceworker", { predicate: (worker) => ours(worker.url()), timeout: 15_000 })
}

const turn = async (page: Page, sessionId: string, text: string): Promise<TurnRun> => {
  const run = await page.evaluate(({ sessionId, text }) => window.bench.turn(sessionId, text), { sessionId, text })
  if (run.reason !== "completed") throw new Error(`a bench turn ended ${run.reason}`)
  return run
}

const burst = (page: Page, n: number, chars: number, char = "x"): Promise<BurstRun> =>
  page.evaluate(({ n, chars, char }) => window.bench.echoBurst(n, chars, char), { n, chars, char })

const pipelined = (page: Page, n: number, chars: number): Promise<EchoRun> =>
  page.evaluate(({ n, chars }) => window.bench.echoPipelined(n, chars), { n, chars })

const measure = async (chain: Chain, echoId: string) => {
  const { page, sessionId } = await openBenchPage(chain)
  await page.evaluate((id) => window.bench.echoConnect(id), echoId)

  // 1. The floor. A short warm-up first, so neither the host's start nor a cold JIT is in the samples.
  await page.evaluate(() => window.bench.echoRoundTrips(30, 64))
  await pipelined(page, 200, KB)
  const echoTrips = stats(await page.evaluate((n) => window.bench.echoRoundTrips(n, 64), ROUND_TRIPS))
  const echoSmall = await pipelined(page, 2000, KB)
  const echoLarge = await pipelined(page, 8, 512 * KB)
  const burstSmall = await burst(page, 2000, 100)
  const burstLarge = await burst(page, 9, 100_000)
  // 3.6 MB of "€" in frames under Chrome's 1 MiB host → browser cap, as the native host chunks it.
  const burstEuro = await burst(page, 4, (2 * EURO_PART) / 4, "€")

  // 2. Tool calls. The first pays for the agent's first spawn (cold caches), as in tools/bench: dropped.
  const node = stats(await spawnTimes(process.execPath, ["-e", ""]))
  const cliVersion = stats(await spawnTimes(path.join(LAYOUT.cliBinDir, "pedelec-cli"), ["--version"]))
  const calls = Array.from({ length: CALLS + 1 }, () => 'call echo {"text":"ping"}')
  const toolTurn = await turn(page, sessionId, script(calls))
  const reports = toolTurn.chatTexts.filter((text) => text.startsWith("tool echo exit "))
  const roundTrips = reports.slice(1).map((text) => Number(/\(([\d.]+) ms\)$/.exec(text)?.[1]))
  if (
    reports.length !== CALLS + 1 ||
    roundTrips.some((ms) => !Number.isFinite(ms)) ||
    !reports[1]?.includes(" exit 0: ")
  )
    throw new Error(`unexpected agent output: ${reports.slice(0, 3).join(" | ")}`)

  // 3. Deltas, first to last as onChatDelta saw them.
  const deltaRuns = []
  for (const shape of DELTA_CASES) {
    const text = script(Array.from({ length: shape.count }, () => `delta ${"d".repeat(shape.chars)}`))
    const run = await turn(page, sessionId, text)
    if (run.deltas.length !== shape.count) throw new Error(`${shape.name}: the page saw ${run.deltas.length} deltas`)
    const ms = run.deltas.at(-1)![2] - run.deltas[0]![2]
    const bytes = run.deltas.reduce((sum, [, , , chars]) => sum + chars, 0)
    const latency = stats(await publishToPage(chain.home, sessionId, run.deltas))
    deltaRuns.push({ ...shape, rate: rate(shape.count, bytes, ms), latency, firstMs: run.deltas[0]![2] - run.sentAt })
  }

  // 4. The 3.6 MB message: a first turn remembers half (its own 1.8 MB echo included), the timed one the rest.
  const part = "€".repeat(EURO_PART)
  await turn(page, sessionId, script([`remember ${part}`]))
  const before = await cpuSnapshot()
  const big = await turn(page, sessionId, script([`remember ${part}`, "recall"]))
  const cpu = cpuBetween(before, await cpuSnapshot())
  const events = await coreEvents(chain.home, sessionId)
  const bigArrivals = [
    ...big.deltas.map((a) => ["chat_delta", a] as const),
    ...big.chats.map((a) => ["chat", a] as const)
  ]
    .sort((a, b) => a[1][0] - b[1][0])
    .map(([kind, [seq, wall, , chars]]) => {
      const at = events.get(seq)?.at ?? Number.NaN
      return { kind, seq, chars, publishToPage: wall - at, sinceSend: at - big.sentAtWall }
    })

  return {
    echo: { trips: echoTrips, small: echoSmall, large: echoLarge, burstSmall, burstLarge, burstEuro },
    spawn: { node, cliVersion },
    tool: stats(roundTrips),
    deltaRuns,
    big: { ms: big.doneAt - big.sentAt, arrivals: bigArrivals, cpu }
  }
}

const print = (m: Awaited<ReturnType<typeof measure>>) => {
  const r = (run: EchoRun, chars: number) => rate(run.messages, run.messages * chars, run.ms)
  const echoSmall = r(m.echo.small, KB)
  const echoLarge = r(m.echo.large, 512 * KB)
  const burstRate = (b: BurstRun, bytesPerChar = 1) =>
    rate(b.messages, b.messages * b.chars * bytesPerChar, b.firstToLastMs)
  const bursts = [burstRate(m.echo.burstSmall), burstRate(m.echo.burstLarge)]
  const euro = m.echo.burstEuro

  say(`Pedelec browser bench (${os.cpus().length} cores, node ${process.version}, ${path.basename(LAYOUT.root)})`)
  say("floor: page ↔ bench echo extension ↔ echo host (Chromium's own transport)")
  say(row(`raw echo round trip (${SMALL} B, sequential)`, m.echo.trips))
  say(rateRow("raw echo pipelined, 1 KB each way", echoSmall))
  say(rateRow("raw echo pipelined, 512 KB each way", echoLarge))
  say(rateRow("raw host → page burst, 100 B (first to last)", bursts[0]!))
  say(rateRow("raw host → page burst, 100 KB (first to last)", bursts[1]!))
  say(msRow("raw host → page, 3.6 MB of € in 4 frames", euro.ms, "request to last frame"))
  say("tool call: pedelec-cli → Core → host → extension → SDK → handler → back (as the agent timed it)")
  say(row('node -e "" (spawn to exit)', m.spawn.node))
  say(row("pedelec-cli --version (spawn to exit)", m.spawn.cliVersion))
  say(row("tool-call round trip via the page", m.tool))
  say("chat deltas at the page (onChatDelta, first to last)")
  for (const run of m.deltaRuns) say(rateRow(run.name, run.rate))
  for (const run of m.deltaRuns) say(row(`  Core publish → page, ${run.name}`, run.latency))
  say(`3.6 MB chat message (remember + recall; the turn took ${m.big.ms.toFixed(0)} ms at the page)`)
  for (const a of m.big.arrivals) {
    const size = a.chars >= 10_000 ? `${((a.chars * 3) / MB).toFixed(1)} MB` : `${a.chars} chars`
    say(
      msRow(
        `${a.kind} #${a.seq} (${size})`,
        a.publishToPage,
        `Core publish → page; published ${a.sinceSend} ms after send`
      )
    )
  }
  say("  CPU during that turn, by process (/proc, 10 ms ticks):")
  for (const [role, ms] of m.big.cpu) say(`    ${role.padEnd(NAME - 2)} ${ms.toFixed(0).padStart(8)} ms`)
  say("ratios")
  say(ratio("tool-call round trip / raw echo round trip", m.tool, m.echo.trips))
  say(ratio("tool-call round trip / node spawn", m.tool, m.spawn.node))
  say(ratio("pedelec-cli --version / node spawn", m.spawn.cliVersion, m.spawn.node))
  for (const [index, run] of m.deltaRuns.entries()) {
    say(rateRatio(`${run.name} / raw host → page burst`, run.rate, bursts[index]!))
    say(rateRatio(`${run.name} / raw echo pipelined 1 KB`, run.rate, echoSmall))
  }
  const bigChat = m.big.arrivals.filter((a) => a.chars >= 1_000_000)
  for (const a of bigChat) {
    say(
      `  ${`3.6 MB ${a.kind}: Core → page / raw host → page`.padEnd(NAME)} ${(a.publishToPage / euro.ms).toFixed(1)}×`
    )
  }
}

const main = async () => {
  const missing = missingBuilds()
  if (missing.length > 0) {
    process.stderr.write(
      `apps/e2e bench: missing build output of ${missing.join(", ")}; run \`npx nx run-many -t build\` first`
    )
    process.exitCode = 1
    return
  }
  const scratch = await tempDir("bench")
  let chain: Chain | undefined
  // Ctrl-C still removes Chromium, Core and the temp dirs.
  const interrupted = () => {
    void (chain?.close() ?? Promise.resolve()).then(() => removeDir(scratch)).finally(() => process.exit(130))
  }
  process.once("SIGINT", interrupted)
  try {
    const echo = await writeEchoExtension(scratch)
    chain = await startChain({
      routes: await benchRoutes(),
      https: false,
      extraExtensionDirs: [echo.dir],
      prepareProfile: echo.registerIn
    })
    await waitForWorker(chain, echo.id)
    print(await measure(chain, echo.id))
  } catch (error) {
    if (chain !== undefined) {
      process.stderr.write(`--- native host log ---\n${await chain.hostLog()}\n`)
      process.stderr.write(`--- pedelec-core stderr ---\n${chain.core?.stderr() ?? "(no Core)"}\n`)
    }
    throw error
  } finally {
    process.off("SIGINT", interrupted)
    await chain?.close()
    await removeDir(scratch)
    // Chromium's exit reaps its children a moment later; nothing else of ours outlives the run.
    await sleep(100)
  }
}

await main()
