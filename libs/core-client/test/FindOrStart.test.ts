// Find-or-start against real processes: a stand-in `pedelec-core` (a node script) that, run with --detach, leaves a
// detached process behind and announces it the way Core does; one that never announces; and a Core already running.
import { spawn } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import { findOrStart, type StartOptions } from "../src/FindOrStart.ts"
import { type CorePathsShape, pathsForHome } from "../src/HomeLayout.ts"
import { isProcessAlive } from "../src/ProcessAlive.ts"

let dir: string
const started: Array<number> = []

/** What `pedelec-core --detach --on-demand` does, minus Core: a detached child that announces itself and waits. */
const FAKE_CORE = `
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
if (process.argv[2] === "--detach") {
  const child = spawn(process.execPath, [__filename, "--serve"], { detached: true, stdio: "ignore", env: process.env })
  child.unref()
} else {
  const run = path.join(process.env.PEDELEC_HOME, "run")
  fs.mkdirSync(run, { recursive: true })
  fs.writeFileSync(path.join(run, "args"), process.argv.slice(2).join(" "))
  fs.writeFileSync(path.join(run, "core.json"), JSON.stringify({
    protocolVersion: ${PROTOCOL_VERSION}, coreVersion: "fake", pid: process.pid,
    socketPath: path.join(run, "core.sock"), launchSecret: "${"s".repeat(43)}", startedAt: Date.now()
  }))
  setTimeout(() => {}, 60_000)
}
`

const script = async (name: string, text: string) => {
  const file = path.join(dir, name)
  await writeFile(file, text)
  await chmod(file, 0o755)
  return file
}

const home = async (): Promise<CorePathsShape> => pathsForHome(await mkdtemp(path.join(dir, "home-")))

const options = (command: string | undefined, timeoutMs = 10_000): StartOptions => ({
  command,
  noCommand: "no command: install one",
  source: "native-host",
  log: () => {},
  timeoutMs
})

/** findOrStart with the home's PEDELEC_HOME in this process's environment, which the started command inherits. */
const find = (paths: CorePathsShape, start: StartOptions) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = process.env.PEDELEC_HOME
      process.env.PEDELEC_HOME = paths.home
      return before
    }),
    () => findOrStart(paths, start),
    (before) =>
      Effect.sync(() => {
        if (before === undefined) delete process.env.PEDELEC_HOME
        else process.env.PEDELEC_HOME = before
      })
  ).pipe(Effect.provide(NodeFileSystem.layer))

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-find-"))
})
afterAll(async () => {
  for (const pid of started) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL")
  await rm(dir, { recursive: true, force: true })
})

describe("findOrStart", () => {
  it.live("starts the command detached and on demand when no Core runs, and returns its announcement", () =>
    Effect.gen(function* () {
      const paths = yield* Effect.promise(home)
      const command = yield* Effect.promise(() => script("fake-core.cjs", FAKE_CORE))
      const info = yield* find(paths, options(command))
      started.push(info.pid)
      assert.isTrue(isProcessAlive(info.pid))
      assert.strictEqual(info.coreVersion, "fake")
      const args = yield* Effect.promise(() => readFile(path.join(paths.runDir, "args"), "utf8"))
      assert.strictEqual(args, "--serve", "the launcher ran with --detach --on-demand and started its copy")

      // A second call finds the same Core instead of starting another.
      const again = yield* find(paths, options(undefined))
      assert.strictEqual(again.pid, info.pid)
    })
  )

  it.live("a dead pid in core.json counts as no Core", () =>
    Effect.gen(function* () {
      const paths = yield* Effect.promise(home)
      const dead = spawn(process.execPath, ["-e", ""])
      yield* Effect.promise(() => new Promise((resolve) => dead.once("exit", resolve)))
      const stale = { protocolVersion: PROTOCOL_VERSION, coreVersion: "old", pid: dead.pid, startedAt: 0 }
      yield* Effect.promise(async () => {
        await mkdir(paths.runDir, { recursive: true })
        await writeFile(
          paths.runtimeFile,
          JSON.stringify({ ...stale, socketPath: paths.socketPath, launchSecret: "s".repeat(43) })
        )
      })
      const error = yield* Effect.flip(find(paths, options(undefined)))
      assert.strictEqual(error.code, "CORE_RUNTIME_UNAVAILABLE")
      assert.strictEqual(error.details?.reason, "no command: install one")
    })
  )

  it.live("a command that never announces: CORE_RUNTIME_UNAVAILABLE naming it and the log, after the timeout", () =>
    Effect.gen(function* () {
      const paths = yield* Effect.promise(home)
      const silent = yield* Effect.promise(() => script("silent.cjs", "process.exit(0)\n"))
      const error = yield* Effect.flip(find(paths, options(silent, 300)))
      assert.strictEqual(error.code, "CORE_RUNTIME_UNAVAILABLE")
      assert.include(String(error.details?.reason), `${silent} did not start within 0.3 s`)
      assert.include(String(error.details?.reason), path.join(paths.logsDir, "core.log"))
    })
  )

  it.live("a relative command is never run", () =>
    Effect.gen(function* () {
      const paths = yield* Effect.promise(home)
      const error = yield* Effect.flip(find(paths, options("pedelec-core")))
      assert.strictEqual(error.details?.reason, "no command: install one")
    })
  )
})
