/**
 * WarmProcess with a Node stand-in for a warm CLI: it logs each start's argv, answers each stdin line as a turn
 * (`die` exits mid-turn, `hang` starts a child and waits, an `interrupt` line ends a hanging turn unless it is told to
 * be deaf) and reports its pid. Two turns share one process; a death (mid-turn, or before the first turn is read)
 * fails its turn with stderr and the next turn resumes in a new process; a stopped turn leaves no process; an idle
 * process is closed; another provider session or a new conversation gets a new process; closing the session's scope
 * kills it. A request/response CLI (an `ask` turn waits for its `answer` line) gets its handshake once per process and
 * its request answered through the decoder's replies; an interrupt the decoder cannot name yet is SIGINT. A burst of
 * lines in one write reaches its turn whole and in order, and what follows the turn's end goes to no turn.
 */
import { readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { AgentProcess } from "../src/AgentProcess.ts"
import type { OutputLine } from "../src/OutputLines.ts"
import type { SessionProcess, TurnInput } from "../src/Provider.ts"
import { CountingDecoder } from "../src/TurnProcess.ts"
import { makeWarmProcess, type WarmProcessSpec } from "../src/WarmProcess.ts"
import { cancelLeavesNoProcess, pidExists, tempDir, waitFor, waitGone } from "./support.ts"

const STAND_IN = `
import { spawn } from "node:child_process"
import { appendFileSync, writeFileSync } from "node:fs"
import { createInterface } from "node:readline"
const dir = process.env.STAND_IN_DIR
appendFileSync(dir + "/spawns", JSON.stringify(process.argv.slice(2)) + "\\n")
if (process.env.STAND_IN_REFUSE === "1") {
  process.stderr.write("error: unknown option\\n")
  process.exit(2)
}
const at = process.argv.indexOf("--resume")
const session = at >= 0 ? process.argv[at + 1] : "conversation-" + process.pid
const out = (line) => process.stdout.write(JSON.stringify(line) + "\\n")
let child
createInterface({ input: process.stdin }).on("line", (raw) => {
  appendFileSync(dir + "/stdin", raw + "\\n")
  const message = JSON.parse(raw)
  if (message.type === "hello") return
  if (message.type === "answer") {
    out({ type: "text", text: "answered " + message.id })
    return out({ type: "done" })
  }
  if (message.type === "interrupt") {
    appendFileSync(dir + "/interrupts", "interrupt\\n")
    if (process.env.STAND_IN_DEAF === "1" || child === undefined) return
    child.kill("SIGKILL")
    child = undefined
    return out({ type: "error", message: "interrupted" })
  }
  out({ type: "session", id: session })
  if (message.text === "die") {
    process.stderr.write("dying on purpose\\n")
    process.exit(3)
  }
  if (message.text === "ask") return out({ type: "ask", id: "q1" })
  if (message.text === "burst") {
    // One write: the turn's lines, its end, and a line after the end that answers no turn.
    const lines = Array.from({ length: 2000 }, (_, i) => ({ type: "text", text: "part " + i }))
    lines.push({ type: "done" }, { type: "text", text: "after the end" })
    return process.stdout.write(lines.map((line) => JSON.stringify(line) + "\\n").join(""))
  }
  if (message.text === "hang") {
    child = spawn("sleep", ["60"], { stdio: "ignore" })
    return writeFileSync(dir + "/child", String(child.pid))
  }
  out({ type: "text", text: "pid " + process.pid + ": " + message.text })
  out({ type: "done" })
})
`

const Line = Schema.Struct({
  type: Schema.String,
  id: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String)
})
const decodeLine = Schema.decodeUnknownOption(Schema.fromJsonString(Line))

class StandInDecoder extends CountingDecoder {
  /** What the stand-in asked and waits for. */
  readonly owed: Array<string> = []

