// pedelec-cli's agent side end to end: the built CLI, as a child process, against a FakeCore on a real Unix socket.
// Asserts the one stdout line and the exit code for every outcome SPEC §3 names, and what reached Core.
import { spawn } from "node:child_process"
import { chmodSync, chownSync, mkdirSync } from "node:fs"
import path from "node:path"
import { MAX_JSON_DEPTH } from "@pedelec/contracts/Wire"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  BIG_RESULT,
  CAPABILITY,
  ENDED_SESSION_ID,
  type FakeCore,
  makeHome,
  removeHomes,
  runtimeInfo,
  SESSION_ID,
  startFakeCore,
  writeRuntime
} from "./FakeCore.ts"
import { type CliOptions, oneLine, runCli } from "./runCli.ts"

let fake: FakeCore

const agentEnv = (home: string, extra: Record<string, string | undefined> = {}) => ({
  PEDELEC_HOME: home,
  PEDELEC_THREAD_ID: SESSION_ID,
  PEDELEC_SESSION_CAP: CAPABILITY,
  ...extra
})

const cli = (args: ReadonlyArray<string>, extra: Record<string, string | undefined> = {}, options: CliOptions = {}) =>
  runCli(args, { ...options, env: agentEnv(fake.home, extra) })

const errorOf = (line: Record<string, unknown>) => line.error as { code: string; message: string; details?: unknown }

beforeAll(async () => {
  fake = await startFakeCore()
})

afterAll(async () => {
  await fake.close()
  removeHomes()
})

describe("tool-call", () => {
  it("prints the page's result and exits 0, proving the capability and saying hello first", async () => {
    const before = fake.recorded.hellos.length
    const run = await cli(["tool-call", "echo", '{"text":"hi"}'])
    expect(oneLine(run)).toEqual({ ok: true, result: { echoed: { text: "hi" } } })
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(fake.recorded.hellos.slice(before)).toEqual([{ component: "cli", version: "0.1.0" }])
    expect(fake.recorded.calls.at(-1)).toEqual({ name: "echo", args: { text: "hi" } })
  })

  it("takes --thread-id over PEDELEC_THREAD_ID, before or after the command", async () => {
    const before = await cli(["--thread-id", SESSION_ID, "tool-call", "echo", "{}"], { PEDELEC_THREAD_ID: undefined })
    expect(oneLine(before)).toEqual({ ok: true, result: { echoed: {} } })
    const after = await cli(["tool-call", `--thread-id=${ENDED_SESSION_ID}`, "echo", "{}"])
    expect(errorOf(oneLine(after)).code).toBe("SESSION_ENDED")
    expect(after.code).toBe(3)
  })

  it("refuses arguments nested past the contracts' depth limit with INVALID_INPUT, the pointer and the limit", async () => {
    const calls = fake.recorded.calls.length
    const deep = `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`
    const run = await cli(["tool-call", "echo", deep])
    const error = errorOf(oneLine(run))
    expect(`${error.code} exit ${run.code}`).toBe("INVALID_INPUT exit 2")
    expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
    expect(error.message).toContain(`/a${"/0".repeat(MAX_JSON_DEPTH - 1)}`)
    expect(fake.recorded.calls.length).toBe(calls)
    // At the limit it is still a call.
    const fits = `{"a":${"[".repeat(MAX_JSON_DEPTH - 1)}${"]".repeat(MAX_JSON_DEPTH - 1)}}`
    expect(oneLine(await cli(["tool-call", "echo", fits])).ok).toBe(true)
  })

  it("treats omitted arguments as {}", async () => {
    const run = await cli(["tool-call", "echo"])
    expect(oneLine(run)).toEqual({ ok: true, result: { echoed: {} } })
  })

  it("prints a page error as ok:false and exits 1", async () => {
    const run = await cli(["tool-call", "fail", "{}"])
    expect(oneLine(run)).toEqual({
      ok: false,
      error: {
        code: "TOOL_HANDLER_ERROR",
        message: "The page's handler for fail failed: boom.",
        details: { appCode: "E_BOOM" }
      }
    })
    expect(run.code).toBe(1)
  })

  it("prints Core's TOOL_ARGS_INVALID with its path and exits 1", async () => {
    const run = await cli(["tool-call", "echo", '{"text":42}'])
    const error = errorOf(oneLine(run))
    expect(error.code).toBe("TOOL_ARGS_INVALID")
    expect(error.details).toEqual({ tool: "echo", path: "/text", reason: "expected a string" })
    expect(error.message).toContain("pedelec-cli tool-spec echo")
    expect(run.code).toBe(1)
  })

  it("passes the resultFile form through unchanged", async () => {
    const run = await cli(["tool-call", "big", "{}"])
    expect(oneLine(run)).toEqual(BIG_RESULT)
    expect(run.code).toBe(0)
  })

  it("answers TOOL_NOT_FOUND (exit 1) for a name that cannot be a tool, without calling Core", async () => {
    const calls = fake.recorded.calls.length
    const run = await cli(["tool-call", "no such tool", "{}"])
    expect(errorOf(oneLine(run)).code).toBe("TOOL_NOT_FOUND")
    expect(errorOf(oneLine(run)).message).toContain("tool-list")
    expect(run.code).toBe(1)
    expect(fake.recorded.calls.length).toBe(calls)
  })

  it("exits 2 on JSON arguments that do not parse or are not an object, and never reaches Core", async () => {
    const hellos = fake.recorded.hellos.length
    for (const args of ["{text:", "[1,2]", '"text"', "null"]) {
      const run = await cli(["tool-call", "echo", args])
      const error = errorOf(oneLine(run))
      expect(run.code).toBe(2)
      expect(error.code).toBe("INVALID_INPUT")
      expect(error.message).toMatch(/JSON/)
      expect(error.message).toContain("Usage: pedelec-cli")
    }
    expect(fake.recorded.hellos.length).toBe(hellos)
  })

  it("is cancelled when the agent stops it: Core sees the call interrupted", async () => {
    const run = await cli(
      ["tool-call", "slow", "{}"],
      {},
      {
        onSpawn: (child) => {
          const poll = setInterval(() => {
            if (fake.recorded.calls.some((c) => c.name === "slow")) {
              clearInterval(poll)
              child.kill("SIGTERM")
            }
          }, 20)
        }
      }
    )
    expect(errorOf(oneLine(run)).code).toBe("TOOL_CANCELLED")
    expect(run.code).toBe(130)
    await expect.poll(() => fake.recorded.interrupted).toContain("slow")
  })
})

