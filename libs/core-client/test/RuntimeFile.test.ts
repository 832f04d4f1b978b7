// run/core.json as every client reads it: a real file in a temp home, each way of not being an announcement a coded
// error that says which, and a dead pid counting as no Core.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import { type CorePathsShape, pathsForHome } from "../src/HomeLayout.ts"
import { readRuntimeInfo, runningCore } from "../src/RuntimeFile.ts"

let paths: CorePathsShape

beforeAll(async () => {
  paths = pathsForHome(await mkdtemp(path.join(os.tmpdir(), "pedelec-runtime-")))
  await mkdir(paths.runDir, { recursive: true })
})
afterAll(() => rm(paths.home, { recursive: true, force: true }))

const announcement = (pid: number) => ({
  protocolVersion: PROTOCOL_VERSION,
  coreVersion: "0.1.0",
  pid,
  socketPath: paths.socketPath,
  launchSecret: "a".repeat(64),
  startedAt: 1
})

const announce = (content: unknown) =>
  Effect.promise(() =>
    writeFile(paths.runtimeFile, typeof content === "string" ? content : JSON.stringify(content), { mode: 0o600 })
  )

const refusal = (runtimeFile: string) =>
  readRuntimeInfo(runtimeFile).pipe(
    Effect.flip,
    Effect.map((error) => ({ code: error.code, problem: error.details?.problem }))
  )

describe("readRuntimeInfo", () => {
  it.effect("decodes a whole announcement", () =>
    Effect.gen(function* () {
      yield* announce(announcement(process.pid))
      const info = yield* readRuntimeInfo(paths.runtimeFile)
      assert.deepStrictEqual(info, announcement(process.pid))
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("no file: CORE_RUNTIME_UNAVAILABLE, missing", () =>
    Effect.gen(function* () {
      const missing = path.join(paths.runDir, "nothing.json")
      assert.deepStrictEqual(yield* refusal(missing), { code: "CORE_RUNTIME_UNAVAILABLE", problem: "missing" })
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("a folder where the file should be: CORE_RUNTIME_UNAVAILABLE, unreadable", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* refusal(paths.runDir), { code: "CORE_RUNTIME_UNAVAILABLE", problem: "unreadable" })
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("garbage, or JSON of the wrong shape: CORE_RUNTIME_UNAVAILABLE, invalid", () =>
    Effect.gen(function* () {
      const invalid = { code: "CORE_RUNTIME_UNAVAILABLE" as const, problem: "invalid" }
      for (const content of ["{not json", "[]", { ...announcement(process.pid), pid: "1" }, { pid: process.pid }]) {
        yield* announce(content)
        assert.deepStrictEqual(yield* refusal(paths.runtimeFile), invalid, JSON.stringify(content))
      }
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("a Core of another protocol: PROTOCOL_VERSION_MISMATCH, before the rest is judged", () =>
    Effect.gen(function* () {
      yield* announce({ protocolVersion: PROTOCOL_VERSION + 1, whatever: true })
      const error = yield* Effect.flip(readRuntimeInfo(paths.runtimeFile))
      assert.strictEqual(error.code, "PROTOCOL_VERSION_MISMATCH")
      assert.deepInclude(error.details, { actual: PROTOCOL_VERSION, expected: PROTOCOL_VERSION + 1 })
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})

describe("runningCore", () => {
  it.effect("the announcement of a live pid; nothing for a dead pid or no usable file", () =>
    Effect.gen(function* () {
      yield* announce(announcement(process.pid))
      assert.strictEqual((yield* runningCore(paths))?.pid, process.pid)
      yield* announce(announcement(2 ** 22 + 7))
      assert.isUndefined(yield* runningCore(paths))
      yield* announce("garbage")
      assert.isUndefined(yield* runningCore(paths))
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})