  decode(line: OutputLine): ReadonlyArray<ProviderEvent> {
    if (line._tag === "Invalid") return this.skip()
    return this.mapped(decodeLine(line.text), (decoded): ReadonlyArray<ProviderEvent> => {
      switch (decoded.type) {
        case "ask":
          this.owed.push(JSON.stringify({ type: "answer", id: decoded.id }))
          return []
        case "session":
          return [{ type: "session", providerSessionId: decoded.id ?? "" }]
        case "text":
          return [{ type: "message", text: decoded.text ?? "" }]
        case "done":
          return [{ type: "completed" }]
        case "error":
          return [{ type: "error", code: "PROVIDER_FAILED", message: decoded.message ?? "", details: {} }]
        default:
          this.counts.ignored++
          return []
      }
    })
  }
}

const fresh = (prompt: string): TurnInput => ({ prompt, providerSessionId: undefined, kind: "user" })
const continuing = (prompt: string, providerSessionId: string): TurnInput => ({
  prompt,
  providerSessionId,
  kind: "user"
})

/** A warm session over the stand-in in `dir`, in the test's scope; `overrides` tune the timings. */
const standIn = (overrides: Partial<WarmProcessSpec<StandInDecoder>> = {}, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const dir = yield* tempDir("warm")
    writeFileSync(path.join(dir, "stand-in.mjs"), STAND_IN)
    const spec: WarmProcessSpec<StandInDecoder> = {
      provider: "scripted",
      label: "the stand-in",
      spawn: (providerSessionId) => ({
        command: process.execPath,
        args: [
          path.join(dir, "stand-in.mjs"),
          ...(providerSessionId === undefined ? [] : ["--resume", providerSessionId])
        ],
        cwd: dir,
        env: { STAND_IN_DIR: dir, ...env },
        inheritEnv: true
      }),
      message: (turn) => JSON.stringify({ type: "user", text: turn.prompt }),
      interruptMessage: () => JSON.stringify({ type: "interrupt" }),
      decoder: () => new StandInDecoder(),
      idleTimeoutMs: 60_000,
      interruptGraceMs: 1_000,
      ...overrides
    }
    const sp = yield* makeWarmProcess(spec)
    const spawns = () =>
      readFileSync(path.join(dir, "spawns"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Array<string>)
    return { dir, sp, spawns }
  })

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope | AgentProcess>) =>
  effect.pipe(Effect.scoped, Effect.provide(AgentProcess.layer))

const turnOf = (sp: SessionProcess, turn: TurnInput) =>
  Effect.map(Stream.runCollect(sp.send(turn)), (events) => [...events])

const pidOf = (events: ReadonlyArray<ProviderEvent>) => {
  const message = events.find((event) => event.type === "message")
  return Number(/pid (\d+)/.exec(message?.type === "message" ? message.text : "")?.[1])
}

/** The pid a stand-in wrote to `file`, once it has. */
const readPid = (file: string) =>
  Effect.sync(() => {
    try {
      return Number(readFileSync(file, "utf8")) || undefined
    } catch {
      return undefined
    }
  })

const sessionOf = (events: ReadonlyArray<ProviderEvent>) => {
  const session = events.find((event) => event.type === "session")
  return session?.type === "session" ? session.providerSessionId : ""
}

