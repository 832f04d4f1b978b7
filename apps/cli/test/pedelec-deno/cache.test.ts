// The cache of checked graphs (Script/GraphCache) with the real pinned Deno, in-process: a second run of an unchanged
// script skips both `deno info` checks (Prepared.graph, and the afterCheck seam never reached) and still runs the
// private copy; a changed import (now outside the workspace), a changed content, a new module, a hand-edited entry
// and a cache inside the workspace all mean a full check; the folder is private, bounded, and only the home of the
// Core whose socket answered is trusted.
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { link, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:net"
import path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Wall } from "../../src/pedelec-deno/Sandbox.ts"
import {
  type GraphCache,
  MAX_ENTRIES,
  openCache,
  store,
  trustedHome
} from "../../src/pedelec-deno/Script/GraphCache.ts"
import { bwrapWall, type Place, place, ran, refusedWith, runScript } from "./scripts.ts"

let at: Place
let wall: Wall
let cache: GraphCache

const HARMLESS = 'export const value = "checked"\n'
const LEAKS = 'import secret from "../../outside/secret.txt" with { type: "text" }\nexport const value = secret\n'

beforeAll(async () => {
  at = await place()
  wall = (await bwrapWall()) ?? { kind: "none" }
  await at.file("main.ts", 'import { value } from "./lib/value.ts"\nconsole.log(value)\n')
})
afterAll(() => at.remove())

beforeEach(async () => {
  const home = path.join(path.dirname(at.workspace), "home")
  await rm(home, { recursive: true, force: true })
  const opened = await openCache(home)
  if (opened === undefined) throw new Error("no cache in a fresh temp home")
  cache = opened
  await at.file("lib/value.ts", HARMLESS)
})

/** Runs main.ts with the cache, counting the workspace checks it reached. */
const runMain = async (hooks: { afterCopy?: () => Promise<void> } = {}) => {
  let checks = 0
  const outcome = await runScript(at, "main.ts", {
    wall,
    cache,
    hooks: {
      afterCheck: async () => {
        checks++
      },
      ...hooks
    }
  })
  return { outcome, checks }
}

const entries = async () => (await readdir(cache.dir)).filter((name) => name.endsWith(".json"))

