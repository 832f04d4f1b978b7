// CoreAccess against real processes: a stand-in `pedelec-core` (a node script that, run with --detach, leaves a
// detached copy behind announcing itself in run/core.json as Core does) started when no Core runs, a Core someone
// else started attached to, Quit (the layer's scope closing) ending only the one the app started, and a start that
// fails while a Core of another protocol holds the home said as PROTOCOL_VERSION_MISMATCH.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import { type CorePathsShape, pathsForHome } from "@pedelec/core-client/HomeLayout"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { CoreAccess } from "../../src/main/core/CoreAccess.ts"
import { eventually } from "./support/Eventually.ts"
import { writeFakeCore } from "./support/FakeCore.ts"

let dir: string
let command: string
const pids: Array<number> = []

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-core-access-"))
  command = await writeFakeCore(dir)
})
afterAll(async () => {
  for (const pid of pids) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL")
  await rm(dir, { recursive: true, force: true })
})

/** A fresh home, also in this process's environment: the launcher find-or-start spawns inherits it. */
const home = Effect.promise(async () => {
  const paths = pathsForHome(await mkdtemp(path.join(dir, "home-")))
  process.env.PEDELEC_HOME = paths.home
  return paths
})

const announcedPid = (paths: CorePathsShape): number | undefined => {
  try {
    return JSON.parse(readFileSync(paths.runtimeFile, "utf8")).pid
  } catch {
    return undefined
  }
}

/** A Core the test starts, as the native host would have: the app must attach to it and leave it running. */
const foreignCore = (paths: CorePathsShape) =>
  Effect.gen(function* () {
    const child = spawn(process.execPath, [command, "--serve"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, PEDELEC_HOME: paths.home }
    })
    child.unref()
    pids.push(child.pid!)
    yield* eventually(() => isProcessAlive(child.pid!), "the foreign Core")
    return child.pid!
  })

/** CoreAccess in a scope of the test's own, closed by `quit` the way will-quit disposes the app's runtime. */
const access = (paths: CorePathsShape, coreCommand = command, startTimeoutMs?: number) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const config = { paths, coreCommand, source: "desktop" as const, log: () => {} }
    const layer = CoreAccess.layer(startTimeoutMs === undefined ? config : { ...config, startTimeoutMs }).pipe(
      Layer.provide(NodeFileSystem.layer)
    )
    const context = yield* Layer.buildWithScope(layer, scope)
    const service = Context.get(context, CoreAccess)
    return { service, quit: Scope.close(scope, Exit.void) }
  })

const ensure = (service: CoreAccess["Service"]) =>
  service.ensure.pipe(Effect.tap((info: CoreRuntimeInfo) => Effect.sync(() => pids.push(info.pid))))

describe("CoreAccess", () => {
  it.live("starts pedelec-core when none runs, remembers it as the app's, and Quit sends it SIGTERM", () =>
    Effect.gen(function* () {
      const paths = yield* home
      const { service, quit } = yield* access(paths)
      const info = yield* ensure(service)
      assert.strictEqual(info.coreVersion, "fake")
      assert.isTrue(isProcessAlive(info.pid))
      assert.isTrue(yield* service.startedByApp)
      assert.strictEqual((yield* service.ensure).pid, info.pid, "the next question attaches to the same Core")
      assert.isTrue(yield* service.startedByApp, "still the app's")
      yield* quit
      yield* eventually(() => !isProcessAlive(info.pid), "the started Core to stop")
    })
  )

  it.live("attaches to a Core someone else started, and Quit leaves it running", () =>
    Effect.gen(function* () {
      const paths = yield* home
      const pid = yield* foreignCore(paths)
      // Whole, not just there: a half-written file reads as no Core, and the app would start its own.
      yield* eventually(() => announcedPid(paths) === pid, "its announcement")
      const { service, quit } = yield* access(paths)
      assert.strictEqual((yield* ensure(service)).pid, pid)
      assert.isFalse(yield* service.startedByApp)
      yield* quit
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      assert.isTrue(isProcessAlive(pid), "a Core the app did not start outlives it")
    })
  )

  it.live("when the app's Core went and another took the home over, Quit ends neither", () =>
    Effect.gen(function* () {
      const paths = yield* home
      const { service, quit } = yield* access(paths)
      const ours = yield* ensure(service)
      process.kill(ours.pid, "SIGKILL")
      yield* eventually(() => !isProcessAlive(ours.pid), "the app's Core to die")
      const theirs = yield* foreignCore(paths)
      yield* eventually(() => announcedPid(paths) === theirs, "the new announcement")
      assert.strictEqual((yield* service.ensure).pid, theirs)
      assert.isFalse(yield* service.startedByApp)
      yield* quit
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      assert.isTrue(isProcessAlive(theirs))
    })
  )

  it.live("no bundled pedelec-core: CORE_RUNTIME_UNAVAILABLE saying to reinstall, in its message", () =>
    Effect.gen(function* () {
      const paths = yield* home
      const { service, quit } = yield* access(paths, "")
      const error = yield* Effect.flip(service.ensure)
      assert.strictEqual(error.code, "CORE_RUNTIME_UNAVAILABLE")
      assert.include(JSON.stringify(error.details), "reinstall Pedelec")
      assert.include(error.message, "reinstall Pedelec", "the dialog shows the message, not the details")
      yield* quit
    })
  )

  it.live("a Core of another protocol holding the home: the failed start says PROTOCOL_VERSION_MISMATCH", () =>
    Effect.gen(function* () {
      const paths = yield* home
      // Another release's Core, alive (this test's own pid), announced; ours cannot take the home and never answers.
      const announcement = { protocolVersion: PROTOCOL_VERSION + 1, pid: process.pid, socketPath: paths.socketPath }
      yield* Effect.promise(async () => {
        await mkdir(paths.runDir, { recursive: true })
        await writeFile(paths.runtimeFile, JSON.stringify(announcement))
      })
      const silent = path.join(dir, "silent-core.cjs")
      yield* Effect.promise(() => writeFile(silent, ""))
      const { service, quit } = yield* access(paths, silent, 300)
      const error = yield* Effect.flip(service.ensure)
      assert.strictEqual(error.code, "PROTOCOL_VERSION_MISMATCH")
      assert.deepInclude(error.details, { actual: PROTOCOL_VERSION, expected: PROTOCOL_VERSION + 1 })
      assert.isFalse(yield* service.startedByApp)
      yield* quit
    })
  )
})
