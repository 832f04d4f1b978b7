// Core SIGKILLed at random points of create, turn and end, 20 times over one home (seeded, so a failure replays):
// after each restart every session whose create the page saw (and did not end) resumes, every session the page
// ended stays gone, no managed workspace is left without an active session record, and run/ holds only what the
// running Core owns (no stale lock, announcement or temp file of the Core that was killed).
import { spawn } from "node:child_process"
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import {
  failureCode,
  hostClient,
  killSessionProcesses,
  ORIGIN,
  type RunningCore,
  removeHome,
  startCore,
  stopCore,
  tempDir
} from "@pedelec/test-kit/core/Harness"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

const TRIALS = 20
const SEED = 14
/** A turn's kill lands within this long after it starts (the scripted turn takes about 300 ms). */
const TURN_DELAY_MS = 400
const RUN_FILES = new Set(["core.json", "core.lock", "core.sock"])

/** mulberry32: a tiny seeded generator, so the same trials run every time. */
const seeded = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The figures each trial prints: what a reader of the run compares with the issue's. */
const report = (line: string) => process.stdout.write(`[kill-resume] ${line}\n`)

type Action = "create" | "turn" | "end"

/** What the page knows: sessions it created (and holds), those whose end was cut short, those it saw end. */
interface Page {
  readonly held: Set<SessionId>
  /** An end the kill interrupted: the session may have ended or not, but it is one or the other, cleanly. */
  readonly ending: Set<SessionId>
  readonly ended: Set<SessionId>
}

const GONE = new Set(["SESSION_ENDED", "SESSION_NOT_FOUND"])

const input = { provider: "scripted", autoEndOnDisconnect: false } as const

const entries = (dir: string) => readdir(dir).catch(() => [] as Array<string>)

const recordState = async (home: string, sessionId: string) => {
  try {
    const text = await readFile(path.join(home, "sessions", `${sessionId}.json`), "utf8")
    return (JSON.parse(text) as { state: string }).state
  } catch {
    return undefined
  }
}

/** Whether the session's log says it ended: a session that resumes must not (its page would hear `ended` again). */
const loggedEnded = async (home: string, sessionId: string) => {
  const text = await readFile(path.join(home, "logs", `${sessionId}.jsonl`), "utf8").catch(() => "")
  return text.includes('"type":"ended"')
}

/** The action the kill interrupts; it records in `page` only what the page was told. */
const act = (client: HostClient, page: Page, action: Action, target: SessionId | undefined) =>
  Effect.gen(function* () {
    if (action === "create" || target === undefined) {
      const { sessionId } = yield* client["session.create"]({ origin: ORIGIN, input })
      page.held.add(sessionId)
    } else if (action === "turn") {
      const text = script("say working", "sleep 150", "say done")
      yield* client["session.send_text"]({ origin: ORIGIN, sessionId: target, text })
    } else {
      page.held.delete(target)
      page.ending.add(target)
      yield* client["session.end"]({ origin: ORIGIN, sessionId: target })
      page.ending.delete(target)
      page.ended.add(target)
    }
  })

/** After a restart: what resumed, what stayed gone, and what was left on disk that should not be. */
const check = (core: RunningCore, client: HostClient, page: Page) =>
  Effect.gen(function* () {
    const notResumed: Array<string> = []
    for (const sessionId of page.held) {
      const code = yield* failureCode(client["session.resume"]({ origin: ORIGIN, sessionId }))
      if (code !== "succeeded") notResumed.push(`${sessionId}: ${code}`)
      if (yield* Effect.promise(() => loggedEnded(core.home, sessionId))) notResumed.push(`${sessionId}: logged ended`)
    }
    for (const sessionId of page.ending) {
      const code = yield* failureCode(client["session.resume"]({ origin: ORIGIN, sessionId }))
      if (code !== "succeeded" && !GONE.has(code)) notResumed.push(`${sessionId} (its end cut short): ${code}`)
      page.ending.delete(sessionId)
      ;(code === "succeeded" ? page.held : page.ended).add(sessionId)
      const ended = yield* Effect.promise(() => loggedEnded(core.home, sessionId))
      if (code === "succeeded" && ended) notResumed.push(`${sessionId} (its end cut short): resumed, but logged ended`)
    }
    const revived: Array<string> = []
    for (const sessionId of page.ended) {
      const code = yield* failureCode(client["session.resume"]({ origin: ORIGIN, sessionId }))
      if (code === "succeeded") revived.push(sessionId)
    }
    const workspaces = yield* Effect.promise(() => entries(path.join(core.home, "workspaces")))
    const states = yield* Effect.promise(() => Promise.all(workspaces.map((id) => recordState(core.home, id))))
    const orphaned = workspaces.filter((_, index) => states[index] !== "active")
    const run = yield* Effect.promise(() => entries(path.join(core.home, "run")))
    const stale = run.filter((name) => !RUN_FILES.has(name))
    return { notResumed, revived, orphaned, stale }
  })