describe("the graph cache", () => {
  it("skips both checks on a second run of an unchanged script, and runs the copy", async () => {
    const first = await runMain()
    expect(first.checks).toBe(1)
    expect(ran(first.outcome)).toMatchObject({ exit: 0, stdout: "checked\n", graph: "checked" })
    const second = await runMain()
    expect(second.checks).toBe(0)
    expect(ran(second.outcome)).toMatchObject({ exit: 0, stdout: "checked\n", graph: "cached" })
    expect(existsSync(ran(second.outcome).dir)).toBe(false)
    expect(await entries()).toHaveLength(1)
  })

  it("checks again when an import changed, and refuses it when it now points outside the workspace", async () => {
    expect(ran((await runMain()).outcome).graph).toBe("checked")
    await at.file("lib/value.ts", LEAKS)
    // Refused by the workspace's check itself (a cached run would have run): before afterCheck.
    const failure = refusedWith((await runMain()).outcome)
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details?.reason).toBe("is outside the workspace")
  })

  it("checks again when a module's content changed, and caches the new graph", async () => {
    await runMain()
    await at.file("lib/value.ts", 'export const value = "changed"\n')
    const changed = await runMain()
    expect(changed.checks).toBe(1)
    expect(ran(changed.outcome)).toMatchObject({ stdout: "changed\n", graph: "checked" })
    expect(ran((await runMain()).outcome)).toMatchObject({ stdout: "changed\n", graph: "cached" })
  })

  it("checks a new module: the file importing it changed", async () => {
    await runMain()
    await at.file("lib/extra.ts", 'export const extra = "new module"\n')
    await at.file("lib/value.ts", 'export { extra as value } from "./extra.ts"\n')
    const { outcome, checks } = await runMain()
    expect(checks).toBe(1)
    expect(ran(outcome)).toMatchObject({ stdout: "new module\n", graph: "checked" })
  })

  it("does not trust an entry edited by hand: the forged hashes of a leaking module mean a full check", async () => {
    await runMain()
    const [name] = await entries()
    const file = path.join(cache.dir, name!)
    await at.file("lib/value.ts", LEAKS)
    // What a forger would write: the leaking module's hash in place of the checked one, the seal kept.
    const leaking = createHash("sha256").update(LEAKS).digest("hex")
    const entry = JSON.parse(await readFile(file, "utf8")) as { modules: Array<[string, string]>; mac: string }
    const forged = entry.modules.map(([m, h]): [string, string] => [m, m === "lib/value.ts" ? leaking : h])
    await writeFile(file, JSON.stringify({ ...entry, modules: forged }))
    expect(refusedWith((await runMain()).outcome).error.details?.reason).toBe("is outside the workspace")
    await writeFile(file, "")
    await at.file("lib/value.ts", HARMLESS)
    expect(ran((await runMain()).outcome).graph).toBe("checked")
  })

  it("runs the verified copy, not what the workspace holds after it was hashed", async () => {
    await runMain()
    const outcome = ran(
      (await runMain({ afterCopy: () => writeFile(path.join(at.workspace, "lib", "value.ts"), LEAKS) })).outcome
    )
    expect(outcome).toMatchObject({ exit: 0, stdout: "checked\n", graph: "cached" })
    // The next run copies the changed file: its hash differs, so it is checked, and refused.
    expect(refusedWith((await runMain()).outcome).error.code).toBe("SCRIPT_IMPORT_DENIED")
  })

  it("checks in full when a cached module became a symlink leading out", async () => {
    await runMain()
    await rm(path.join(at.workspace, "lib", "value.ts"))
    await writeFile(path.join(at.outside, "value.ts"), 'export const value = "from outside"\n')
    await symlink(path.join(at.outside, "value.ts"), path.join(at.workspace, "lib", "value.ts"))
    const { outcome, checks } = await runMain()
    expect(checks).toBe(1)
    expect(refusedWith(outcome).error.details).toEqual({
      specifier: path.join("lib", "value.ts"),
      reason: "is a symbolic link that leads outside the workspace"
    })
    await rm(path.join(at.workspace, "lib", "value.ts"))
  })

  it("is not used when it lies inside the workspace (the script could write it)", async () => {
    const inside = await openCache(path.join(at.workspace, "home"))
    expect(inside).toBeDefined()
    for (let i = 0; i < 2; i++) {
      const outcome = ran(await runScript(at, "main.ts", { wall, cache: inside! }))
      expect(outcome.graph).toBe("checked")
    }
    expect((await readdir(inside!.dir)).filter((n) => n.endsWith(".json"))).toEqual([])
    await rm(path.join(at.workspace, "home"), { recursive: true, force: true })
  })

  it("is private (0700, its key 0600) and keeps at most MAX_ENTRIES entries", async () => {
    expect((await stat(cache.dir)).mode & 0o777).toBe(0o700)
    expect((await stat(path.join(cache.dir, "key"))).mode & 0o777).toBe(0o600)
    const hashes = new Map([["a.ts", "0".repeat(64)]])
    for (let i = 0; i <= MAX_ENTRIES + 3; i++)
      await store(cache, { workspace: at.workspace, entry: `e${i}.ts`, deno: "d", wall: "none" }, hashes)
    expect(await entries()).toHaveLength(MAX_ENTRIES)
  })
})

describe("trustedHome", () => {
  let home: string
  let server: Server
  const socketOf = (dir: string) => path.join(dir, "run", "core.sock")

  beforeAll(async () => {
    home = path.join(path.dirname(at.workspace), "core-home")
    await mkdir(path.join(home, "run"), { recursive: true })
    server = createServer()
    await new Promise<void>((resolve) => server.listen(socketOf(home), resolve))
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("is the home whose own socket answered", async () => {
    expect(await trustedHome(home, socketOf(home))).toBe(home)
  })

  it("is nothing for a home of the agent's reaching the real socket (a symlinked run/, a hard link)", async () => {
    const fake = path.join(path.dirname(at.workspace), "fake-home")
    await mkdir(fake, { recursive: true })
    await symlink(path.join(home, "run"), path.join(fake, "run"))
    expect(await trustedHome(fake, socketOf(fake))).toBeUndefined()
    expect(await trustedHome(fake, socketOf(home))).toBeUndefined()
    const linked = path.join(path.dirname(at.workspace), "linked-home")
    await mkdir(path.join(linked, "run"), { recursive: true })
    await link(socketOf(home), socketOf(linked))
    expect(await trustedHome(linked, socketOf(linked))).toBeUndefined()
    expect(await trustedHome(home, socketOf(home))).toBeUndefined()
  })
})
