// A real headless Core for tests: the built `pedelec-core` in a temp PEDELEC_HOME as a child process, the scripted
// provider enabled, the built pedelec-cli on the agents' PATH, and RPC clients (host, desktop or agent role) over the real
// socket. Also what the suites need to look at real processes: /proc scans, pid checks, running pedelec-cli. Shared by
// core-daemon's suites, apps/faults and the bench, so it lives here rather than in any one app's tests.

import { spawn } from "node:child_process"
import { lstat, mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { NodeFileSystem } from "@effect/platform-node"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import type { CreateSessionInput } from "@pedelec/contracts/Session"
import type { ToolOutcome } from "@pedelec/contracts/Tool"
import type { SessionRecord } from "@pedelec/core/SessionStore"
import { digestOf, withNote } from "@pedelec/core/SessionStore/TurnNote"
import { connectAgent, connectDesktop, connectHost, type HostClient, type Proof } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll } from "vitest"
import { BUILT, type CoreProcess, startCoreProcess } from "./CoreProcess.ts"

export const coreBin = BUILT.coreBin
export const cliBinDir = BUILT.cliBinDir
export const cliBin = path.join(cliBinDir, "pedelec-cli")
export const ORIGIN = "http://127.0.0.1:5173" as Origin
export const OTHER_ORIGIN = "https://other.example" as Origin

export interface RunningCore extends CoreProcess {
  /** Where the scripted agent's `grandchild` or `escape` writes its pid (SCRIPTED_PID_FILE, one per Core). */
  readonly pidFile: string
}

export const tempDir = async (prefix: string) => realpath(await mkdtemp(path.join(os.tmpdir(), prefix)))

/** Starts `pedelec-core` with the scripted agent on a home (a fresh temp one by default), once it announced itself. */
export const startCore = async (options: { home?: string; env?: Record<string, string> } = {}) => {
  const home = options.home ?? (await tempDir("pedelec-core-"))
  const pidFile = path.join(home, "scripted-grandchild.pid")
  const env = { PEDELEC_ENABLE_SCRIPTED: "1", SCRIPTED_PID_FILE: pidFile, ...options.env }
  const running: RunningCore = { ...(await startCoreProcess({ home, env })), pidFile }
  return running
}

/** One Core for a whole test file: started before its tests, stopped (and its home removed) after them. */
export const coreForFile = (options: { env?: Record<string, string> } = {}): RunningCore => {
  let started: RunningCore | undefined
  beforeAll(async () => {
    started = await startCore(options)
  })
  afterAll(async () => {
    if (started === undefined) return
    await stopCore(started)
    await removeHome(started.home)
  })
  const current = () => {
    if (started === undefined) throw new Error("the file's Core has not started")
    return started
  }
  return {
    get home() {
      return current().home
    },
    get paths() {
      return current().paths
    },
    get child() {
      return current().child
    },
    get info() {
      return current().info
    },
    get pidFile() {
      return current().pidFile
    },
    stderr: () => current().stderr(),
    stop: (stopping) => current().stop(stopping)
  }
}

/** SIGTERM (or `signal`) and wait for the exit: a clean stop ends sessions and removes the socket. */
export const stopCore = (core: RunningCore, signal: NodeJS.Signals = "SIGTERM") => core.stop({ signal })

export const removeHome = (home: string) => rm(home, { recursive: true, force: true })

// ---------------------------------------------------------------------------------------------------------------
// RPC clients

const TEST_CLIENT = { version: "test" } as const

/**
 * A host-role client on the Core's socket, scoped: the connection closes with the caller's scope. It proves the
 * launch secret of core.json unless told otherwise, and says hello first unless `hello: false`.
 */
export const hostClient = (info: CoreRuntimeInfo, options: { proof?: Proof; hello?: boolean } = {}) =>
  connectHost(info, { ...TEST_CLIENT, ...options, component: "native-host" })

/** A desktop-role client (what the desktop app and pedelec-cli's user commands are), scoped like hostClient. */
export const desktopClient = (info: CoreRuntimeInfo, options: { proof?: Proof; hello?: boolean } = {}) =>
  connectDesktop(info, { ...TEST_CLIENT, ...options, component: "cli" })

/** An agent-role client (what pedelec-cli is), proving the given capability. */
export const agentClient = (info: CoreRuntimeInfo, proof: Proof) =>
  connectAgent(info, { ...TEST_CLIENT, component: "cli", proof })

/** The error a refused call failed with (`undefined` if it succeeded), for assertions on its code and details. */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.match({
      onSuccess: () => undefined,
      onFailure: (error) =>
        error as E & { readonly code?: string; readonly details?: Readonly<Record<string, unknown>> }
    })
  )