describe("Core SIGKILLed at random points of create, turn and end", () => {
  it.live(
    `${TRIALS} seeded kills: held sessions resume, ended ones stay gone, nothing is left behind`,
    () =>
      Effect.gen(function* () {
        const random = seeded(SEED)
        const home = yield* Effect.promise(() => tempDir("pedelec-kill-"))
        const page: Page = { held: new Set(), ending: new Set(), ended: new Set() }
        yield* Effect.addFinalizer(() =>
          Effect.promise(async () => {
            await Promise.all([...page.held, ...page.ending, ...page.ended].map(killSessionProcesses))
            await removeHome(home)
          })
        )
        const problems: Array<string> = []
        for (let trial = 0; trial <= TRIALS; trial++) {
          const core = yield* Effect.promise(() => startCore({ home }))
          const outcome = yield* Effect.scoped(
            Effect.gen(function* () {
              const client = yield* hostClient(core.info)
              const found = yield* check(core, client, page)
              if (trial === TRIALS) return found
              // A create and an end in peace, timed: the kill of the same action lands within its time, so it hits
              // every step of it (an end's last steps take a few ms of its round trip).
              const timed = (effect: Effect.Effect<unknown, unknown>) =>
                Effect.map(Effect.timed(Effect.orDie(effect)), ([duration]) => Duration.toMillis(duration))
              let created: SessionId | undefined
              const createMs = yield* timed(
                Effect.map(client["session.create"]({ origin: ORIGIN, input }), (made) => {
                  created = made.sessionId
                })
              )
              const endMs = yield* timed(client["session.end"]({ origin: ORIGIN, sessionId: created! }))
              page.ended.add(created!)
              const { sessionId } = yield* client["session.create"]({ origin: ORIGIN, input })
              page.held.add(sessionId)
              const actions: ReadonlyArray<Action> = ["create", "turn", "end"]
              const action = actions[Math.floor(random() * actions.length)]!
              const held = [...page.held]
              const target = held[Math.floor(random() * held.length)]
              const span = action === "create" ? createMs : action === "end" ? endMs : TURN_DELAY_MS
              const delayMs = Math.round(random() * span * 10) / 10
              const fiber = yield* Effect.forkChild(Effect.ignore(act(client, page, action, target)))
              yield* Effect.sleep(delayMs)
              yield* Effect.promise(() => stopCore(core, "SIGKILL"))
              yield* Fiber.interrupt(fiber)
              report(`trial ${trial + 1}: ${action} killed after ${delayMs} ms`)
              return found
            })
          )
          if (trial === TRIALS) yield* Effect.promise(() => stopCore(core))
          // A killed Core's agents are reaped by the next one; a turn killed in flight may still be exiting.
          yield* Effect.promise(() => sleep(50))
          const line = `resume failed ${outcome.notResumed.length}, ended back ${outcome.revived.length}, orphaned workspaces ${outcome.orphaned.length}, stale run/ files ${outcome.stale.length}`
          report(`after restart ${trial}: ${line}`)
          for (const [name, list] of Object.entries(outcome)) {
            for (const item of list) problems.push(`restart ${trial}: ${name} ${item}`)
          }
        }
        report(`held ${page.held.size}, ended ${page.ended.size}, problems ${problems.length}`)
        for (const problem of new Set(problems)) report(problem)
        assert.deepStrictEqual(problems, [])
      }),
    240_000
  )

  it.live("a lock a killed Core left, whose pid now names another process, is taken over", () =>
    Effect.gen(function* () {
      const home = yield* Effect.promise(() => tempDir("pedelec-lock-"))
      // Any live process that is not a Core, with the pid a killed Core's lock still names (pids are reused).
      const other = spawn("sleep", ["60"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.promise(() => removeHome(home).then(() => other.kill("SIGKILL"))))
      yield* Effect.promise(() => mkdir(path.join(home, "run"), { recursive: true, mode: 0o700 }))
      yield* Effect.promise(() => writeFile(path.join(home, "run", "core.lock"), `${other.pid} 1\n`, { mode: 0o600 }))
      const started = yield* Effect.promise(() =>
        startCore({ home }).then(
          (core) => core,
          (error: Error) => error
        )
      )
      if (started instanceof Error)
        assert.fail(`Core did not start over the stale lock: ${started.message.split("\n")[0]}`)
      const lock = yield* Effect.promise(() => readFile(path.join(home, "run", "core.lock"), "utf8"))
      yield* Effect.promise(() => stopCore(started))
      assert.strictEqual(lock.split(" ")[0], String(started.child.pid))
    })
  )
})
