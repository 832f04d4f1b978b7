// pedelec-deno against a real Core: the built apps/cli/bin/pedelec-deno, run the way an agent's shell runs it (the
// session's thread id and capability, read from the live agent's environment), gets the session's workspace from
// Core (`deno.prepare`), never from its cwd. A script reads and writes that workspace; every capability it must not
// have fails with a clear error; a static import from outside is refused before it runs; Core's timeout stops a
// script that runs forever and pedelec-deno's thread cap a Worker fork bomb; a re-run of an unchanged script reuses
// the graph cached in Core's home, a changed import is checked again; another session's or a forged capability, a
// missing runtime and a bad path are refused with one JSON line.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { cliBinDir, coreForFile, hostClient, ORIGIN, sessionWithAgent, tempDir } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const TIMEOUT_MS = 3_000
const core = coreForFile({ env: { PEDELEC_DENO_TIMEOUT_MS: String(TIMEOUT_MS) } })
const denoBin = path.join(cliBinDir, "pedelec-deno")

const tools: ToolsManifest = [
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } }
]

/** A session whose agent waits on a tool call, its capability, its workspace, and a way to put files in it. */
const agentSession = (client: HostClient, workspace?: string) =>
  Effect.gen(function* () {
    const { session, sessionId, capability } = yield* sessionWithAgent(client, {
      skills: { guidance: "", tools },
      ...(workspace === undefined ? {} : { workspace: { path: workspace } })
    })
    const file = (relative: string, text: string) =>
      Effect.promise(async () => {
        const target = path.join(session.workspace.path, relative)
        await mkdir(path.dirname(target), { recursive: true })
        await writeFile(target, text)
      })
    return { sessionId, capability, workspace: session.workspace.path, file }
  })

interface DenoRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built pedelec-deno as the agent's shell would: PATH, PEDELEC_HOME, the thread id and capability. */
const runDeno = (
  args: ReadonlyArray<string>,
  env: { readonly sessionId: string; readonly capability: string } & Record<string, string>,
  cwd?: string
) =>
  Effect.promise(
    () =>
      new Promise<DenoRun>((resolve, reject) => {
        const { sessionId, capability, ...extra } = env
        const child = spawn(denoBin, [...args], {
          env: {
            PATH: process.env.PATH ?? "",
            PEDELEC_HOME: core.home,
            PEDELEC_THREAD_ID: sessionId,
            PEDELEC_SESSION_CAP: capability,
            ...extra
          },
          ...(cwd === undefined ? {} : { cwd }),
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
        })
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk
        })
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, stdout, stderr }))
      })
  )

const failureOf = (run: DenoRun) =>
  JSON.parse(run.stdout.trimEnd().split("\n").at(-1)!) as {
    readonly ok: false
    readonly error: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
  }

const as = (session: { readonly sessionId: SessionId; readonly capability: string }) => ({
  sessionId: session.sessionId,
  capability: session.capability
})

