// The startup dialog, over the Electron services' test layers: Core unreachable at launch shows "Pedelec could not
// start its Core" with the error as CODE: message and what to do for that code, before any window or tray; Retry
// asks again (and attaches once the cause is fixed), Open logs folder opens it and asks again, dismissing opens the
// window on the problem, and Quit quits. The last case runs the real CoreAccess over a stand-in pedelec-core the app
// starts and cannot connect to: after Quit, that Core is gone.
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import { coreUnavailable, ToCore } from "../../src/bridge/ToCore.ts"
import { CoreAccess } from "../../src/main/core/CoreAccess.ts"
import { CoreSessions } from "../../src/main/core/CoreSessions.ts"
import { STARTUP_TITLE } from "../../src/main/StartupDialog.ts"
import { eventually } from "./support/Eventually.ts"
import { writeFakeCore } from "./support/FakeCore.ts"
import { configFor, REFRESH_MS, start, tempHome } from "./support/Harness.ts"

const unavailable = () => coreUnavailable("pedelec-core did not start within 10 s")

const mismatch = () =>
  PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", "desktop", { details: { actual: 1, expected: 2 } })

/** The app launched while Core fails with `error`, its first dialog showing. */
const failingStart = (error: PedelecError, argv?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const started = yield* start({ home: yield* tempHome(), live: 1, ...(argv === undefined ? {} : { argv }) })
    started.core.failure = error
    yield* eventually(() => started.dialog.prompts.length === 1, "the startup dialog")
    return started
  })

const pids: Array<number> = []
afterAll(() => {
  for (const pid of pids) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL")
})

describe("DesktopApp: Core unreachable at launch", () => {
  it.effect("shows the dialog with CODE: message and where the logs are, before any window or tray", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable())
      const prompt = started.dialog.prompts[0]!
      assert.strictEqual(prompt.title, STARTUP_TITLE)
      assert.match(prompt.message, /^CORE_RUNTIME_UNAVAILABLE: .*pedelec-core did not start/)
      assert.include(prompt.detail, started.config.paths.logsDir)
      assert.include(prompt.detail, "then choose Retry")
      assert.deepStrictEqual(prompt.buttons, ["Retry", "Open logs folder", "Quit"])
      assert.strictEqual(started.windows.opened.length, 0)
      assert.strictEqual(started.tray.views.length, 0)
      yield* started.dialog.answer("Quit")
    })
  )

  it.effect("a Core of another release: quit the other Pedelec, not read the logs", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(mismatch())
      const prompt = started.dialog.prompts[0]!
      assert.match(prompt.message, /^PROTOCOL_VERSION_MISMATCH: /)
      assert.include(prompt.detail, "Quit the other Pedelec (or the pedelec-core it started) and open Pedelec again")
      yield* started.dialog.answer("Quit")
    })
  )

  it.effect("Retry while it still fails asks again; Retry once it is fixed attaches and opens the app", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable())
      yield* started.dialog.answer("Retry")
      yield* eventually(() => started.dialog.prompts.length === 2, "the dialog again")
      assert.strictEqual(started.windows.opened.length, 0)
      started.core.failure = undefined
      yield* started.dialog.answer("Retry")
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "the tray on Core's sessions")
      assert.isTrue(started.windows.opened[0]!.visible)
      assert.strictEqual(started.dialog.prompts.length, 2)
      assert.strictEqual(started.app.quitCalls(), 0)
    })
  )

  it.effect("Open logs folder opens it and asks again", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable())
      yield* started.dialog.answer("Open logs folder")
      yield* eventually(() => started.dialog.prompts.length === 2, "the dialog again")
      assert.deepStrictEqual(started.shell.opened, [started.config.paths.logsDir])
      assert.strictEqual(started.windows.opened.length, 0)
      yield* started.dialog.answer("Quit")
    })
  )

  it.effect("dismissed, the window opens and the tray shows the problem until Core answers", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable())
      yield* started.dialog.answer(undefined)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "problem", "the problem in the tray")
      assert.match(started.view().tooltip, /^Pedelec — CORE_RUNTIME_UNAVAILABLE: /)
      assert.isTrue(started.windows.opened[0]!.visible)
      started.core.failure = undefined
      yield* TestClock.adjust(REFRESH_MS)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "running once Core answers")
      assert.strictEqual(started.dialog.prompts.length, 1, "the tray's refresh shows no dialog")
    })
  )

  it.effect("a login launch (--background) that cannot reach Core says so too, then stays hidden", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable(), ["pedelec", "--background"])
      yield* started.dialog.answer(undefined)
      yield* eventually(() => started.tray.views.length > 0, "the tray")
      assert.isFalse(started.windows.opened[0]!.visible)
    })
  )

  it.effect("Quit quits, with no window or tray left", () =>
    Effect.gen(function* () {
      const started = yield* failingStart(unavailable())
      yield* started.dialog.answer("Quit")
      yield* eventually(() => started.app.quitCalls() === 1, "the quit")
      yield* Fiber.join(started.fiber)
      assert.strictEqual(started.windows.opened.length, 0)
      assert.strictEqual(started.tray.views.length, 0)
    })
  )

  it.live("Quit leaves no Core the app started: a started Core it cannot connect to is stopped", () =>
    Effect.gen(function* () {
      const home = yield* tempHome()
      const dir = yield* Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "pedelec-startup-")))
      const coreCommand = yield* Effect.promise(() => writeFakeCore(dir))
      const paths = configFor(home).paths
      process.env.PEDELEC_HOME = paths.home // the stand-in announces itself where PEDELEC_HOME says
      const access = CoreAccess.layer({ paths, coreCommand, source: "desktop", log: () => {} }).pipe(
        Layer.provide(NodeFileSystem.layer)
      )
      const toCore = Layer.unwrap(
        CoreAccess.use((core) => Effect.succeed(ToCore.layer({ locate: core.ensure, version: "test" })))
      )
      const sessions = CoreSessions.layer.pipe(Layer.provide(toCore), Layer.provide(access))
      const started = yield* start({ home, sessions })
      yield* eventually(() => started.dialog.prompts.length === 1, "the startup dialog", 20_000)
      const pid: number = JSON.parse(readFileSync(paths.runtimeFile, "utf8")).pid
      pids.push(pid)
      assert.isTrue(isProcessAlive(pid), "the app started a Core")
      assert.match(started.dialog.prompts[0]!.message, /^CORE_RUNTIME_UNAVAILABLE: /)
      yield* started.dialog.answer("Quit")
      yield* Fiber.join(started.fiber)
      assert.strictEqual(started.app.quitCalls(), 1)
      yield* eventually(() => !isProcessAlive(pid), "the Core the app started to stop")
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    })
  )
})
