/**
 * AgentProcess with real child processes: stdin in, strict lines out, the stderr tail, a clean environment, start
 * failures, the 16 MiB line limit, a stdout kept open by a descendant, and the release sequence killing a setsid
 * grandchild and a CLI that ignores polite signals.
 */
import { existsSync, readFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AGENT_TAG_PATTERN, taggedStrays } from "../src/AgentProcess/Tag.ts"
import { AgentProcess, type AgentSpawnOptions } from "../src/AgentProcess.ts"
import type { OutputLine } from "../src/OutputLines.ts"
import * as ProcessTree from "../src/ProcessTree.ts"
import { pidExists, tempDir, waitFor, waitGone } from "./support.ts"

const node = (script: string, overrides: Partial<AgentSpawnOptions> = {}): AgentSpawnOptions => ({
  provider: "scripted",
  command: process.execPath,
  args: ["-e", script],
  cwd: process.cwd(),
  env: {},
  inheritEnv: true,
  stdin: "",
  ...overrides
})

const texts = (lines: ReadonlyArray<OutputLine>) =>
  lines.map((line) => (line._tag === "Text" ? line.text : "<invalid>"))

const spawn = (options: AgentSpawnOptions) =>
  Effect.gen(function* () {
    const agent = yield* AgentProcess
    return yield* agent.spawn(options)
  })

const run = <A, E>(effect: Effect.Effect<A, E, AgentProcess | Scope.Scope>) =>
  effect.pipe(Effect.scoped, Effect.provide(AgentProcess.layer))

/**
 * Spawns in a scope of its own, so a test can close it (the release sequence) at a moment of its choosing; the
 * test's scope closes it too, so a failing assertion leaves no process behind.
 */
const spawnInScope = (options: AgentSpawnOptions) =>
  Effect.gen(function* () {
    const scope = yield* Effect.acquireRelease(Scope.make(), (scope) => Scope.close(scope, Exit.void))
    const handle = yield* spawn(options).pipe(Scope.provide(scope))
    return { handle, close: Scope.close(scope, Exit.void) }
  })

