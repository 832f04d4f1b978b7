/**
 * Deno — the `deno` scenario: pedelec-deno's start-up next to the bare `deno run` it wraps, on the same hello-world
 * script, round robin. pedelec-deno's time is the whole path an agent pays for: node, core.json, `core.hello` and
 * `deno.prepare` against a real Core (proving a live session's capability), the graph check, the private copy and
 * its re-check, then the run (behind bubblewrap when it works here); and the same script again with its checked
 * graph cached (the copy matched by hashes, no `deno info`), the case an agent re-running a script pays. Also shown: the parts it is made of (node
 * starting the helper, one `deno info`), so the ratio can be read. It does not test pedelec-deno's denials.
 */
import { spawn } from "node:child_process"
import { readdir, readFile, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type BenchCore, cliBinDir, hostClient, ORIGIN, repoRoot, withCore } from "./BenchCore.ts"
import { type Results, report } from "./Report.ts"
import { type Command, roundRobin } from "./Stats.ts"

const RUNS = 20
const denoHelper = path.join(cliBinDir, "pedelec-deno")

/** The pinned Deno that pedelec-deno runs, from apps/cli's own `deno` package. */
const denoBinary = () => {
  const fromCli = createRequire(path.join(repoRoot, "apps/cli/package.json"))
  const binaryPackage = createRequire(fromCli.resolve("deno/package.json")).resolve(
    `@deno/linux-${process.arch}-glibc/package.json`
  )
  return path.join(path.dirname(binaryPackage), "deno")
}

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
const waitingSession = (core: BenchCore) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    const wait = { name: "wait", description: "Never answers.", argsSchema: { type: "object" as const } }
    const created = yield* client["session.create"]({
      origin: ORIGIN,
      input: { provider: "scripted", autoEndOnDisconnect: false, skills: { guidance: "", tools: [wait] } }
    })
    const { sessionId } = created
    yield* client["session.subscribe"]({ origin: ORIGIN, sessionId, afterSeq: 0, claimTools: true }).pipe(
      Stream.runDrain,
      Effect.forkScoped
    )
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script("call wait {}") })
    const capability = yield* Effect.promise(() => capabilityOf(sessionId))
    return { sessionId, workspace: created.workspace.path, capability }
  })

const bwrapWorks = () =>
  new Promise<boolean>((resolve) => {
    const child = spawn("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "true"], { stdio: "ignore" })
    child.once("error", () => resolve(false))
    child.once("close", (code) => resolve(code === 0))
  })

/** The cases, bare first: what each must print is checked, so a failing case cannot pass for a fast one. */
const cases = (core: BenchCore, session: Effect.Success<ReturnType<typeof waitingSession>>) => {
  const deno = denoBinary()
  const bare = { DENO_DIR: path.join(core.home, "deno-dir"), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }
  const agentEnv = {
    PATH: process.env.PATH ?? "",
    PEDELEC_HOME: core.home,
    PEDELEC_THREAD_ID: session.sessionId,
    PEDELEC_SESSION_CAP: session.capability
  }
  const hello = { exit: 0, stdout: "hello\n" }
  const graphCheck = ["info", "--json", "--no-config", "--no-lock", "--no-remote", "--no-npm"]
  const cwd = session.workspace
  const all: ReadonlyArray<readonly [string, Command]> = [
    ["deno run hello.ts (bare)", { command: deno, args: ["run", "hello.ts"], env: bare, cwd, check: hello }],
    [
      "deno info --json hello.ts (one graph check)",
      { command: deno, args: [...graphCheck, path.join(cwd, "hello.ts")], env: bare, cwd, check: { exit: 0 } }
    ],
    [
      "pedelec-deno --version (node start)",
      { command: denoHelper, args: ["--version"], env: agentEnv, cwd, check: { exit: 0 } }
    ],
    [
      "pedelec-deno run hello.ts (full path)",
      // sh's builtins only (about 1 ms): every run finds its cached graph truncated, so it checks in full.
      {
        command: "/bin/sh",
        args: [
          "-c",
          `for f in "$PEDELEC_HOME"/cache/deno-graphs/*.json; do [ -f "$f" ] && : > "$f"; done; exec "$0" run hello.ts`,
          denoHelper
        ],
        env: agentEnv,
        cwd: os.tmpdir(),
        check: hello
      }
    ],
    [
      "pedelec-deno run hello.ts (cached graph)",
      { command: denoHelper, args: ["run", "hello.ts"], env: agentEnv, cwd: os.tmpdir(), check: hello }
    ]
  ]
  return all
}

const measure = (core: BenchCore) =>
  Effect.gen(function* () {
    const session = yield* waitingSession(core)
    yield* Effect.promise(() => writeFile(path.join(session.workspace, "hello.ts"), 'console.log("hello")\n'))
    const timed = cases(core, session)
    const medians = (yield* Effect.promise(() =>
      roundRobin(
        timed.map(([, c]) => c),
        RUNS
      )
    )).map((s) => s.median)
    return timed.map(([label], index) => [label, medians[index]!] as const)
  }).pipe(Effect.scoped, Effect.runPromise)

export const deno = async (results: Results): Promise<void> => {
  const medians = await withCore("pedelec-bench-deno-", measure)
  const walled = await bwrapWorks()
  const out = report(results, 46)
  out.say(
    `pedelec-deno start-up (${os.cpus().length} cores, node ${process.version}, ${RUNS} runs each, medians; bubblewrap ${walled ? "in use" : "not available: first wall only"})`
  )
  for (const [label, ms] of medians) out.say(`  ${label.padEnd(46)} ${ms.toFixed(1).padStart(8)} ms`)
  out.factors("ratio pedelec-deno run / bare deno run (full, cached)", [
    { name: "deno_run_vs_bare", value: medians[3]![1] / medians[0]![1] },
    { name: "deno_cached_vs_bare", value: medians[4]![1] / medians[0]![1] }
  ])
}
