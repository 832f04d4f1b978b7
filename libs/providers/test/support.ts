/**
 * Test helpers shared by the process tests: temporary directories that clean up after themselves, polling for a
 * condition with real time, and asking the kernel whether a pid still exists.
 */
import { mkdtempSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import * as Effect from "effect/Effect"

export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(path.join(os.tmpdir(), `pedelec-${prefix}-`))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** True while the pid exists for the kernel (a zombie counts: it is not reaped yet). */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/** Runs `check` every 25 ms until it yields a value other than undefined; dies after `ms`. */
export const waitFor = <A, E, R>(what: string, check: Effect.Effect<A | undefined, E, R>, ms = 5_000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited <= ms; waited += 25) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep(25)
    }
    return yield* Effect.die(new Error(`timed out after ${ms} ms waiting for ${what}`))
  })

/** Waits for the pid to be gone and reaped (`process.kill(pid, 0)` throws ESRCH); some inits reap orphans only every ~1 s. */
export const waitGone = (pid: number, ms = 3_000) =>
  waitFor(
    `pid ${pid} to be gone`,
    Effect.sync(() => (pidExists(pid) ? undefined : true)),
    ms
  )

/** Best-effort cleanup for processes a failing test may leave behind. */
export const killQuietly = (pid: number | undefined) =>
  Effect.sync(() => {
    if (pid === undefined) return
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  })
