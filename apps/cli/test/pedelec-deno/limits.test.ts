// A script's limits: one that runs forever is stopped at the policy's timeout with SCRIPT_TIMEOUT (its whole
// process group, and the sandbox with it), output over the cap is cut with a marker, and a bad script path is
// SCRIPT_PATH_INVALID before anything runs.
import { symlink } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Wall } from "../../src/pedelec-deno/Sandbox.ts"
import { bwrapWall, type Place, place, processesNaming, ran, refusedWith, runScript } from "./scripts.ts"

let at: Place
let wall: Wall

beforeAll(async () => {
  at = await place()
  wall = (await bwrapWall()) ?? { kind: "none" }
  await at.file("forever.ts", 'console.log("started")\nwhile (true) {}\n')
  await at.file("chatty.ts", 'console.log("x".repeat(5000))\nconsole.error("y".repeat(5000))\n')
  await at.file("folder/keep.txt", "")
  await symlink(path.join(at.outside, "secret.txt"), path.join(at.workspace, "secret-link.ts"))
})
afterAll(() => at.remove())

describe("limits", () => {
  it.each([
    ["the first wall alone", { kind: "none" } as Wall],
    ["the best wall here", undefined]
  ])("stops a script that runs forever at the timeout, behind %s", async (_name, forced) => {
    let dir = ""
    const outcome = ran(
      await runScript(at, "forever.ts", {
        wall: forced ?? wall,
        policy: { timeoutMs: 1_500 },
        onPrepared: (prepared) => {
          dir = prepared.dir
        }
      })
    )
    expect(outcome.failure?.error.code).toBe("SCRIPT_TIMEOUT")
    expect(outcome.failure?.error.details).toEqual({ timeoutMs: 1_500 })
    expect(outcome.exit).toBe(124)
    expect(outcome.stdout).toBe("started\n")
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(1_400)
    expect(outcome.elapsedMs).toBeLessThan(6_000)
    expect(await processesNaming(dir)).toEqual([])
  })

  it("cuts stdout and stderr after the cap, with a marker", async () => {
    const outcome = ran(await runScript(at, "chatty.ts", { wall, policy: { outputBytes: 1_000 } }))
    expect(outcome.exit).toBe(0)
    expect(outcome.stdout).toBe(
      `${"x".repeat(1_000)}\n[pedelec-deno: stdout cut after 1000 bytes; the rest was dropped]\n`
    )
    expect(outcome.stderr).toBe(
      `${"y".repeat(1_000)}\n[pedelec-deno: stderr cut after 1000 bytes; the rest was dropped]\n`
    )
  })

  it.each([
    ["missing.ts", "it does not exist"],
    ["/etc/hostname", "it is absolute"],
    ["../outside/secret.txt", "it climbs out of the workspace with `..`"],
    ["secret-link.ts", "a symbolic link along it leads outside the workspace"],
    ["folder", "it is not a file"]
  ])("refuses the script path %s: %s", async (script, reason) => {
    const failure = refusedWith(await runScript(at, script, { wall }))
    expect(failure.error.code).toBe("SCRIPT_PATH_INVALID")
    expect(failure.error.details).toEqual({ path: script, reason })
    expect(failure.exit).toBe(1)
  })
})
