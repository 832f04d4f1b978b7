// A script's resources: memory (a 3 GiB buffer, a JS heap that only grows) and threads (a Worker fork bomb) are
// capped, behind either wall. A script over a cap is stopped at once, its whole tree with it, and the run ends with
// SCRIPT_RESOURCE_LIMIT naming the limit; a script within the caps (one Worker, a few MiB) runs as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Wall } from "../../src/pedelec-deno/Sandbox.ts"
import { bwrapWall, type Place, place, processesNaming, ran, runScript } from "./scripts.ts"

const MiB = 1024 * 1024
const CAPS = { memoryBytes: 256 * MiB, threads: 48 }

let at: Place
let best: Wall

/** Figures for the run's log: what each probe cost before it was stopped. */
const report = (line: string) => process.stdout.write(`[deno-resources] ${line}\n`)

beforeAll(async () => {
  at = await place()
  best = (await bwrapWall()) ?? { kind: "none" }
  await at.file("buffer.ts", 'const a = new Uint8Array(3 * 1024 ** 3)\na.fill(1)\nconsole.log("allocated", a.length)\n')
  await at.file(
    "heap.ts",
    "const keep: Array<Array<number>> = []\nwhile (true) keep.push(new Array(100_000).fill(1.5))\n"
  )
  await at.file("bomb.ts", 'import "./bomb-worker.ts"\nawait new Promise(() => {})\n')
  await at.file(
    "bomb-worker.ts",
    'const spawn = () => new Worker(new URL("./bomb-worker.ts", import.meta.url), { type: "module" })\nspawn()\nspawn()\n'
  )
  await at.file(
    "modest.ts",
    'import "./echo.ts"\nconst w = new Worker(new URL("./echo.ts", import.meta.url), { type: "module" })\nconst a = new Uint8Array(16 * 1024 * 1024).fill(2)\nw.onmessage = (e) => { console.log("worker said", e.data, a[0]); w.terminate() }\nw.postMessage("hi")\n'
  )
  await at.file("echo.ts", "self.onmessage = (e) => { self.postMessage(e.data); }\n")
})
afterAll(() => at.remove())

const walls = (): ReadonlyArray<readonly [string, () => Wall]> => [
  ["the first wall alone", () => ({ kind: "none" })],
  ["the best wall here", () => best]
]

describe.each(walls())("resources, behind %s", (_name, wall) => {
  it.each([
    ["a 3 GiB buffer", "buffer.ts", ["memory"]],
    ["a heap that only grows", "heap.ts", ["memory"]],
    // Each Worker is a V8 isolate of its own: a bomb's memory can cross 256 MiB before its threads cross 48.
    ["a Worker fork bomb", "bomb.ts", ["threads", "memory"]]
  ])(
    "stops %s with SCRIPT_RESOURCE_LIMIT",
    async (what, script, limits) => {
      let dir = ""
      const outcome = ran(
        await runScript(at, script, {
          wall: wall(),
          policy: { timeoutMs: 8_000, ...CAPS },
          onPrepared: (prepared) => {
            dir = prepared.dir
          }
        })
      )
      report(
        `${what} (${wall().kind}): ${outcome.failure?.error.code ?? `exit ${outcome.exit}`} ${JSON.stringify(outcome.failure?.error.details ?? {})} after ${Math.round(outcome.elapsedMs)} ms`
      )
      expect(outcome.failure?.error.code).toBe("SCRIPT_RESOURCE_LIMIT")
      expect(limits).toContain((outcome.failure?.error.details as { limit?: string } | undefined)?.limit)
      expect(outcome.stdout).not.toContain("allocated")
      expect(outcome.elapsedMs).toBeLessThan(8_000)
      expect(await processesNaming(dir)).toEqual([])
    },
    30_000
  )

  it("lets a script within the caps run: one Worker and 16 MiB", async () => {
    const outcome = ran(await runScript(at, "modest.ts", { wall: wall(), policy: CAPS }))
    expect(outcome.stderr).toBe("")
    expect(outcome.failure).toBeUndefined()
    expect(outcome.exit).toBe(0)
    expect(outcome.stdout).toBe("worker said hi 2\n")
  }, 30_000)
})