/** The code a refused call failed with (a PedelecError's code, else the failure's tag), or "succeeded". */
export const failureCode = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.match({
      onSuccess: () => "succeeded",
      onFailure: (error) => ("code" in error && typeof error.code === "string" ? error.code : error._tag)
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// Events

export interface Events {
  /** Every event received so far, in arrival order. */
  readonly seen: Array<SessionEvent>
  /** The next event matching the predicate (skipping others), within the timeout. */
  readonly next: <E extends SessionEvent>(
    predicate: (event: SessionEvent) => event is E,
    timeoutMs?: number
  ) => Effect.Effect<E, unknown>
}

/** Subscribes in the background (in the caller's scope) and collects every event into a queue the test reads. */
export const collectEvents = (stream: Stream.Stream<SessionEvent, unknown>) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<SessionEvent>()
    const seen: Array<SessionEvent> = []
    yield* stream.pipe(
      Stream.runForEach((event) => {
        seen.push(event)
        return Queue.offer(queue, event)
      }),
      Effect.forkScoped
    )
    const next = <E extends SessionEvent>(predicate: (event: SessionEvent) => event is E, timeoutMs = 20_000) =>
      Effect.gen(function* () {
        while (true) {
          const event = yield* Queue.take(queue)
          if (predicate(event)) return event
        }
      }).pipe(Effect.timeout(timeoutMs)) as Effect.Effect<E, unknown>
    const events: Events = { seen, next }
    return events
  })

export const isType =
  <T extends SessionEvent["type"]>(type: T) =>
  (event: SessionEvent): event is Extract<SessionEvent, { type: T }> =>
    event.type === type

export type TurnCompleted = Extract<SessionEvent, { type: "turn_completed" }>
export type ToolCall = Extract<SessionEvent, { type: "tool_call" }>

export const completionOf =
  (turnId: string) =>
  (event: SessionEvent): event is TurnCompleted =>
    event.type === "turn_completed" && event.turnId === turnId

export const isStatus =
  (status: string) =>
  (event: SessionEvent): event is Extract<SessionEvent, { type: "status_changed" }> =>
    event.type === "status_changed" && event.status === status

/** The chat lines of one turn, joined: the scripted agent reports each pedelec-cli run as one chat line. */
export const chatOf = (events: Events, turnId: TurnId) =>
  events.seen
    .filter(isType("chat"))
    .filter((event) => event.turnId === turnId)
    .map((event) => event.text)

/** The lines the scripted agent printed for `call <tool>`: "tool <tool> exit <code>: <pedelec-cli's line>". */
export const cliLinesOf = (events: Events, turnId: TurnId, tool: string) =>
  chatOf(events, turnId)
    .filter((text) => text.startsWith(`tool ${tool} exit `))
    .map((line) => {
      const colon = line.indexOf(": ")
      const exit = Number(line.slice(`tool ${tool} exit `.length, colon))
      // The agent may append how long the call took: "… (123.45 ms)".
      const raw = line.slice(colon + 2).replace(/ \(\d+(\.\d+)? ms\)$/, "")
      return { exit, raw, output: JSON.parse(raw) as CliLine }
    })

/** The one line the scripted agent printed for `call <tool>` in this turn. */
export const cliLineOf = (events: Events, turnId: TurnId, tool: string) => {
  const lines = cliLinesOf(events, turnId, tool)
  if (lines.length !== 1) throw new Error(`expected one pedelec-cli line for ${tool}, got ${lines.length}`)
  return lines[0]!
}

export interface CliLine {
  readonly ok: boolean
  readonly result?: Schema.Json
  readonly resultFile?: string
  readonly bytes?: number
  readonly preview?: string
  readonly error?: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
}

/** Sends a turn and answers every tool call of it with `answer`, until its completion, which it returns. */
export const runTurnAnswering = (
  client: HostClient,
  events: Events,
  sessionId: SessionId,
  text: string,
  answer: (call: ToolCall) => ToolOutcome,
  timeoutMs = 30_000
) =>
  Effect.gen(function* () {
    const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
    while (true) {
      const event = yield* events.next(
        (e): e is ToolCall | TurnCompleted =>
          (e.type === "tool_call" || e.type === "turn_completed") && e.turnId === turnId,
        timeoutMs
      )
      if (event.type === "turn_completed") return event
      yield* client["tool.submit_result"]({
        origin: ORIGIN,
        sessionId,
        toolCallId: event.toolCallId,
        outcome: answer(event)
      })
    }
  })

/** Creates a scripted session for ORIGIN and subscribes to it from seq 0 (claiming its tools unless told not to). */
export const openSession = (
  client: HostClient,
  input: CreateSessionInput = {},
  options: { readonly claimTools?: boolean; readonly origin?: Origin } = {}
) =>
  Effect.gen(function* () {
    const origin = options.origin ?? ORIGIN
    // No lease by default: a test that drops its stream must not lose the session to the disconnect rule.
    const session = yield* client["session.create"]({
      origin,
      input: { provider: "scripted", autoEndOnDisconnect: false, ...input }
    })
    const { sessionId } = session
    const claimTools = options.claimTools ?? true
    const events = yield* collectEvents(client["session.subscribe"]({ origin, sessionId, afterSeq: 0, claimTools }))
    return { session, sessionId, events }
  })

