// connectHost over a real Unix socket, against a server that answers only the hello (what every role starts with):
// the hello it sends, a welcome of another protocol refused with a code, and a socket nobody serves. What Core does
// with the proof is the Core suites' business (apps/core-daemon/test/security.test.ts). And a stream read without
// Acks, against a raw-socket stand-in that records what the client writes.
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { createInterface } from "node:readline"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { type CoreRuntimeInfo, HelloRpcs } from "@pedelec/contracts/node/CoreLink"
import type { Hello } from "@pedelec/contracts/Protocol"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RpcServer from "effect/rpc/RpcServer"
import * as Stream from "effect/Stream"
import { connectHost } from "../src/CoreClient.ts"
import { layerNdjson } from "../src/Ndjson.ts"

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-client-"))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

const infoAt = (socketPath: string): CoreRuntimeInfo =>
  ({
    protocolVersion: PROTOCOL_VERSION,
    coreVersion: "fake",
    pid: process.pid,
    socketPath,
    launchSecret: "s".repeat(43),
    startedAt: 1
  }) as CoreRuntimeInfo

/** A hello-only server on a fresh socket in the test's scope; it records each hello and welcomes with `version`. */
const helloServer = (name: string, version: number, hellos: Array<Hello>) =>
  Effect.gen(function* () {
    const socketPath = path.join(dir, `${name}.sock`)
    const hello = HelloRpcs.toLayer({
      "core.hello": (input) =>
        Effect.sync(() => {
          hellos.push(input)
          return { protocolVersion: version, coreVersion: "fake", pid: 1 }
        })
    })
    yield* Layer.build(
      RpcServer.layer(HelloRpcs).pipe(
        Layer.provide(hello),
        Layer.provide(RpcServer.layerProtocolSocketServer),
        Layer.provide(layerNdjson),
        Layer.provide(NodeSocketServer.layer({ path: socketPath }))
      )
    )
    return infoAt(socketPath)
  })

const OPTIONS = { component: "native-host", version: "1.2.3" } as const

describe("connectHost", () => {
  it.live("says hello as the given component and release, in this protocol", () =>
    Effect.gen(function* () {
      const hellos: Array<Hello> = []
      const info = yield* helloServer("ok", PROTOCOL_VERSION, hellos)
      yield* connectHost(info, OPTIONS)
      assert.deepStrictEqual(hellos, [
        { protocolVersion: PROTOCOL_VERSION, component: "native-host", version: "1.2.3" }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("a Core welcoming with another protocol is PROTOCOL_VERSION_MISMATCH, raised as the caller", () =>
    Effect.gen(function* () {
      const info = yield* helloServer("other", PROTOCOL_VERSION + 1, [])
      const error = yield* Effect.flip(connectHost(info, { ...OPTIONS, component: "cli" }))
      assert.strictEqual(error._tag, "PedelecError")
      if (error._tag !== "PedelecError") return
      assert.strictEqual(error.code, "PROTOCOL_VERSION_MISMATCH")
      assert.strictEqual(error.source, "cli")
      assert.deepStrictEqual(error.details, { actual: PROTOCOL_VERSION, expected: PROTOCOL_VERSION + 1 })
    }).pipe(Effect.scoped)
  )

  it.live("a socket nobody serves fails to open (an RpcClientError of SocketOpenError)", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(connectHost(infoAt(path.join(dir, "nobody.sock")), OPTIONS))
      assert.strictEqual(error._tag, "RpcClientError")
      if (error._tag !== "RpcClientError") return
      assert.strictEqual(error.reason._tag, "SocketOpenError")
    }).pipe(Effect.scoped)
  )
})

/**
 * A Core stand-in on a raw socket: welcomes the hello, answers `session.subscribe` with `events` as one chunk each,
 * and keeps every line the client wrote (what the test checks: no Acks, Core drops them).
 */
const streamingServer = (name: string, events: ReadonlyArray<unknown>, lines: Array<Record<string, unknown>>) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ info: CoreRuntimeInfo; server: net.Server }>((resolve) => {
          const socketPath = path.join(dir, `${name}.sock`)
          const server = net.createServer((socket) => {
            const send = (message: unknown) => socket.write(`${JSON.stringify(message)}\n`)
            createInterface({ input: socket }).on("line", (text) => {
              const line = JSON.parse(text) as Record<string, unknown>
              lines.push(line)
              if (line._tag !== "Request") return
              if (line.tag === "core.hello") {
                const welcome = { protocolVersion: PROTOCOL_VERSION, coreVersion: "fake", pid: 1 }
                send({ _tag: "Exit", requestId: line.id, exit: { _tag: "Success", value: welcome } })
              } else for (const event of events) send({ _tag: "Chunk", requestId: line.id, values: [event] })
            })
          })
          server.listen(socketPath, () => resolve({ info: infoAt(socketPath), server }))
        })
    ),
    ({ server }) => Effect.sync(() => server.close())
  )

describe("a host client's streams", () => {
  it.live("take Core's chunks without an Ack for each (Core paces streams by its socket)", () =>
    Effect.gen(function* () {
      const sessionId = randomBytes(16).toString("base64url") as SessionId
      const events = [1, 2, 3].map((seq) => ({
        type: "status_changed",
        status: seq % 2 === 0 ? "running" : "idle",
        previous: seq % 2 === 0 ? "idle" : "running",
        sessionId,
        seq,
        at: seq
      }))
      const lines: Array<Record<string, unknown>> = []
      const { info } = yield* streamingServer("stream", events, lines)
      const client = yield* connectHost(info, OPTIONS)
      const origin = "http://127.0.0.1:9" as Origin
      const got = yield* client["session.subscribe"]({ origin, sessionId, afterSeq: 0, claimTools: false }).pipe(
        Stream.take(3),
        Stream.runCollect
      )
      assert.deepStrictEqual(
        got.map((event) => event.seq),
        [1, 2, 3]
      )
      // An Ack would follow its chunk at once: give one time to arrive.
      yield* Effect.sleep(100)
      assert.deepStrictEqual(
        lines.filter((line) => line._tag === "Ack"),
        []
      )
    }).pipe(Effect.scoped)
  )
})
