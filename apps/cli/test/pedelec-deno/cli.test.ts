// The built pedelec-deno (bin/pedelec-deno) as an agent shell runs it, against a FakeCore on a real socket: the
// capability is proven and Core's policy (workspace, timeout, cap) is what applies; its own failures are one JSON
// line with their exit code (usage 2, unavailable 3, refused 1, timeout 124), the script's output and exit code are
// passed through, SIGTERM stops the script, and the private copy never outlives the run.
import type { ChildProcess } from "node:child_process"
import { mkdtemp, readdir, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CAPABILITY, type FakeCore, makeHome, removeHomes, SESSION_ID, startFakeCore } from "../FakeCore.ts"
import { type CliRun, ROOT, runCli } from "../runCli.ts"
import { type Place, place, processesNaming } from "./scripts.ts"

const BIN = path.join(ROOT, "bin", "pedelec-deno")

let at: Place
let fake: FakeCore
/** TMPDIR of every run: where pedelec-deno makes its private copy, so a test can see that none is left. */
let tmp: string

const run = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  onSpawn?: (child: ChildProcess) => void
): Promise<CliRun> =>
  runCli(args, {
    command: BIN,
    env: {
      TMPDIR: tmp,
      PEDELEC_HOME: fake.home,
      PEDELEC_THREAD_ID: SESSION_ID,
      PEDELEC_SESSION_CAP: CAPABILITY,
      ...env
    },
    ...(onSpawn === undefined ? {} : { onSpawn })
  })

/** The last stdout line, pedelec-deno's own failure. */
const failureLine = (result: CliRun) => {
  const lines = result.stdout.trimEnd().split("\n")
  return JSON.parse(lines.at(-1)!) as { ok: false; error: { code: string; message: string; details?: unknown } }
}

const leftovers = async () => (await readdir(tmp)).filter((name) => name.startsWith("pedelec-deno-"))

beforeAll(async () => {
  at = await place()
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-deno-cli-tmp-")))
  fake = await startFakeCore({ deno: { workspace: at.workspace, timeoutMs: 2_000, outputBytes: 4_096 } })
  await at.file("hello.ts", 'console.log("hello", Deno.args.join(" "))\nawait Deno.writeTextFile("hi.txt", "hi")\n')
  await at.file("fails.ts", 'console.log("partial")\nthrow new Error("boom")\n')
  await at.file("forever.ts", 'await Deno.stdout.write(new TextEncoder().encode("started"))\nwhile (true) {}\n')
  await at.file("import-out.ts", 'import x from "/etc/hostname" with { type: "text" }\nconsole.log(x)\n')
})

afterAll(async () => {
  await fake.close()
  removeHomes()
  await at.remove()
  await rm(tmp, { recursive: true, force: true })
})

describe("pedelec-deno", () => {
  it("runs a workspace script with its arguments after Core's say-so, as component deno", async () => {
    const before = fake.recorded.hellos.length
    const result = await run(["run", "hello.ts", "--", "a", "b"])
    expect(result).toMatchObject({ code: 0, stdout: "hello a b\n", stderr: "" })
    expect(fake.recorded.hellos.slice(before)).toEqual([{ component: "deno", version: "0.1.0" }])
    expect(await leftovers()).toEqual([])
  })

  it("passes the script's failure on: its stderr and exit code, no line of its own", async () => {
    const result = await run(["--thread-id", SESSION_ID, "run", "fails.ts"])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("partial\n")
    expect(result.stderr).toContain("Uncaught (in promise) Error: boom")
  })

  it("stops a script at Core's timeout: SCRIPT_TIMEOUT on its own line after the output, exit 124", async () => {
    const started = Date.now()
    const result = await run(["run", "forever.ts"])
    expect(Date.now() - started).toBeLessThan(8_000)
    expect(result.code).toBe(124)
    expect(result.stdout.split("\n")[0]).toBe("started")
    expect(failureLine(result).error).toMatchObject({ code: "SCRIPT_TIMEOUT", details: { timeoutMs: 2_000 } })
    expect(await leftovers()).toEqual([])
  })

  it("stops the script on SIGTERM (exit 130) and removes its private copy", async () => {
    let child: ChildProcess | undefined
    const running = run(["run", "forever.ts"], {}, (spawned) => {
      child = spawned
      spawned.stdout?.once("data", () => spawned.kill("SIGTERM"))
    })
    const result = await running
    expect(child).toBeDefined()
    expect(result.code).toBe(130)
    expect(await leftovers()).toEqual([])
    expect(await processesNaming(tmp)).toEqual([])
  })

  it.each([
    [["run", "missing.ts"], "SCRIPT_PATH_INVALID", 1],
    [["run", "../escape.ts"], "SCRIPT_PATH_INVALID", 1],
    [["run", "import-out.ts"], "SCRIPT_IMPORT_DENIED", 1],
    [["run", "--allow-all", "hello.ts"], "INVALID_INPUT", 2],
    [["exec", "hello.ts"], "INVALID_INPUT", 2]
  ])("%j prints %s as one JSON line and exits %i", async (args, code, exit) => {
    const result = await run(args)
    expect(result.code).toBe(exit)
    expect(result.stdout.split("\n")).toHaveLength(2)
    expect(failureLine(result)).toMatchObject({ ok: false, error: { code } })
  })

  it("without its Deno runtime prints DENO_UNAVAILABLE, telling the agent not to fall back", async () => {
    const result = await run(["run", "hello.ts"], { PEDELEC_DENO_BIN: path.join(tmp, "no-such-deno") })
    expect(result.code).toBe(3)
    const { error } = failureLine(result)
    expect(error.code).toBe("DENO_UNAVAILABLE")
    expect(error.message).toContain("do not run the script with node, bun or another deno")
  })

  it.each([
    ["no capability", { PEDELEC_SESSION_CAP: undefined }, "UNAUTHORIZED"],
    ["a capability Core does not know", { PEDELEC_SESSION_CAP: "B".repeat(43) }, "UNAUTHORIZED"],
    ["a malformed thread id", { PEDELEC_THREAD_ID: "not a thread" }, "INVALID_INPUT"]
  ])("with %s it is refused before anything runs", async (_what, env, code) => {
    const result = await run(["run", "hello.ts"], env)
    expect(failureLine(result).error.code).toBe(code)
    expect(result.code).toBe(code === "INVALID_INPUT" ? 2 : 3)
  })

  it("without a running Pedelec it is CORE_RUNTIME_UNAVAILABLE, exit 3", async () => {
    const result = await run(["run", "hello.ts"], { PEDELEC_HOME: makeHome() })
    expect(result.code).toBe(3)
    expect(failureLine(result).error.code).toBe("CORE_RUNTIME_UNAVAILABLE")
  })

  it("answers --help and --version without Core", async () => {
    const help = await run(["--help"], { PEDELEC_HOME: undefined })
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("never run the script with node, bun or")
    expect(await run(["--version"])).toMatchObject({ code: 0, stdout: "0.1.0\n", stderr: "" })
  })

  it("starts node without NODE_EXTRA_CA_CERTS (Node 20 would read the file first, and warn when it is missing)", async () => {
    const result = await run(["--version"], { NODE_EXTRA_CA_CERTS: path.join(tmp, "no-such-ca.pem") })
    expect(result).toMatchObject({ code: 0, stdout: "0.1.0\n", stderr: "" })
  })
})
