// connectHost over a real Unix socket, against a server that answers only the hello (what every role starts with):
// the hello it sends, a welcome of another protocol refused with a code, and a socket nobody serves. What Core does
// with the proof is the Core suites' business (apps/core-daemon/test/security.test.ts).
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type CoreRuntimeInfo, HelloRpcs } from "@pedelec/contracts/node/CoreLink"
import type { Hello } from "@pedelec/contracts/Protocol"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RpcServer from "effect/rpc/RpcServer"
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