describe("AgentProcess", () => {
  it.live("writes the prompt to stdin, closes it, and streams stdout lines", () =>
    run(
      Effect.gen(function* () {
        const handle = yield* spawn(
          node(
            "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{for(const l of s.split('\\n'))console.log('got:'+l)})",
            {
              stdin: "first\nsecond größe"
            }
          )
        )
        const lines = yield* Stream.runCollect(handle.lines)
        assert.deepStrictEqual(texts(lines), ["got:first", "got:second größe"])
        assert.deepStrictEqual(yield* handle.exit, { code: 0, description: "exit code 0" })
      })
    )
  )

  it.live("gives the CLI only the given environment unless told to inherit", () =>
    run(
      Effect.gen(function* () {
        const script = "console.log(JSON.stringify({foo:process.env.FOO,home:process.env.HOME??null}))"
        const clean = yield* spawn(node(script, { env: { FOO: "bar" }, inheritEnv: false }))
        assert.deepStrictEqual(texts(yield* Stream.runCollect(clean.lines)), ['{"foo":"bar","home":null}'])
        const inherited = yield* spawn(node(script, { env: { FOO: "baz" }, inheritEnv: true }))
        const [line] = texts(yield* Stream.runCollect(inherited.lines))
        assert.strictEqual(JSON.parse(line!).foo, "baz")
        assert.strictEqual(JSON.parse(line!).home, process.env.HOME ?? null)
      })
    )
  )

  it.live("keeps the last 8 KiB of stderr and reports how the CLI exited", () =>
    run(
      Effect.gen(function* () {
        const handle = yield* spawn(node("process.stderr.write('x'.repeat(20000)+'THE END\\n');process.exitCode=3"))
        yield* Stream.runDrain(handle.lines)
        assert.deepStrictEqual(yield* handle.exit, { code: 3, description: "exit code 3" })
        const tail = yield* handle.stderrTail
        assert.isAtMost(tail.length, 8 * 1024)
        assert.isTrue(tail.endsWith("THE END"))
      })
    )
  )

  it.live("fails to start with PROVIDER_START_FAILED (missing command, missing cwd)", () =>
    run(
      Effect.gen(function* () {
        const missing = yield* Effect.flip(spawn(node("", { command: "/nonexistent/agent-cli", args: [] })))
        assert.strictEqual(missing.code, "PROVIDER_START_FAILED")
        assert.strictEqual(missing.details?.provider, "scripted")
        const noCwd = yield* Effect.flip(spawn(node("", { cwd: "/nonexistent/workspace" })))
        assert.strictEqual(noCwd.code, "PROVIDER_START_FAILED")
      })
    )
  )

  it.live("fails a line over 16 MiB with PROVIDER_OUTPUT_INVALID instead of buffering it", () =>
    run(
      Effect.gen(function* () {
        const handle = yield* spawn(
          node(
            "const b=Buffer.alloc(1<<20,120);let n=0;const w=()=>{while(n<17){n++;if(!process.stdout.write(b))return process.stdout.once('drain',w)}};w()"
          )
        )
        const error: PedelecError = yield* Effect.flip(Stream.runDrain(handle.lines))
        assert.strictEqual(error.code, "PROVIDER_OUTPUT_INVALID")
        assert.strictEqual(error.details?.limit, 16 * 1024 * 1024)
      })
    )
  )

  it.live("ends the lines soon after the CLI exits even if a descendant keeps stdout open", () =>
    run(
      Effect.gen(function* () {
        // The sleeping child inherits stdout, so the pipe never closes on its own.
        const handle = yield* spawn(
          node("require('child_process').spawn('sleep',['30'],{stdio:'inherit'}).unref();console.log('bye')")
        )
        const started = Date.now()
        assert.deepStrictEqual(texts(yield* Stream.runCollect(handle.lines)), ["bye"])
        assert.isBelow(Date.now() - started, 4_000)
      })
    )
  )

  it.live("release kills a setsid grandchild that left the group, and the whole group", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("agent")
      const pidFile = path.join(dir, "grandchild.pid")
      const grandchildScript = `require('fs').writeFileSync(${JSON.stringify(pidFile)},String(process.pid));setInterval(()=>{},1e9)`
      const script = [
        "const {spawn}=require('child_process')",
        `spawn(process.execPath,['-e',${JSON.stringify(grandchildScript)}],{detached:true,stdio:'ignore'}).unref()`,
        "spawn('sleep',['1000'],{stdio:'ignore'})",
        "setInterval(()=>{},1e9)"
      ].join(";")
      const { handle, close } = yield* spawnInScope(node(script))
      const grandchild = yield* waitFor(
        "the grandchild's pid file",
        Effect.sync(() => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined))
      )
      // The sleep starts after the grandchild, so a look may find the grandchild before it.
      const seen = yield* waitFor(
        "the grandchild and the sleep among the tracked processes",
        Effect.map(handle.processes, (records) =>
          records.some((r) => r.pid === grandchild) && records.length >= 3 ? records : undefined
        )
      )
      assert.strictEqual(seen.length, 3) // the CLI, its sleep, and the grandchild (its own group now)
      const grandchildRecord = seen.find((r) => r.pid === grandchild)!
      assert.notStrictEqual(grandchildRecord.pgid, handle.pid)
      yield* close
      for (const record of seen) yield* waitGone(record.pid)
      assert.isFalse(pidExists(grandchild))
      assert.deepStrictEqual(yield* handle.processes, [])
      const table = yield* ProcessTree.snapshot
      assert.isFalse(table.some((p) => p.pgid === handle.pid || p.pgid === grandchildRecord.pgid))
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )

  it.live("release kills a setsid grandchild whose parent exited before any look saw it (by the agent's tag)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("agent")
      const pidFile = path.join(dir, "escaped.pid")
      // sh backgrounds setsid, which (not a group leader) execs sleep in a session of its own; sh exits at once, so
      // nothing links the sleep to the agent but what it inherited.
      const detach = `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > ${JSON.stringify(pidFile)}`
      const script = `require('child_process').spawn('sh',['-c',${JSON.stringify(detach)}],{stdio:'ignore'});setInterval(()=>{},1e9)`
      const { handle, close } = yield* spawnInScope(node(script))
      const escaped = yield* waitFor(
        "the escaped sleep's pid file",
        Effect.sync(() => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined))
      )
      yield* waitFor(
        "the sh to be gone",
        Effect.map(ProcessTree.snapshot, (table) => {
          const sleep = table.find((info) => info.pid === escaped)
          return sleep !== undefined && sleep.ppid !== handle.pid && !table.some((info) => info.ppid === handle.pid)
            ? true
            : undefined
        })
      )
      const records = yield* handle.processes
      assert.isFalse(records.some((record) => record.pid === escaped))
      // What a Core restarting after a crash reads from the session file finds it by the agent's tag all the same.
      assert.isTrue(records.length > 0 && records.every((record) => AGENT_TAG_PATTERN.test(record.agentTag ?? "")))
      assert.deepStrictEqual(
        (yield* taggedStrays(records)).map((record) => record.pid),
        [escaped]
      )
      yield* close
      yield* waitGone(escaped)
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )

  it.live("one shared look serves many agents: each one's setsid grandchild, orphaned, is still found and killed", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("agents")
      // The middle process starts the grandchild in a session of its own, then exits: after that only a look
      // taken while the middle lived links the grandchild to its agent.
      const agentScript = (pidFile: string) => {
        const grandchild = `require('fs').writeFileSync(${JSON.stringify(pidFile)},String(process.pid));setInterval(()=>{},1e9)`
        const middle = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(grandchild)}],{detached:true,stdio:'ignore'}).unref();setTimeout(()=>{},800)`
        return `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(middle)}],{stdio:'ignore'});setInterval(()=>{},1e9)`
      }
      const pidFiles = Array.from({ length: 8 }, (_, index) => path.join(dir, `grandchild-${index}.pid`))
      const agents = yield* Effect.forEach(pidFiles, (file) => spawnInScope(node(agentScript(file))))
      const grandchildren = yield* Effect.forEach(pidFiles, (file) =>
        waitFor(
          "a grandchild's pid file",
          Effect.sync(() => (existsSync(file) ? Number(readFileSync(file, "utf8")) || undefined : undefined))
        )
      )
      // Each agent is back to itself and its orphaned grandchild: the middle process is gone.
      yield* Effect.forEach(agents, ({ handle }, index) =>
        waitFor(
          "the agent's processes to be itself and its grandchild",
          Effect.map(handle.processes, (records) => {
            const pids = records.map((r) => r.pid).sort()
            const expected = [handle.pid, grandchildren[index]!].sort()
            return pids.length === 2 && pids.every((pid, i) => pid === expected[i]) ? true : undefined
          })
        )
      )
      yield* Effect.forEach(agents, ({ close }) => close, { concurrency: "unbounded" })
      for (const pid of grandchildren) yield* waitGone(pid)
    }).pipe(Effect.scoped, Effect.provide(AgentProcess.layer))
  )

  it.live("release escalates to SIGKILL for a CLI that ignores SIGINT", () =>
    run(
      Effect.gen(function* () {
        const { handle, close } = yield* spawnInScope(
          node("process.on('SIGINT',()=>{});process.on('SIGTERM',()=>{});console.log('ready');setInterval(()=>{},1e9)")
        )
        const first = yield* Stream.runHead(handle.lines)
        assert.deepStrictEqual(first._tag === "Some" ? texts([first.value]) : [], ["ready"])
        const started = Date.now()
        yield* close
        const took = Date.now() - started
        // Asked nicely first (SIGINT, 400 ms of grace), yet gone within the second a user expects.
        assert.isAtLeast(took, 350)
        assert.isBelow(took, 2_500)
        assert.strictEqual((yield* handle.exit).description, "killed by SIGKILL")
        yield* waitGone(handle.pid)
      })
    )
  )

  it.live("interrupt sends SIGINT to the group; a CLI that exits on it needs no killing", () =>
    run(
      Effect.gen(function* () {
        const { handle, close } = yield* spawnInScope(node("console.log('ready');setInterval(()=>{},1e9)"))
        yield* Stream.runHead(handle.lines)
        yield* handle.interrupt
        assert.strictEqual((yield* handle.exit).description, "killed by SIGINT")
        const started = Date.now()
        yield* close
        assert.isBelow(Date.now() - started, 500)
      })
    )
  )
})