describe("pedelec-deno through a real Core", () => {
  it.live("runs a script of the session's workspace (from Core, not the cwd): reads, writes, args, exit code", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      yield* a.file("data/in.txt", "3 4")
      yield* a.file(
        "sum.ts",
        [
          'const [x, y] = (await Deno.readTextFile("data/in.txt")).split(" ").map(Number)',
          'await Deno.mkdir("out", { recursive: true })',
          'await Deno.writeTextFile("out/sum.txt", String(x + y) + " " + Deno.args.join(","))',
          'console.log("sum", x + y)',
          "Deno.exit(5)"
        ].join("\n")
      )
      // A cwd holding another sum.ts: pedelec-deno must not care where it was started.
      const elsewhere = yield* Effect.promise(() => tempDir("pedelec-deno-cwd-"))
      yield* Effect.promise(() => writeFile(path.join(elsewhere, "sum.ts"), 'console.log("wrong one")'))
      const ran = yield* runDeno(["run", "sum.ts", "--", "p", "q"], as(a), elsewhere)
      assert.deepStrictEqual(ran, { code: 5, stdout: "sum 7\n", stderr: "" })
      assert.strictEqual(
        yield* Effect.promise(() => readFile(path.join(a.workspace, "out", "sum.txt"), "utf8")),
        "7 p,q"
      )
      yield* Effect.promise(() => rm(elsewhere, { recursive: true, force: true }))
    }).pipe(Effect.scoped)
  )

  it.live("an explicit workspace is the one Core names", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("pedelec-deno-explicit-"))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client, dir)
      assert.strictEqual(a.workspace, dir)
      yield* a.file("where.ts", 'console.log(Deno.cwd(), await Deno.readTextFile("marker.txt"))')
      yield* a.file("marker.txt", "explicit")
      const ran = yield* runDeno(["run", "where.ts"], as(a))
      assert.deepStrictEqual(ran, { code: 0, stdout: `${dir} explicit\n`, stderr: "" })
    }).pipe(Effect.scoped)
  )

  it.live("every capability a script must not have fails with a clear error", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      const outside = yield* Effect.promise(() => tempDir("pedelec-deno-outside-"))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(outside, { recursive: true, force: true })))
      yield* Effect.promise(() => writeFile(path.join(outside, "secret.txt"), "SECRET"))
      yield* Effect.promise(() => symlink(path.join(outside, "secret.txt"), path.join(a.workspace, "link.txt")))
      let reached = 0
      const server = createServer((_req, res) => {
        reached++
        res.end("reached")
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const port = (server.address() as AddressInfo).port
      const probes: Record<string, string> = {
        fetch: `await fetch("http://127.0.0.1:${port}/")`,
        env: 'Deno.env.get("HOME")',
        command: 'new Deno.Command("/bin/sh", { args: ["-c", "true"] }).outputSync()',
        ffi: 'Deno.dlopen("libc.so.6", {})',
        osRelease: "Deno.osRelease()",
        readEtc: 'Deno.readTextFileSync("/etc/hostname")',
        readLink: 'Deno.readTextFileSync("link.txt")',
        writeLink: 'Deno.writeTextFileSync("link.txt", "overwritten")',
        writeOutside: `Deno.writeTextFileSync(${JSON.stringify(path.join(outside, "new.txt"))}, "x")`
      }
      yield* a.file(
        "probe.ts",
        [
          "const report: Record<string, string> = {}",
          ...Object.entries(probes).map(
            ([name, code]) =>
              `try { ${code}; report[${JSON.stringify(name)}] = "ALLOWED" } catch (error) { report[${JSON.stringify(name)}] = String(error) }`
          ),
          "console.log(JSON.stringify(report))"
        ].join("\n")
      )
      const ran = yield* runDeno(["run", "probe.ts"], as(a))
      assert.strictEqual(ran.code, 0, ran.stderr)
      const report = JSON.parse(ran.stdout) as Record<string, string>
      assert.deepStrictEqual(Object.keys(report), Object.keys(probes))
      assert.match(report.fetch!, /^NotCapable: Requires net access to "127\.0\.0\.1:\d+"/)
      assert.match(report.env!, /^NotCapable: Requires env access to "HOME"/)
      assert.match(report.command!, /^NotCapable: Requires run access to "\/bin\/sh"/)
      assert.match(report.ffi!, /^NotCapable: Requires ffi access/)
      assert.match(report.osRelease!, /^NotCapable: Requires sys access to "osRelease"/)
      assert.match(report.readEtc!, /^NotCapable: Requires read access to "\/etc\/hostname"/)
      // Denied by name behind Deno's flags alone; behind bubblewrap the target does not exist.
      assert.match(report.readLink!, /^(NotCapable: Requires read access|NotFound)/)
      assert.match(report.writeLink!, /^(NotCapable: Requires write access|NotFound)/)
      assert.match(report.writeOutside!, /^NotCapable: Requires write access to ".*new\.txt"/)
      assert.strictEqual(reached, 0)
      assert.strictEqual(yield* Effect.promise(() => readFile(path.join(outside, "secret.txt"), "utf8")), "SECRET")
      assert.isFalse(existsSync(path.join(outside, "new.txt")))
    }).pipe(Effect.scoped)
  )

  it.live("a static import of /etc/hostname is refused before the script runs", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      yield* a.file("lib/host.ts", 'import host from "/etc/hostname" with { type: "text" }\nexport default host\n')
      yield* a.file("main.ts", 'import host from "./lib/host.ts"\nconsole.log("LEAKED", host)\n')
      const ran = yield* runDeno(["run", "main.ts"], as(a))
      assert.strictEqual(ran.code, 1)
      assert.notInclude(ran.stdout, "LEAKED")
      const { error } = failureOf(ran)
      assert.strictEqual(error.code, "SCRIPT_IMPORT_DENIED")
      assert.strictEqual(error.details?.specifier, "file:///etc/hostname")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a second run of an unchanged script reuses the graph checked in Core's home; a changed import is checked",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const a = yield* agentSession(client)
        yield* a.file("lib/value.ts", 'export const value = "first"\n')
        yield* a.file("cached.ts", 'import { value } from "./lib/value.ts"\nconsole.log(value)\n')
        const graphs = path.join(core.home, "cache", "deno-graphs")
        const entriesNow = () =>
          Effect.promise(async () => {
            const names = (await readdir(graphs)).filter((name) => name.endsWith(".json"))
            return new Map(
              await Promise.all(names.map(async (name) => [name, (await stat(path.join(graphs, name))).ino] as const))
            )
          })
        const before = yield* entriesNow()
        assert.deepStrictEqual(yield* runDeno(["run", "cached.ts"], as(a)), { code: 0, stdout: "first\n", stderr: "" })
        const checked = yield* entriesNow()
        const added = [...checked.keys()].filter((name) => !before.has(name))
        assert.strictEqual(added.length, 1)
        assert.strictEqual((yield* Effect.promise(() => stat(graphs))).mode & 0o777, 0o700)
        // A checked run writes its entry anew (write aside, rename: a new inode); a cached one only reads it.
        assert.deepStrictEqual(yield* runDeno(["run", "cached.ts"], as(a)), { code: 0, stdout: "first\n", stderr: "" })
        assert.strictEqual((yield* entriesNow()).get(added[0]!), checked.get(added[0]!))
        yield* a.file(
          "lib/value.ts",
          'import host from "/etc/hostname" with { type: "text" }\nexport const value = host\n'
        )
        const refused = yield* runDeno(["run", "cached.ts"], as(a))
        assert.strictEqual(refused.code, 1)
        assert.strictEqual(failureOf(refused).error.code, "SCRIPT_IMPORT_DENIED")
        assert.strictEqual(failureOf(refused).error.details?.specifier, "file:///etc/hostname")
      }).pipe(Effect.scoped)
  )

  it.live(
    "a Worker fork bomb is stopped at pedelec-deno's thread cap: SCRIPT_RESOURCE_LIMIT, within Core's timeout",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const a = yield* agentSession(client)
        // Four per generation: past the cap in three, so a loaded machine's slow Worker starts still get there
        // long before the timeout (two per generation ran into SCRIPT_TIMEOUT on a busy CI box).
        const spawnFour =
          'const spawn = () => new Worker(new URL("./bomb-worker.ts", import.meta.url), { type: "module" })\nfor (let i = 0; i < 4; i++) spawn()\n'
        yield* a.file("bomb-worker.ts", spawnFour)
        yield* a.file("bomb.ts", 'import "./bomb-worker.ts"\nawait new Promise(() => {})\n')
        const ran = yield* runDeno(["run", "bomb.ts"], as(a))
        // Without the cap it ran to the timeout (SCRIPT_TIMEOUT), at hundreds of threads.
        const { error } = failureOf(ran)
        assert.strictEqual(error.code, "SCRIPT_RESOURCE_LIMIT")
        assert.strictEqual((error.details as { limit?: string } | undefined)?.limit, "threads")
      }).pipe(Effect.scoped)
  )

  it.live("a script that runs forever is stopped at Core's timeout: SCRIPT_TIMEOUT, exit 124", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      yield* a.file("forever.ts", 'console.log("started")\nwhile (true) {}\n')
      const started = Date.now()
      const ran = yield* runDeno(["run", "forever.ts"], as(a))
      const took = Date.now() - started
      assert.isAtLeast(took, TIMEOUT_MS)
      assert.isBelow(took, TIMEOUT_MS + 5_000)
      assert.strictEqual(ran.code, 124)
      assert.strictEqual(ran.stdout.split("\n")[0], "started")
      const { error } = failureOf(ran)
      assert.strictEqual(error.code, "SCRIPT_TIMEOUT")
      assert.deepStrictEqual(error.details, { timeoutMs: TIMEOUT_MS })
    }).pipe(Effect.scoped)
  )

  it.live("another session's capability, a forged one or an ended session's is UNAUTHORIZED (exit 3)", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      yield* a.file("hello.ts", 'console.log("hello")')
      const b = yield* client["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })
      for (const env of [
        { sessionId: b.sessionId, capability: a.capability },
        { sessionId: a.sessionId, capability: "A".repeat(43) }
      ]) {
        const ran = yield* runDeno(["run", "hello.ts"], env)
        assert.strictEqual(ran.code, 3, ran.stdout)
        assert.strictEqual(failureOf(ran).error.code, "UNAUTHORIZED")
      }
      yield* client["session.end"]({ origin: ORIGIN, sessionId: b.sessionId })
      yield* client["session.end"]({ origin: ORIGIN, sessionId: a.sessionId })
      const ended = yield* runDeno(["run", "hello.ts"], as(a))
      assert.strictEqual(ended.code, 3)
      assert.strictEqual(failureOf(ended).error.code, "UNAUTHORIZED")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a missing Deno runtime is DENO_UNAVAILABLE (exit 3); a bad script path is SCRIPT_PATH_INVALID (exit 1)",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const a = yield* agentSession(client)
        yield* a.file("hello.ts", 'console.log("hello")')
        const missing = yield* runDeno(["run", "hello.ts"], { ...as(a), PEDELEC_DENO_BIN: "/nonexistent/deno" })
        assert.strictEqual(missing.code, 3)
        const unavailable = failureOf(missing).error
        assert.strictEqual(unavailable.code, "DENO_UNAVAILABLE")
        assert.include(unavailable.message, "do not run the script with node, bun or another deno")
        for (const bad of ["nope.ts", "../hello.ts", "/etc/hostname"]) {
          const ran = yield* runDeno(["run", bad], as(a))
          assert.strictEqual(ran.code, 1, bad)
          assert.strictEqual(failureOf(ran).error.code, "SCRIPT_PATH_INVALID")
        }
      }).pipe(Effect.scoped)
  )
})