/**
 * A session whose scripted agent waits on a tool call (the manifest must declare `wait`), and the capability Core gave
 * that agent, read from its environment in /proc as any same-user process could. Closing the scope answers the call
 * and ends the session.
 */
export const sessionWithAgent = (client: HostClient, input: CreateSessionInput) =>
  Effect.gen(function* () {
    const { session, sessionId, events } = yield* openSession(client, input)
    yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: script("call wait {}") })
    const call = yield* events.next(isType("tool_call"))
    const [agent] = yield* Effect.promise(() =>
      waitUntil(
        "the session's agent",
        () => sessionProcesses(sessionId),
        (found) => found.length > 0
      )
    )
    const capability = yield* Effect.promise(() => environOf(agent!.pid, "PEDELEC_SESSION_CAP"))
    if (capability === undefined) return yield* Effect.die(new Error("the agent has no PEDELEC_SESSION_CAP"))
    yield* Effect.addFinalizer(() =>
      client["tool.submit_result"]({
        origin: ORIGIN,
        sessionId,
        toolCallId: call.toolCallId,
        outcome: { ok: true, result: null }
      }).pipe(Effect.andThen(client["session.end"]({ origin: ORIGIN, sessionId })), Effect.ignore)
    )
    return { session, sessionId, capability }
  })

// ---------------------------------------------------------------------------------------------------------------
// Processes (Linux /proc)

const stateOf = async (pid: number): Promise<string | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  return stat?.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
}

/** Gone: `kill(pid, 0)` says ESRCH, or only a zombie is left (dead, waiting for its parent to reap it). */
export const isGone = async (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
  return (await stateOf(pid)) === "Z"
}

export interface ProcessSeen {
  readonly pid: number
  readonly argv: ReadonlyArray<string>
}

/** Every live process whose environment says PEDELEC_THREAD_ID=<sessionId>: the agent, pedelec-cli, grandchildren. */
export const sessionProcesses = async (sessionId: string): Promise<Array<ProcessSeen>> => {
  const marker = `PEDELEC_THREAD_ID=${sessionId}`
  const names = (await readdir("/proc")).filter((name) => /^\d+$/.test(name))
  const found = await Promise.all(
    names.map(async (name) => {
      const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "")
      if (!environ.split("\0").includes(marker)) return []
      if ((await stateOf(Number(name))) === "Z") return []
      const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "")
      return [{ pid: Number(name), argv: cmdline.split("\0").filter((arg) => arg !== "") }]
    })
  )
  return found.flat()
}

export const exists = (file: string) =>
  lstat(file).then(
    () => true,
    () => false
  )

/** A failed test's safety net: SIGKILL whatever still runs with the session's id, so no orphan outlives the suite. */
export const killSessionProcesses = async (sessionId: string) => {
  for (const { pid } of await sessionProcesses(sessionId)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone in between.
    }
  }
}

/** One variable of a live process's environment (e.g. an agent's PEDELEC_SESSION_CAP). */
export const environOf = async (pid: number, name: string) => {
  const environ = await readFile(`/proc/${pid}/environ`, "utf8")
  const entry = environ.split("\0").find((item) => item.startsWith(`${name}=`))
  return entry?.slice(name.length + 1)
}

/** Polls until `check` holds; fails with `what` (and the last value seen) after `timeoutMs`. */
export const waitUntil = async <A>(
  what: string,
  probe: () => Promise<A>,
  check: (value: A) => boolean,
  timeoutMs = 10_000
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await probe()
    if (check(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`)
    await sleep(100)
  }
}

/** The pid the scripted agent's `grandchild` wrote, once it is there. */
export const grandchildPid = (core: RunningCore) =>
  waitUntil(
    "the grandchild's pid file",
    () => readFile(core.pidFile, "utf8").then(Number, () => 0),
    (pid) => pid > 0
  )

/** Runs the built pedelec-cli as an agent shell would, with exactly the given environment on top of PATH. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "ignore"]
    })
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => {
      stdout += data
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout }))
  })

/** A session's record file as a restarted Core reads it: with its turn note applied, when the note is over that text. */
export const sessionRecord = async (home: string, sessionId: string) => {
  const file = path.join(home, "sessions", `${sessionId}.json`)
  const text = await readFile(file, "utf8")
  const record = JSON.parse(text) as SessionRecord
  const read = Effect.flatMap(FileSystem.FileSystem, (fs) => withNote(fs, file, record, digestOf(text)))
  return Effect.runPromise(read.pipe(Effect.provide(NodeFileSystem.layer)))
}
