/**
 * Ipc — the `ipc` scenario: one Core IPC request (host role, authenticated, NDJSON, `session.list`) next to a raw
 * line echo over a Unix socket served by another Node process, the floor any local IPC stands on. It does not
 * spawn anything per request (Cli does) nor go through a browser (Chain does). Both sides are measured warm, as a
 * Core and a native host are after their first minutes: WARM_UP requests of each first (at 50, the echo's own cold
 * JIT made its floor 80 µs against 12 µs warm). The two then alternate in short ROUNDS, so a busy spell of this
 * shared machine lands on both alike.
 *
 * Where `taskset` exists (Linux), the bench, the echo server and Core share one CPU while this runs: a wake-up
 * across CPUs costs this 2-vCPU VM 40–80 µs, and whether a round trip paid it was the scheduler's choice, run by
 * run; the floor read 12, 19 or 80 µs and the ratio 1.7–9.8×. On one CPU both sides pay for their own work alone
 * (ratios 4.0–4.4× in five runs); the line says which way it ran.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import * as Effect from "effect/Effect"
import { type BenchCore, hostClient, withCore } from "./BenchCore.ts"
import { type Results, report } from "./Report.ts"
import { stats } from "./Stats.ts"

const ROUNDS = 300
const PER_ROUND = 10
const WARM_UP = 2000

/** A line-echo server in its own process, like Core is: the floor for one request over a Unix socket. */
const startEcho = async (socketPath: string): Promise<ChildProcess> => {
  const code = `require("node:net").createServer((s)=>s.pipe(s)).listen(${JSON.stringify(socketPath)},()=>console.log("up"))`
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] })
  await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()))
  return child
}

/** Sequential round trips of a line the size of a Core request, on one connection. */
const echoClient = async (socketPath: string) => {
  const socket = net.connect(socketPath)
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  const roundTrips = async (count: number) => {
    const samples: Array<number> = []
    for (let i = 0; i < count; i++) {
      const started = performance.now()
      await new Promise<void>((resolve) => {
        socket.once("data", () => resolve())
        socket.write(`{"_tag":"Request","id":"${i}","tag":"session.list","payload":{},"headers":[]}\n`)
      })
      samples.push(performance.now() - started)
    }
    return samples
  }
  return { roundTrips, close: () => socket.destroy() }
}

/** `session.list` on one authenticated host connection and the raw echo, warmed up, then alternating by round. */
const alternating = (core: BenchCore, echo: Awaited<ReturnType<typeof echoClient>>) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    const requests = (count: number) =>
      Effect.gen(function* () {
        const samples: Array<number> = []
        for (let i = 0; i < count; i++) {
          const started = performance.now()
          yield* client["session.list"]({})
          samples.push(performance.now() - started)
        }
        return samples
      })
    yield* requests(WARM_UP)
    yield* Effect.promise(() => echo.roundTrips(WARM_UP))
    const ours: Array<number> = []
    const raw: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) {
      raw.push(...(yield* Effect.promise(() => echo.roundTrips(PER_ROUND))))
      ours.push(...(yield* requests(PER_ROUND)))
    }
    return { echo: stats(raw), core: stats(ours) }
  }).pipe(Effect.scoped, Effect.runPromise)

/** The CPU mask of every thread of `pid`, set; the old mask back from the returned function. Undefined: no taskset. */
const pinTo = (mask: string, pid: number): (() => void) | undefined => {
  const taskset = (...args: Array<string>) => execFileSync("taskset", args, { encoding: "utf8" })
  try {
    const before = /mask:\s*([0-9a-f,]+)/i.exec(taskset("-p", String(pid)))?.[1]
    if (before === undefined) return undefined
    taskset("-a", "-p", mask, String(pid))
    return () => taskset("-a", "-p", before, String(pid))
  } catch {
    return undefined
  }
}

/** The bench, the echo server and Core on the first CPU, where taskset works: whether it did. */
const onOneCpu = (pids: ReadonlyArray<number | undefined>) => {
  const restores = pids.map((pid) => (pid === undefined ? undefined : pinTo("1", pid)))
  const pinned = restores.every((restore) => restore !== undefined)
  const restore = () => {
    for (const undo of restores) undo?.()
  }
  if (!pinned) restore()
  return { pinned, restore }
}

export const ipc = async (results: Results): Promise<void> => {
  const { echo, core, pinned } = await withCore("pedelec-bench-ipc-", async (running) => {
    const echoServer = await startEcho(path.join(running.home, "echo.sock"))
    const echo = await echoClient(path.join(running.home, "echo.sock"))
    const cpu = onOneCpu([process.pid, echoServer.pid, running.info.pid])
    try {
      return { ...(await alternating(running, echo)), pinned: cpu.pinned }
    } finally {
      cpu.restore()
      echo.close()
      echoServer.kill()
    }
  })
  const out = report(results, 44)
  const where = pinned ? "all on one CPU" : "unpinned: no taskset"
  out.say(`Pedelec bench: Core IPC (${os.cpus().length} cores, node ${process.version}, ${where})`)
  out.row("raw Unix-socket line echo", echo)
  out.row("Core IPC request (session.list, host role)", core)
  out.say("ratios")
  out.ratio("Core IPC request / raw socket echo", core, echo, ["core_ipc_p50_vs_raw_echo", "core_ipc_p99_vs_raw_echo"])
}
