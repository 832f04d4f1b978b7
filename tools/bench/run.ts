// `npm run bench`: Pedelec's hot paths next to the bare floor they stand on, measured in the same run on the same
// machine, so the ratios mean something where absolute times do not (a shared 2-core box).
//   1. pedelec-cli tool-call round trip (spawned by the agent, answered at once by the client) vs `node -e ""`.
//   2. One Core IPC request (host role, authenticated, NDJSON) vs a raw Unix-socket line echo in another process.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, realpath, rm } from "node:fs/promises"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import type { Origin } from "@pedelec/contracts/Ids"
import { connectHost, readRuntimeInfo } from "@pedelec/core/CoreClient"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { cliBinDir, startCore } from "./CoreProcess.ts"

const ORIGIN = "http://127.0.0.1:9" as Origin
const CALLS = 30
const REQUESTS = 300

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

const row = (name: string, s: Stats) =>
  `  ${name.padEnd(44)} median ${s.median.toFixed(2).padStart(8)} ms   p99 ${s.p99.toFixed(2).padStart(8)} ms   n=${s.n}`

const ratio = (name: string, ours: Stats, floor: Stats) =>
  `  ${name.padEnd(44)} ${(ours.median / floor.median).toFixed(2)}× median, ${(ours.p99 / floor.p99).toFixed(2)}× p99`

const timeSpawn = (command: string, args: ReadonlyArray<string>) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, [...args], { stdio: "ignore" })
    child.once("error", reject)
    child.once("exit", () => resolve(performance.now() - started))
  })

/** A line-echo server in its own process, like Core is: the floor for one request over a Unix socket. */
const startEcho = async (socketPath: string): Promise<ChildProcess> => {
  const code = `require("node:net").createServer((s)=>s.pipe(s)).listen(${JSON.stringify(socketPath)},()=>console.log("up"))`
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] })
  await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()))
  return child
}

const echoRoundTrips = async (socketPath: string, n: number) => {
  const socket = net.connect(socketPath)
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  const samples: Array<number> = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await new Promise<void>((resolve) => {
      socket.once("data", () => resolve())
      socket.write(`{"_tag":"Request","id":"${i}","tag":"session.list","payload":{},"headers":[]}\n`)
    })
    samples.push(performance.now() - started)
  }
  socket.destroy()
  return samples
}

const script = (lines: ReadonlyArray<string>) => ["```pedelec-script", ...lines, "```"].join("\n")

const coreCases = (home: string) =>
  Effect.gen(function* () {
    const info = yield* readRuntimeInfo(path.join(home, "run/core.json"))
    const client = yield* connectHost(info)

    const ipc: Array<number> = []
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now()
      yield* client["session.list"]({})
      ipc.push(performance.now() - started)
    }

    const ping = { name: "ping", description: "Answers at once.", argsSchema: { type: "object" as const } }
    const session = yield* client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", skills: { guidance: "", tools: [ping] } }
    })
    const messages: Array<string> = []
    yield* client["session.subscribe"]({
      origin: ORIGIN,
      sessionId: session.sessionId,
      afterSeq: 0,
      claimTools: true
    }).pipe(
      Stream.runForEach((event) => {
        if (event.type === "chat") messages.push(event.text)
        if (event.type !== "tool_call") return Effect.void
        const outcome = { ok: true as const, result: "pong" }
        return client["tool.submit_result"]({
          origin: ORIGIN,
          sessionId: session.sessionId,
          toolCallId: event.toolCallId,
          outcome
        })
      }),
      Effect.forkScoped
    )
    const calls = Array.from({ length: CALLS + 1 }, () => "call ping {}")
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId: session.sessionId, text: script(calls) })
    while (messages.filter((m) => m.startsWith("tool ping")).length < CALLS + 1) yield* Effect.sleep(50)
    // The first call pays for a cold start of the agent's first spawn; the rest are steady state.
    const roundTrips = messages
      .filter((m) => m.startsWith("tool ping"))
      .slice(1)
      .map((m) => Number(/\(([\d.]+) ms\)$/.exec(m)?.[1]))
    if (roundTrips.some((ms) => !Number.isFinite(ms)))
      throw new Error(`unexpected agent output: ${messages.join(" | ")}`)
    return { ipc, roundTrips }
  }).pipe(Effect.scoped)

const main = async () => {
  const home = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-bench-")))
  const echoPath = path.join(home, "echo.sock")
  const core = await startCore(home)
  const echo = await startEcho(echoPath)
  try {
    const nodeSpawn: Array<number> = []
    const cliVersion: Array<number> = []
    for (let i = 0; i < CALLS; i++) {
      nodeSpawn.push(await timeSpawn(process.execPath, ["-e", ""]))
      cliVersion.push(await timeSpawn(path.join(cliBinDir, "pedelec-cli"), ["--version"]))
    }
    const echoSamples = await echoRoundTrips(echoPath, REQUESTS)
    const { ipc, roundTrips } = await Effect.runPromise(coreCases(home))
    const floor = { node: stats(nodeSpawn), echo: stats(echoSamples) }
    const ours = { cli: stats(roundTrips), version: stats(cliVersion), ipc: stats(ipc) }
    console.log(`Pedelec bench (${os.cpus().length} cores, node ${process.version})`)
    console.log(row('node -e "" (spawn to exit)', floor.node))
    console.log(row("pedelec-cli --version (spawn to exit)", ours.version))
    console.log(row("pedelec-cli tool-call round trip", ours.cli))
    console.log(row("raw Unix-socket line echo", floor.echo))
    console.log(row("Core IPC request (session.list, host role)", ours.ipc))
    console.log("ratios")
    console.log(ratio("tool-call round trip / node spawn", ours.cli, floor.node))
    console.log(ratio("pedelec-cli --version / node spawn", ours.version, floor.node))
    console.log(ratio("Core IPC request / raw socket echo", ours.ipc, floor.echo))
  } finally {
    echo.kill()
    core.kill("SIGTERM")
    await new Promise((resolve) => core.once("exit", resolve))
    await rm(home, { recursive: true, force: true })
  }
}

await main()
