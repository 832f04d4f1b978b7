// `npm run bench` (after the build): pedelec-deno's start-up next to the bare `deno run` it wraps, on the same
// hello-world script, round robin on the same machine. pedelec-deno's time is the whole path an agent pays for:
// node, core.json, `core.hello` and `deno.prepare` against a real Core (proving a live session's capability), the
// graph check, the private copy and its re-check, then the run (behind bubblewrap when it works here). Also shown:
// the parts it is made of (node starting the helper, one `deno info`), so the ratio can be read.
import { spawn } from "node:child_process"
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { Origin } from "@pedelec/contracts/Ids"
import { connectHost, readRuntimeInfo } from "@pedelec/core/CoreClient"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { cliBinDir, repoRoot, startCore } from "./CoreProcess.ts"

const denoHelper = path.join(cliBinDir, "pedelec-deno")
const ORIGIN = "http://127.0.0.1:9" as Origin
const RUNS = Number(process.argv[2] ?? 20)

const denoBinary = () => {
  const fromCli = createRequire(path.join(repoRoot, "apps/cli/package.json"))
  const binaryPackage = createRequire(fromCli.resolve("deno/package.json")).resolve(
    `@deno/linux-${process.arch}-glibc/package.json`
  )
  return path.join(path.dirname(binaryPackage), "deno")
}

const median = (samples: ReadonlyArray<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface Case {
  readonly label: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd: string
  /** What stdout must be, so a failing case cannot pass for a fast one. */
  readonly expect?: string
}

const once = (c: Case) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(c.command, [...c.args], { env: c.env, cwd: c.cwd, stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
    })
    child.once("error", reject)
    child.once("close", (code) => {
      const elapsed = performance.now() - started
      if (code !== 0 || (c.expect !== undefined && out !== c.expect))
        reject(new Error(`${c.label}: exit ${code}, stdout ${JSON.stringify(out)}`))
      else resolve(elapsed)
    })
  })

/** The capability Core gave a session's agent, from the agent's environment (as any same-user process can). */
const capabilityOf = async (sessionId: string): Promise<string> => {
  for (let waited = 0; waited < 15_000; waited += 100) {
    for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
      const environ = (await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "")).split("\0")
      if (!environ.includes(`PEDELEC_THREAD_ID=${sessionId}`)) continue
      const cap = environ.find((entry) => entry.startsWith("PEDELEC_SESSION_CAP="))
      if (cap !== undefined) return cap.slice("PEDELEC_SESSION_CAP=".length)
    }
    await sleep(100)
  }
  throw new Error("the session's agent did not show up")
}

/** A scripted session whose agent waits on a page tool (so its capability stays live), in the caller's scope. */
const session = (home: string) =>
  Effect.gen(function* () {
    const info = yield* readRuntimeInfo(path.join(home, "run/core.json"))
    const client = yield* connectHost(info)
    const wait = { name: "wait", description: "Never answers.", argsSchema: { type: "object" as const } }
    const created = yield* client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", autoEndOnDisconnect: false, skills: { guidance: "", tools: [wait] } }
    })
    yield* client["session.subscribe"]({
      origin: ORIGIN,
      sessionId: created.sessionId,
      afterSeq: 0,
      claimTools: true
    }).pipe(Stream.runDrain, Effect.forkScoped)
    const text = ["```pedelec-script", "call wait {}", "```"].join("\n")
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId: created.sessionId, text })
    const capability = yield* Effect.promise(() => capabilityOf(created.sessionId))
    return { sessionId: created.sessionId, workspace: created.workspace.path, capability }
  })

const bwrapWorks = () =>
  new Promise<boolean>((resolve) => {
    const child = spawn("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "true"], { stdio: "ignore" })
    child.once("error", () => resolve(false))
    child.once("close", (code) => resolve(code === 0))
  })

const main = async () => {
  const home = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-deno-bench-")))
  const core = await startCore(home)
  try {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { sessionId, workspace, capability } = yield* session(home)
          const script = path.join(workspace, "hello.ts")
          yield* Effect.promise(() => writeFile(script, 'console.log("hello")\n'))
          const deno = denoBinary()
          const denoDir = path.join(home, "deno-dir")
          const bare = { DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }
          const agentEnv = {
            PATH: process.env.PATH ?? "",
            PEDELEC_HOME: home,
            PEDELEC_THREAD_ID: sessionId,
            PEDELEC_SESSION_CAP: capability
          }
          const cases: ReadonlyArray<Case> = [
            {
              label: "deno run hello.ts (bare)",
              command: deno,
              args: ["run", "hello.ts"],
              env: bare,
              cwd: workspace,
              expect: "hello\n"
            },
            {
              label: "deno info --json hello.ts (one graph check)",
              command: deno,
              args: ["info", "--json", "--no-config", "--no-lock", "--no-remote", "--no-npm", script],
              env: bare,
              cwd: workspace
            },
            {
              label: "pedelec-deno --version (node start)",
              command: denoHelper,
              args: ["--version"],
              env: agentEnv,
              cwd: workspace
            },
            {
              label: "pedelec-deno run hello.ts (full path)",
              command: denoHelper,
              args: ["run", "hello.ts"],
              env: agentEnv,
              cwd: os.tmpdir(),
              expect: "hello\n"
            }
          ]
          const times = cases.map((): Array<number> => [])
          for (const c of cases) yield* Effect.promise(() => once(c)) // warm the file cache
          for (let i = 0; i < RUNS; i++)
            for (const [index, c] of cases.entries()) times[index]!.push(yield* Effect.promise(() => once(c)))
          const medians = times.map(median)
          const walled = yield* Effect.promise(bwrapWorks)
          console.log(
            `pedelec-deno start-up (${os.cpus().length} cores, node ${process.version}, ${RUNS} runs each, medians; bubblewrap ${walled ? "in use" : "not available: first wall only"})`
          )
          for (const [index, c] of cases.entries())
            console.log(`  ${c.label.padEnd(46)} ${medians[index]!.toFixed(1).padStart(8)} ms`)
          console.log(
            `  ${"ratio pedelec-deno run / bare deno run".padEnd(46)} ${(medians[3]! / medians[0]!).toFixed(2)}×`
          )
        })
      )
    )
  } finally {
    core.kill("SIGTERM")
    await new Promise((resolve) => core.once("exit", resolve))
    await rm(home, { recursive: true, force: true })
  }
}

await main()
