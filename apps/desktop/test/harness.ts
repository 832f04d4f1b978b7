// A real headless Core for tests: the built `pedelec-core` in a temp PEDELEC_HOME as a child process, the scripted
// provider enabled, the built pedelec-cli on the agents' PATH, and a host-role RPC client over the real socket.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { NodeSocket } from "@effect/platform-node"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin } from "@pedelec/contracts/Ids"
import { AUTH_HEADERS, type CoreRuntimeInfo, HelloRpcs, HostAuth, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { RpcClient, RpcMiddleware, RpcSerialization } from "effect/rpc"
import * as Stream from "effect/Stream"

const here = path.dirname(fileURLToPath(import.meta.url))
export const coreBin = path.resolve(here, "../bin/pedelec-core")
export const cliBinDir = path.resolve(here, "../../cli/bin")
export const ORIGIN = "http://127.0.0.1:5173" as Origin

export interface RunningCore {
  readonly home: string
  readonly child: ChildProcess
  readonly info: CoreRuntimeInfo
  readonly stderr: () => string
}

const readInfo = async (home: string): Promise<CoreRuntimeInfo | undefined> => {
  try {
    return JSON.parse(await readFile(path.join(home, "run", "core.json"), "utf8")) as CoreRuntimeInfo
  } catch {
    return undefined
  }
}

/** Starts `pedelec-core` on a home (a fresh temp one by default) and waits until it announces itself. */
export const startCore = async (options: { home?: string; env?: Record<string, string> } = {}) => {
  const home = options.home ?? (await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-core-"))))
  const child = spawn(process.execPath, [coreBin, "--home", home], {
    env: { ...process.env, PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_BIN_DIR: cliBinDir, ...options.env },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  for (let waited = 0; waited < 15_000; waited += 50) {
    const info = await readInfo(home)
    if (info !== undefined && info.pid === child.pid) {
      const running: RunningCore = { home, child, info, stderr: () => stderr }
      return running
    }
    if (child.exitCode !== null) break
    await sleep(50)
  }
  child.kill("SIGKILL")
  throw new Error(`pedelec-core did not start:\n${stderr}`)
}

/** SIGTERM and wait for the exit (a clean stop ends sessions and removes the socket). */
export const stopCore = async (core: RunningCore, signal: NodeJS.Signals = "SIGTERM") => {
  if (core.child.exitCode !== null || core.child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => core.child.once("exit", () => resolve()))
  core.child.kill(signal)
  await exited
}

export const removeHome = (home: string) => rm(home, { recursive: true, force: true })

export const HostClientRpcs = HelloRpcs.merge(HostRpcs)

/** A host-role client on the Core's socket, scoped: the connection closes with the caller's scope. */
export const hostClient = (info: CoreRuntimeInfo) =>
  Effect.gen(function* () {
    const protocol = RpcClient.layerProtocolSocket().pipe(
      Layer.provide(NodeSocket.layerNet({ path: info.socketPath })),
      Layer.provide(RpcSerialization.layerNdjson)
    )
    const auth = RpcMiddleware.layerClient(HostAuth, ({ request, next }) =>
      next({ ...request, headers: Headers.set(request.headers, AUTH_HEADERS.launchSecret, info.launchSecret) })
    )
    // Built into the caller's scope, so the socket outlives this constructor.
    const context = yield* Layer.build(Layer.mergeAll(protocol, auth))
    const client = yield* RpcClient.make(HostClientRpcs).pipe(Effect.provideContext(context))
    yield* client["core.hello"]({ protocolVersion: PROTOCOL_VERSION, component: "native-host", version: "test" })
    return client
  })

export type HostClient = Effect.Success<ReturnType<typeof hostClient>>

/** Subscribes in the background and collects every event into a queue the test reads from. */
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
    /** The next event matching the predicate (skipping others), within the timeout. */
    const next = <E extends SessionEvent>(predicate: (event: SessionEvent) => event is E, timeoutMs = 20_000) =>
      Effect.gen(function* () {
        while (true) {
          const event = yield* Queue.take(queue)
          if (predicate(event)) return event
        }
      }).pipe(Effect.timeout(timeoutMs)) as Effect.Effect<E, unknown>
    return { seen, next }
  })

export const isType =
  <T extends SessionEvent["type"]>(type: T) =>
  (event: SessionEvent): event is Extract<SessionEvent, { type: T }> =>
    event.type === type

/** A script for the scripted agent, fenced the way it looks for it. */
export const script = (...lines: ReadonlyArray<string>) => ["```pedelec-script", ...lines, "```"].join("\n")
