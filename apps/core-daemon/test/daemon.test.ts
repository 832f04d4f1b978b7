// pedelec-core as a daemon: one Core per home, `--detach` returning once the background Core answers, and a Core
// started on demand stopping itself when idle (with PEDELEC_IDLE_EXIT_MS scaled down from the 10 minutes of SPEC).
import { spawn } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { announcement } from "@pedelec/test-kit/core/CoreProcess"
import {
  cliBinDir,
  coreBin,
  exists,
  isGone,
  removeHome,
  startCore,
  stopCore,
  tempDir,
  waitUntil
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [coreBin, ...args], {
      env: { ...process.env, PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_BIN_DIR: cliBinDir, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("pedelec-core as a daemon", () => {
  it.live("a second Core on the same home refuses to start and names the running one", () =>
    Effect.gen(function* () {
      const core = yield* Effect.promise(() => startCore())
      yield* Effect.addFinalizer(() => Effect.promise(() => stopCore(core).then(() => removeHome(core.home))))
      const second = yield* Effect.promise(() => run(["--home", core.home]))
      assert.notStrictEqual(second.code, 0)
      assert.include(second.stderr, `pid ${core.child.pid}`)
      // The first Core is untouched: still announced, still its socket.
      const announced = yield* Effect.promise(() => announcement(core.home))
      assert.strictEqual(announced?.pid, core.child.pid)
    }).pipe(Effect.scoped)
  )

  it.live(
    "--detach returns once the background Core answers; --on-demand stops it after its idle time",
    () =>
      Effect.gen(function* () {
        const home = yield* Effect.promise(() => tempDir("pedelec-daemon-"))
        yield* Effect.addFinalizer(() => Effect.promise(() => removeHome(home)))
        const detached = yield* Effect.promise(() =>
          run(["--home", home, "--detach", "--on-demand"], { PEDELEC_IDLE_EXIT_MS: "1500" })
        )
        assert.strictEqual(detached.code, 0, detached.stderr)
        const pid = Number(/pid (\d+)/.exec(detached.stdout)?.[1])
        assert.isTrue(Number.isInteger(pid), detached.stdout)
        const { runtimeFile, lockFile } = pathsForHome(home)
        const announced = yield* Effect.promise(() => announcement(home))
        assert.strictEqual(announced?.pid, pid, "the detached Core is the one announced")
        // No session ever starts, so the Core leaves by itself, tidying up as a SIGTERM would.
        yield* Effect.promise(() => waitUntil("the idle Core to exit", () => isGone(pid), Boolean, 15_000))
        assert.isFalse(yield* Effect.promise(() => exists(runtimeFile)), "core.json removed")
        assert.isFalse(yield* Effect.promise(() => exists(lockFile)), "lock released")
      }).pipe(Effect.scoped),
    30_000
  )
})