describe("WarmProcess", () => {
  it.live("two turns run in one process, each ending at its own completion", () =>
    run(
      Effect.gen(function* () {
        const { sp, spawns } = yield* standIn()
        const first = yield* turnOf(sp, fresh("one"))
        assert.deepStrictEqual(
          first.map((event) => event.type),
          ["session", "message", "completed"]
        )
        const second = yield* turnOf(sp, continuing("two", sessionOf(first)))
        assert.strictEqual(pidOf(second), pidOf(first))
        assert.strictEqual(sessionOf(second), sessionOf(first))
        assert.strictEqual(spawns().length, 1)
        const records = yield* sp.processes
        assert.deepStrictEqual(
          records.map((record) => record.pid),
          [pidOf(first)]
        )
      })
    )
  )

  it.live("a burst in one write reaches its turn whole and in order; a line after the turn's end goes nowhere", () =>
    run(
      Effect.gen(function* () {
        const { sp } = yield* standIn()
        const burst = yield* turnOf(sp, fresh("burst"))
        const texts = burst.flatMap((event) => (event.type === "message" ? [event.text] : []))
        assert.deepStrictEqual(
          texts,
          Array.from({ length: 2000 }, (_, i) => `part ${i}`)
        )
        assert.deepStrictEqual(burst.at(-1), { type: "completed" })
        const next = yield* turnOf(sp, continuing("two", sessionOf(burst)))
        assert.deepStrictEqual(
          next.map((event) => (event.type === "message" ? event.text.replace(/^pid \d+/, "pid") : event.type)),
          ["session", "pid: two", "completed"]
        )
      })
    )
  )

  it.live("a death mid-turn fails the turn with its stderr, and the next turn resumes in a new process", () =>
    run(
      Effect.gen(function* () {
        const { sp, spawns } = yield* standIn()
        const first = yield* turnOf(sp, fresh("one"))
        const conversation = sessionOf(first)
        const error = yield* turnOf(sp, continuing("die", conversation)).pipe(Effect.flip)
        assert.strictEqual(error.code, "PROVIDER_FAILED")
        assert.include(String(error.details?.reason), "exit code 3")
        assert.include(String(error.details?.stderr), "dying on purpose")
        yield* waitGone(pidOf(first))
        const next = yield* turnOf(sp, continuing("three", conversation))
        assert.strictEqual(next.at(-1)?.type, "completed")
        assert.notStrictEqual(pidOf(next), pidOf(first))
        assert.deepStrictEqual(spawns(), [[], ["--resume", conversation]])
      })
    )
  )

  it.live("a stopped turn is interrupted the CLI's way, then its process goes too", () =>
    run(
      Effect.gen(function* () {
        const { dir, sp } = yield* standIn()
        // Core stops a turn by interrupting its stream, without calling `interrupt` first.
        const fiber = yield* Effect.forkChild(turnOf(sp, fresh("hang")))
        const child = yield* waitFor("the stand-in's child", readPid(path.join(dir, "child")))
        const [warm] = yield* sp.processes
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        assert.isBelow(Date.now() - started, 1_000, "ended by its interrupt, not killed after the grace")
        assert.strictEqual(readFileSync(path.join(dir, "interrupts"), "utf8"), "interrupt\n")
        for (const pid of [warm!.pid, child]) yield* waitGone(pid)
        yield* waitFor(
          "an empty process list",
          Effect.map(sp.processes, (records) => (records.length === 0 ? true : undefined))
        )
      })
    )
  )

  it.live("a stopped turn the CLI does not end is killed after the grace, with its child", () =>
    run(
      Effect.gen(function* () {
        const { dir, sp } = yield* standIn({ interruptGraceMs: 300 }, { STAND_IN_DEAF: "1" })
        yield* cancelLeavesNoProcess(sp, fresh("hang"), dir)
      })
    )
  )

  it.live("an interrupted turn ends quietly and the process stays for the next turn", () =>
    run(
      Effect.gen(function* () {
        const { dir, sp, spawns } = yield* standIn()
        const first = yield* turnOf(sp, fresh("one"))
        const hanging = yield* Effect.forkChild(turnOf(sp, continuing("hang", sessionOf(first))))
        const child = yield* waitFor("the stand-in's child", readPid(path.join(dir, "child")))
        yield* sp.interrupt
        const interrupted = yield* Fiber.join(hanging)
        assert.deepStrictEqual(
          interrupted.map((event) => event.type),
          ["session"]
        )
        yield* waitGone(child)
        const next = yield* turnOf(sp, continuing("two", sessionOf(first)))
        assert.strictEqual(pidOf(next), pidOf(first))
        assert.strictEqual(spawns().length, 1)
      })
    )
  )

  it.live("an idle process is closed, and the next turn resumes in a new one", () =>
    run(
      Effect.gen(function* () {
        const { sp, spawns } = yield* standIn({ idleTimeoutMs: 200 })
        const first = yield* turnOf(sp, fresh("one"))
        yield* waitGone(pidOf(first))
        yield* waitFor(
          "an empty process list",
          Effect.map(sp.processes, (records) => (records.length === 0 ? true : undefined))
        )
        const next = yield* turnOf(sp, continuing("two", sessionOf(first)))
        assert.notStrictEqual(pidOf(next), pidOf(first))
        assert.deepStrictEqual(spawns(), [[], ["--resume", sessionOf(first)]])
      })
    )
  )

  it.live("another provider session or a new conversation gets a new process", () =>
    run(
      Effect.gen(function* () {
        const { sp, spawns } = yield* standIn()
        const first = yield* turnOf(sp, fresh("one"))
        const other = yield* turnOf(sp, continuing("two", "another-conversation"))
        assert.strictEqual(sessionOf(other), "another-conversation")
        yield* waitGone(pidOf(first))
        const restarted = yield* turnOf(sp, fresh("three"))
        assert.notStrictEqual(pidOf(restarted), pidOf(other))
        assert.deepStrictEqual(spawns(), [[], ["--resume", "another-conversation"], []])
      })
    )
  )

  it.live("closing the session's scope kills the warm process", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { sp } = yield* standIn().pipe(Scope.provide(scope))
      const first = yield* turnOf(sp, fresh("one"))
      assert.isTrue(pidExists(pidOf(first)))
      yield* Scope.close(scope, Exit.void)
      yield* waitGone(pidOf(first))
    }).pipe(Effect.provide(AgentProcess.layer))
  )

  it.live("a request/response CLI: a handshake before a new process's first turn only, and its request answered", () =>
    run(
      Effect.gen(function* () {
        const hello = JSON.stringify({ type: "hello" })
        const { dir, sp, spawns } = yield* standIn({
          message: (turn, process) => {
            const user = JSON.stringify({ type: "user", text: turn.prompt })
            return process.fresh ? [hello, user] : user
          },
          replies: (decoder) => decoder.owed.splice(0)
        })
        const first = yield* turnOf(sp, fresh("ask"))
        assert.deepStrictEqual(
          first.filter((event) => event.type === "message"),
          [{ type: "message", text: "answered q1" }]
        )
        yield* turnOf(sp, continuing("two", sessionOf(first)))
        assert.strictEqual(spawns().length, 1)
        const written = readFileSync(path.join(dir, "stdin"), "utf8").trim().split("\n")
        assert.deepStrictEqual(
          written.map((line) => JSON.parse(line).type),
          ["hello", "user", "answer", "user"]
        )
      })
    )
  )

  it.live("an interrupt the decoder cannot name yet is SIGINT to the process, not a wait for the grace", () =>
    run(
      Effect.gen(function* () {
        const { dir, sp } = yield* standIn({ interruptMessage: () => undefined, interruptGraceMs: 30_000 })
        yield* cancelLeavesNoProcess(sp, fresh("hang"), dir)
        assert.isFalse(readFileSync(path.join(dir, "stdin"), "utf8").includes("interrupt"))
      })
    )
  )

  it.live("a CLI that exits before reading its first turn fails that turn with its stderr", () =>
    run(
      Effect.gen(function* () {
        const { sp } = yield* standIn({}, { STAND_IN_REFUSE: "1" })
        const error = yield* turnOf(sp, fresh("one")).pipe(Effect.flip)
        assert.strictEqual(error.code, "PROVIDER_FAILED")
        assert.include(String(error.details?.reason), "exit code 2")
        assert.include(String(error.details?.stderr), "unknown option")
      })
    )
  )

  it.live("a CLI that cannot start fails the turn with PROVIDER_START_FAILED", () =>
    run(
      Effect.gen(function* () {
        const { sp } = yield* standIn({
          spawn: () => ({ command: "/nonexistent/warm-cli", args: [], cwd: "/", env: {}, inheritEnv: true })
        })
        const error = yield* turnOf(sp, fresh("one")).pipe(Effect.flip)
        assert.strictEqual(error.code, "PROVIDER_START_FAILED")
      })
    )
  )
})
