// CoreAccess against real processes: a stand-in `pedelec-core` (a node script that, run with --detach, leaves a
// detached copy behind announcing itself in run/core.json as Core does) started when no Core runs, a Core someone
// else started attached to, and Quit (the layer's scope closing) ending only the one the app started.
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
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

const FAKE_CORE = `
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
if (process.argv[2] === "--detach") {
  spawn(process.execPath, [__filename, "--serve"], { detached: true, stdio: "ignore", env: process.env }).unref()
} else {
  const run = path.join(process.env.PEDELEC_HOME, "run")
  fs.mkdirSync(run, { recursive: true })
  fs.writeFileSync(path.join(run, "core.json"), JSON.stringify({
    protocolVersion: ${PROTOCOL_VERSION}, coreVersion: "fake", pid: process.pid,
    socketPath: path.join(run, "core.sock"), launchSecret: "${"s".repeat(43)}", startedAt: Date.now()
  }))
  setTimeout(() => {}, 60_000)
}
`

let dir: string
let command: string
const pids: Array<number> = []

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-core-access-"))
  command = path.join(dir, "pedelec-core.cjs")
  await writeFile(command, FAKE_CORE)
  await chmod(command, 0o755)
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
const access = (paths: CorePathsShape, coreCommand = command) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const layer = CoreAccess.layer({ paths, coreCommand, source: "desktop", log: () => {} }).pipe(
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
      yield* eventually(() => existsSync(paths.runtimeFile), "its announcement")
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
      yield* eventually(() => {
        return JSON.parse(readFileSync(paths.runtimeFile, "utf8")).pid === theirs
      }, "the new announcement")
      assert.strictEqual((yield* service.ensure).pid, theirs)
      assert.isFalse(yield* service.startedByApp)
      yield* quit
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      assert.isTrue(isProcessAlive(theirs))
    })
  )

  it.live("no bundled pedelec-core: CORE_RUNTIME_UNAVAILABLE saying to reinstall", () =>
    Effect.gen(function* () {
      const paths = yield* home
      const { service, quit } = yield* access(paths, "")
      const error = yield* Effect.flip(service.ensure)
      assert.strictEqual(error.code, "CORE_RUNTIME_UNAVAILABLE")
      assert.include(JSON.stringify(error.details), "reinstall Pedelec")
      yield* quit
    })
  )
})