describe("tool-list and tool-spec", () => {
  it("lists the tools without their schemas", async () => {
    const run = await cli(["tool-list"])
    const line = oneLine(run)
    expect(run.code).toBe(0)
    const tools = line.result as Array<Record<string, unknown>>
    expect(tools.map((t) => t.name)).toEqual(["echo", "fail", "big", "slow"])
    expect(tools[0]).toEqual({
      name: "echo",
      description: "Returns its arguments.",
      timeoutMs: 60_000,
      annotations: { readOnly: true }
    })
  })

  it("prints one tool's spec, and Core's TOOL_NOT_FOUND for an unknown one", async () => {
    const spec = await cli(["tool-spec", "echo"])
    expect((oneLine(spec).result as { argsSchema: unknown }).argsSchema).toEqual({
      type: "object",
      properties: { text: { type: "string" } },
      additionalProperties: false
    })
    const missing = await cli(["tool-spec", "nope"])
    expect(errorOf(oneLine(missing)).code).toBe("TOOL_NOT_FOUND")
    expect(missing.code).toBe(1)
  })
})

describe("usage errors (exit 2, one line, with the usage)", () => {
  it.each([
    [["frobnicate"], "Unknown command"],
    [["tool-list", "--bogus"], "Unknown flag --bogus"],
    [[], "No command given"],
    [["tool-spec"], "needs a tool name"],
    [["tool-list", "extra"], "Unexpected argument"],
    [["tool-call", "echo", "{}", "more"], "Unexpected argument"],
    [["--thread-id"], "--thread-id needs a value"]
  ])("%j", async (args, message) => {
    const run = await cli(args)
    const error = errorOf(oneLine(run))
    expect(run.code).toBe(2)
    expect(error.code).toBe("INVALID_INPUT")
    expect(error.message).toContain(message)
    expect(error.message).toContain("Usage: pedelec-cli [--thread-id <id>] tool-list")
  })

  it("needs a thread id", async () => {
    const run = await cli(["tool-list"], { PEDELEC_THREAD_ID: undefined })
    expect(run.code).toBe(2)
    expect(errorOf(oneLine(run)).message).toContain("PEDELEC_THREAD_ID")
  })

  it("rejects a thread id that is not one", async () => {
    const run = await cli(["tool-list"], { PEDELEC_THREAD_ID: "../../etc" })
    expect(run.code).toBe(2)
    expect(errorOf(oneLine(run)).code).toBe("INVALID_INPUT")
  })
})

