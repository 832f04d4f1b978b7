// SelfTest's own parts: native messaging frames split and joined across chunks, the launcher and origin read from a
// manifest, pedelec-cli's line read, a hop timed by the Clock and stopped at its timeout (on TestClock), and a
// native host that never answers killed when its hop times out: a real process, started from a manifest.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import type { NativeHostShape } from "../../src/bridge/NativeHost.ts"
import { cliOutcome, encodeFrame, launchOf, nativeHostHop, runHop, takeFrames } from "../../src/bridge/SelfTest.ts"
import { eventually } from "./support/Eventually.ts"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("SelfTest", () => {
  it("frames a message as Chrome does and reads frames back across any split", () => {
    const one = Buffer.from(encodeFrame({ kind: "response", id: "a", ok: true, result: [] }))
    const two = Buffer.from(encodeFrame({ kind: "response", id: "b", ok: true, result: ["é"] }))
    assert.strictEqual(one.readUInt32LE(0), one.length - 4)
    const [rest, frames] = takeFrames(Buffer.concat([one, two.subarray(0, 6)]))
    assert.deepStrictEqual(
      frames.map((text) => JSON.parse(text).id),
      ["a"]
    )
    const [left, more] = takeFrames(Buffer.concat([rest, two.subarray(6)]))
    assert.deepStrictEqual(
      more.map((text) => JSON.parse(text).result),
      [["é"]]
    )
    assert.strictEqual(left.length, 0)
    assert.deepStrictEqual(takeFrames(one.subarray(0, 3))[1], [])
  })

  it("reads the launcher and the allowed origin from a manifest, and nothing from a broken one", () => {
    const manifest = JSON.stringify({
      name: "com.pedelec.host",
      path: "/opt/pedelec/pedelec-native-host",
      type: "stdio",
      allowed_origins: ["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]
    })
    assert.deepStrictEqual(launchOf(manifest), {
      launcher: "/opt/pedelec/pedelec-native-host",
      origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"
    })
    assert.strictEqual(launchOf("{"), undefined)
    assert.strictEqual(launchOf(JSON.stringify({ path: "/x", allowed_origins: [] })), undefined)
  })

  it.effect("reads pedelec-cli's line: the providers it listed, or its coded error", () =>
    Effect.gen(function* () {
      const listed = yield* cliOutcome('{"ok":true,"result":[{},{}]}\n')
      assert.include(listed, "listed 2 providers")
      const refused = yield* Effect.flip(
        cliOutcome('{"ok":false,"error":{"code":"CORE_RUNTIME_UNAVAILABLE","message":"No Core runs."}}\n')
      )
      assert.strictEqual(refused.error.code, "CORE_RUNTIME_UNAVAILABLE")
      assert.strictEqual(refused.error.message, "No Core runs.")
      const garbled = yield* Effect.flip(cliOutcome("Segmentation fault\n"))
      assert.strictEqual(garbled.error.code, "PROTOCOL_ERROR")
    })
  )

  it.effect("times a hop with the Clock, and fails one that outlasts its timeout", () =>
    Effect.gen(function* () {
      const slow = yield* runHop("Core answers", Effect.sleep("2 seconds").pipe(Effect.as("done")), 5_000).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("2 seconds")
      const passed = yield* Fiber.join(slow)
      assert.deepStrictEqual(passed, { name: "Core answers", ok: true, ms: 2_000, detail: "done" })
      const stuck = yield* runHop("Core answers", Effect.never, 5_000).pipe(Effect.forkChild)
      yield* TestClock.adjust("5 seconds")
      const failed = yield* Fiber.join(stuck)
      assert.strictEqual(failed.ok, false)
      assert.strictEqual("ms" in failed ? failed.ms : undefined, 5_000)
      assert.include("error" in failed ? failed.error.message : "", "did not finish within 5 s")
    })
  )

  it("kills a native host that never answers when its hop times out", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-selftest-"))
    try {
      const launcher = path.join(dir, "pedelec-native-host")
      const pidFile = path.join(dir, "pid")
      await writeFile(launcher, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 30\n`, { mode: 0o755 })
      const manifestFile = path.join(dir, "com.pedelec.host.json")
      await writeFile(manifestFile, JSON.stringify({ path: launcher, allowed_origins: ["chrome-extension://x/"] }))
      const host: NativeHostShape = {
        status: Effect.succeed({
          supported: true,
          launcherFile: launcher,
          hostEntry: launcher,
          browsers: [{ browser: "chromium", state: "registered", manifestFile }]
        }),
        register: () => Effect.die("not used")
      }
      const hop = await Effect.runPromise(runHop("Native host answers", nativeHostHop({ host }), 1_500))
      assert.strictEqual(hop.ok, false)
      assert.include("error" in hop ? hop.error.message : "", "did not finish within 1.5 s")
      const pid = Number((await readFile(pidFile, "utf8")).trim())
      await Effect.runPromise(eventually(() => !alive(pid), `pid ${pid} to be gone`))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
