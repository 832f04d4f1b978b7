/**
 * Test helpers shared by the process and adapter tests: temporary directories that clean up after themselves, polling
 * for a condition with real time, asking the kernel whether a pid still exists, session options, and the cancel check
 * every per-turn adapter must pass.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { SessionId } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { OutputLine } from "../src/OutputLines.ts"
import type { SessionProcess, SessionProcessOptions, TurnInput } from "../src/Provider.ts"
import type { TurnDecoder } from "../src/TurnProcess.ts"

export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(path.join(os.tmpdir(), `pedelec-${prefix}-`))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** True while the pid exists for the kernel (a zombie counts: it is not reaped yet). */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/** Runs `check` every 25 ms until it yields a value other than undefined; dies after `ms`. */
export const waitFor = <A, E, R>(what: string, check: Effect.Effect<A | undefined, E, R>, ms = 5_000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited <= ms; waited += 25) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep(25)
    }
    return yield* Effect.die(new Error(`timed out after ${ms} ms waiting for ${what}`))
  })

/** Waits for the pid to be gone and reaped (`process.kill(pid, 0)` throws ESRCH); some inits reap orphans only every ~1 s. */
export const waitGone = (pid: number, ms = 3_000) =>
  waitFor(
    `pid ${pid} to be gone`,
    Effect.sync(() => (pidExists(pid) ? undefined : true)),
    ms
  )

/** Best-effort cleanup for processes a failing test may leave behind. */
export const killQuietly = (pid: number | undefined) =>
  Effect.sync(() => {
    if (pid === undefined) return
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  })

/** Session options for adapter tests; each test overrides what it checks. */
export const sessionOptions = (overrides: Partial<SessionProcessOptions> = {}): SessionProcessOptions => ({
  sessionId: Schema.decodeSync(SessionId)("session-0123456789abcdefghij"),
  workspace: "/tmp/ws",
  env: { PEDELEC_THREAD_ID: "t1", PEDELEC_SESSION_CAP: "cap" },
  model: undefined,
  effort: { argv: [], env: {} },
  fullAccess: false,
  ...overrides
})

/**
 * Cancels a turn of a stand-in CLI that hangs after writing its child's pid to `<bin>/child`, and checks that the
 * CLI, the child and the session's process list are all gone.
 */
export const cancelLeavesNoProcess = (sp: SessionProcess, turn: TurnInput, bin: string) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Stream.runCollect(sp.send(turn)))
    const child = yield* waitFor(
      "the stand-in's child",
      Effect.sync(() => {
        try {
          return Number(readFileSync(path.join(bin, "child"), "utf8")) || undefined
        } catch {
          return undefined
        }
      })
    )
    const pids = yield* waitFor(
      "the turn's processes",
      Effect.map(sp.processes, (records) => (records.length > 0 ? records.map((record) => record.pid) : undefined))
    )
    yield* sp.interrupt
    yield* Fiber.interrupt(fiber)
    for (const pid of [...pids, child]) yield* waitGone(pid, 6_000)
    // The session's process list is refreshed by polling /proc: it may name a pid that just died for a moment.
    yield* waitFor(
      "an empty process list",
      Effect.map(sp.processes, (records) => (records.length === 0 ? true : undefined))
    )
  })

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

const textLines = (text: string): Array<OutputLine> =>
  text.split("\n").map((line): OutputLine => ({ _tag: "Text", text: line }))

/**
 * One CLI's decoder run over whole outputs, a fresh decoder each time: `decode` takes lines, `fixture` a file of
 * test/fixtures/<cli>/, `lines` hand-made objects. Each gives every event in order, the counts, and the decoder (for
 * state of its own, such as codex's warnings).
 */
export const decoding = <D extends TurnDecoder>(cli: string, makeDecoder: () => D) => {
  const decode = (lines: ReadonlyArray<OutputLine>) => {
    const decoder = makeDecoder()
    const events = lines.flatMap((line) => decoder.decode(line))
    return { events, counts: decoder.counts, decoder }
  }
  return {
    decode,
    fixture: (name: string) => decode(textLines(readFileSync(path.join(FIXTURES, cli, name), "utf8"))),
    lines: (...objects: ReadonlyArray<unknown>) => decode(textLines(objects.map((o) => JSON.stringify(o)).join("\n")))
  }
}