describe("Pedelec cannot be used here (exit 3)", () => {
  it("no core.json: CORE_RUNTIME_UNAVAILABLE, says to start Pedelec", async () => {
    const home = makeHome()
    const run = await runCli(["tool-list"], { env: agentEnv(home) })
    const error = errorOf(oneLine(run))
    expect(run.code).toBe(3)
    expect(error.code).toBe("CORE_RUNTIME_UNAVAILABLE")
    expect(error.message).toContain("not running")
    expect(error.message).toContain("start the Pedelec desktop app")
  })

  it("a socket file nobody listens on (ECONNREFUSED), core.json of a dead process: says it is stale", async () => {
    const home = makeHome()
    const socketPath = path.join(home, "run", "core.sock")
    mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 })
    // A killed listener leaves its socket file behind, as a crashed Core does.
    await leaveDeadSocket(socketPath)
    writeRuntime(home, runtimeInfo(socketPath, { pid: 2 ** 22 + 1 }))
    const run = await runCli(["tool-list"], { env: agentEnv(home) })
    const error = errorOf(oneLine(run))
    expect(run.code).toBe(3)
    expect(error.code).toBe("CORE_RUNTIME_UNAVAILABLE")
    expect(error.details).toMatchObject({ errno: "ECONNREFUSED", socketPath })
    expect(error.message).toContain("stale")
  })

  it("core.json pointing at a missing socket (ENOENT)", async () => {
    const home = makeHome()
    writeRuntime(home, runtimeInfo(path.join(home, "run", "gone.sock")))
    const run = await runCli(["tool-call", "echo", "{}"], { env: agentEnv(home) })
    expect(run.code).toBe(3)
    expect(errorOf(oneLine(run)).details).toMatchObject({ errno: "ENOENT" })
  })

  it("a wrong capability: UNAUTHORIZED", async () => {
    const run = await cli(["tool-list"], { PEDELEC_SESSION_CAP: `${CAPABILITY}x` })
    expect(run.code).toBe(3)
    expect(errorOf(oneLine(run)).code).toBe("UNAUTHORIZED")
    expect(errorOf(oneLine(run)).message).toContain("tell the user")
  })

  it("no capability at all: UNAUTHORIZED without connecting", async () => {
    const hellos = fake.recorded.hellos.length
    const run = await cli(["tool-list"], { PEDELEC_SESSION_CAP: undefined })
    expect(run.code).toBe(3)
    expect(errorOf(oneLine(run)).code).toBe("UNAUTHORIZED")
    expect(errorOf(oneLine(run)).message).toContain("PEDELEC_SESSION_CAP is not set")
    expect(fake.recorded.hellos.length).toBe(hellos)
  })

  it("an ended session: SESSION_ENDED", async () => {
    const run = await cli(["tool-list"], { PEDELEC_THREAD_ID: ENDED_SESSION_ID })
    expect(run.code).toBe(3)
    expect(errorOf(oneLine(run)).code).toBe("SESSION_ENDED")
    expect(errorOf(oneLine(run)).message).toContain("tell the user")
  })

  it("a Core of another protocol: refused from core.json, from the welcome, and from Core's own refusal", async () => {
    const home = makeHome()
    writeRuntime(home, { ...fake.runtime, protocolVersion: 2 })
    const early = await runCli(["tool-list"], { env: agentEnv(home) })
    expect(early.code).toBe(3)
    expect(errorOf(oneLine(early))).toMatchObject({
      code: "PROTOCOL_VERSION_MISMATCH",
      details: { expected: 1, actual: 2 }
    })
    for (const options of [{ welcomeVersion: 2 }, { refuseHello: true }]) {
      const other = await startFakeCore(options)
      try {
        const run = await runCli(["tool-call", "echo", "{}"], { env: agentEnv(other.home) })
        expect(run.code).toBe(3)
        expect(errorOf(oneLine(run)).code).toBe("PROTOCOL_VERSION_MISMATCH")
        expect(other.recorded.calls).toEqual([])
      } finally {
        await other.close()
      }
    }
  })

  it("EPERM on connect (a sandbox that blocks local sockets): says the sandbox blocks them and how to allow it", async () => {
    // Simulated at Node's connect: a preload makes every Unix-socket connect fail as codex's seccomp filter does.
    const preload = path.join(import.meta.dirname, "fixtures", "connect-eperm.mjs")
    const run = await cli(["tool-list"], { NODE_OPTIONS: `--import=${preload}` })
    const error = errorOf(oneLine(run))
    expect(run.code).toBe(3)
    expect(error.code).toBe("CORE_RUNTIME_UNAVAILABLE")
    expect(error.message).toContain("sandbox blocks local sockets")
    expect(error.message).toContain("sandbox_workspace_write.network_access=true")
    expect(error.details).toMatchObject({ errno: "EPERM", syscall: "connect", socketPath: fake.socketPath })
  })

  it("EACCES on connect (socket directory mode 000, as a non-root user): the same advice", async () => {
    const home = makeHome()
    const locked = path.join(home, "locked")
    mkdirSync(locked, { mode: 0o000 })
    chmodSync(locked, 0o000)
    writeRuntime(home, runtimeInfo(path.join(locked, "core.sock")))
    // chmod does not stop root, so as root the CLI runs as `nobody`, who may read the home but not enter `locked`.
    const asRoot = process.getuid?.() === 0
    if (asRoot) {
      chmodSync(home, 0o755)
      chmodSync(path.join(home, "run"), 0o755)
      chownSync(path.join(home, "run", "core.json"), 65534, 65534)
    }
    const run = await runCli(["tool-list"], {
      env: agentEnv(home),
      ...(asRoot ? { uid: 65534, gid: 65534 } : {})
    })
    const error = errorOf(oneLine(run))
    expect(run.code).toBe(3)
    expect(error.details).toMatchObject({ errno: "EACCES" })
    expect(error.message).toContain("sandbox blocks local sockets")
    chmodSync(locked, 0o700)
  })
})

describe("help and version", () => {
  it("--help prints the commands on stdout and exits 0", async () => {
    const run = await runCli(["--help"])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("tool-call <name> '<json>'")
    expect(run.stdout).toContain("Exit codes")
    expect(run.stderr).toBe("")
  })

  it("--version prints the version, also through bin/pedelec-cli", async () => {
    for (const viaBin of [false, true]) {
      const run = await runCli(["--version"], { viaBin })
      expect(run).toMatchObject({ code: 0, stdout: "0.1.0\n", stderr: "" })
    }
  })

  it("bin/pedelec-cli runs agent commands too", async () => {
    const run = await runCli(["tool-call", "echo", '{"text":"bin"}'], { viaBin: true, env: agentEnv(fake.home) })
    expect(oneLine(run)).toEqual({ ok: true, result: { echoed: { text: "bin" } } })
  })
})

/** Listens on `socketPath` in a child that is then SIGKILLed, so the socket file stays with nobody behind it. */
const leaveDeadSocket = async (socketPath: string): Promise<void> => {
  const script = `require("node:net").createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, "SIGKILL"))`
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve())
  })
}
