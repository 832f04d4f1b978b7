// pedelec-deno's walls with the real pinned Deno, in-process (Script.prepare + Run.execute; Core is not involved
// here, see cli.test.ts and apps/core-daemon/test/deno.test.ts): a script reads and writes its workspace; every
// capability it must not have fails with Deno's clear error (network, env, subprocess, FFI, system info, reading a
// path outside, a symlink leading out, writing outside) and imports from outside, the network or registries are
// refused before it runs. Each case runs behind the first wall alone and behind bubblewrap where it works here.

import { existsSync, statfsSync } from "node:fs"
import { readdir, readFile, symlink } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Wall } from "../../src/pedelec-deno/Sandbox.ts"
import { LIMITS } from "../../src/pedelec-deno/Script/Graph.ts"
import type { Prepared } from "../../src/pedelec-deno/Script.ts"
import { bwrapWall, type Place, place, ran, refusedWith, runScript, SECRET } from "./scripts.ts"

const bwrap = await bwrapWall()
const walls: ReadonlyArray<readonly [string, Wall]> = [
  ["the first wall alone", { kind: "none" }],
  ...(bwrap === undefined ? [] : [["bubblewrap", bwrap] as const])
]

let at: Place
let server: Server
let port: number
let served = 0

beforeAll(async () => {
  at = await place()
  await at.file("data/input.txt", "one\ntwo\nthree\n")
  await at.file("lib/count.ts", "export const count = (text: string) => text.split('\\n').filter(Boolean).length\n")
  await symlink(path.join(at.outside, "secret.txt"), path.join(at.workspace, "link-out.txt"))
  await symlink(at.outside, path.join(at.workspace, "dir-out"))
  await symlink(path.join(at.outside, "evil.ts"), path.join(at.workspace, "evil-link.ts"))
  await at.file("../outside/evil.ts", 'export const secret = "imported from outside"\n')
  server = createServer((_req, res) => {
    served++
    res.end("reached")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await at.remove()
})

describe.each(walls)("behind %s", (_name, wall) => {
  it("reads and writes workspace files, gets its arguments, and passes its exit code and output on", async () => {
    await at.file(
      `rw-${wall.kind}.ts`,
      [
        'import { count } from "./lib/count.ts"',
        'const text = await Deno.readTextFile("data/input.txt")',
        'await Deno.mkdir("out", { recursive: true })',
        `await Deno.writeTextFile("out/result-${wall.kind}.json", JSON.stringify({ lines: count(text), args: Deno.args }))`,
        'console.log("counted", count(text))',
        'console.error("to stderr")',
        "Deno.exit(7)"
      ].join("\n")
    )
    const outcome = ran(await runScript(at, `rw-${wall.kind}.ts`, { wall, args: ["a b", "--flag"] }))
    expect(outcome.wall).toBe(wall.kind)
    expect(outcome.exit).toBe(7)
    expect(outcome.stdout).toBe("counted 3\n")
    expect(outcome.stderr).toBe("to stderr\n")
    expect(outcome.failure).toBeUndefined()
    const written = JSON.parse(await readFile(path.join(at.workspace, "out", `result-${wall.kind}.json`), "utf8"))
    expect(written).toEqual({ lines: 3, args: ["a b", "--flag"] })
    // The private copy is gone once the run is over.
    expect(existsSync(outcome.dir)).toBe(false)
  })

  const denied: ReadonlyArray<readonly [string, string, RegExp]> = [
    [
      "the network (fetch)",
      'await fetch("http://127.0.0.1:" + PORT + "/")',
      /NotCapable: Requires net access to "127\.0\.0\.1:\d+"/
    ],
    ["the environment", 'Deno.env.get("HOME")', /NotCapable: Requires env access to "HOME"/],
    [
      "a subprocess (Deno.Command)",
      'new Deno.Command("/bin/sh", { args: ["-c", "true"] }).outputSync()',
      /NotCapable: Requires run access to "\/bin\/sh"/
    ],
    ["FFI (Deno.dlopen)", 'Deno.dlopen("libc.so.6", {})', /NotCapable: Requires ffi access/],
    ["system information (Deno.osRelease)", "Deno.osRelease()", /NotCapable: Requires sys access to "osRelease"/],
    [
      "reading /etc/hostname by path",
      'Deno.readTextFileSync("/etc/hostname")',
      /NotCapable: Requires read access to "\/etc\/hostname"/
    ],
    [
      "writing outside the workspace",
      'Deno.writeTextFileSync(OUTSIDE + "/written.txt", "x")',
      /NotCapable: Requires write access to ".*\/outside\/written\.txt"/
    ]
  ]

  it.each(denied)("denies %s with Deno's clear error", async (what, code, error) => {
    const name = `denied-${wall.kind}-${what.replace(/\W+/g, "-")}.ts`
    await at.file(
      name,
      `const PORT = ${port}\nconst OUTSIDE = ${JSON.stringify(at.outside)}\n${code}\nconsole.log("NOT DENIED")\n`
    )
    const before = served
    const outcome = ran(await runScript(at, name, { wall }))
    expect(outcome.exit).toBe(1)
    expect(outcome.stdout).not.toContain("NOT DENIED")
    expect(outcome.stderr).toMatch(error)
    expect(served).toBe(before)
    expect(existsSync(path.join(at.outside, "written.txt"))).toBe(false)
  })

  it("denies reading and writing through a symlink of the workspace that leads outside", async () => {
    const name = `link-${wall.kind}.ts`
    await at.file(
      name,
      [
        "for (const [what, act] of [",
        '  ["read file", () => Deno.readTextFileSync("link-out.txt")],',
        '  ["read dir", () => Deno.readTextFileSync("dir-out/secret.txt")],',
        '  ["write file", () => Deno.writeTextFileSync("link-out.txt", "overwritten")],',
        '  ["write dir", () => Deno.writeTextFileSync("dir-out/new.txt", "created")],',
        "] as const) {",
        "  try { console.log(what, 'LEAKED', act()) } catch (error) { console.log(what, 'denied:', String(error)) }",
        "}"
      ].join("\n")
    )
    const outcome = ran(await runScript(at, name, { wall }))
    expect(outcome.exit).toBe(0)
    expect(outcome.stdout).not.toContain("LEAKED")
    expect(outcome.stdout).not.toContain(SECRET)
    const lines = outcome.stdout.trim().split("\n")
    expect(lines).toHaveLength(4)
    // Behind the first wall Deno's flags deny them by name; behind bubblewrap their targets do not exist.
    for (const line of lines)
      expect(line).toMatch(
        wall.kind === "none" ? /denied: NotCapable: Requires (read|write) access/ : /denied: NotFound/
      )
    expect(await readFile(path.join(at.outside, "secret.txt"), "utf8")).toBe(SECRET)
    expect(existsSync(path.join(at.outside, "new.txt"))).toBe(false)
  })

  it("keeps Deno's own state (DENO_DIR) off the host behind bubblewrap: a tmpfs of the sandbox, gone with it", async () => {
    await at.file(`state-${wall.kind}.ts`, 'console.log("ran")\n')
    let written: Array<string> = []
    const onEnded = async (prepared: Prepared) => {
      written = await readdir(path.join(prepared.dir, "deno"))
    }
    expect(ran(await runScript(at, `state-${wall.kind}.ts`, { wall, onEnded })).stdout).toBe("ran\n")
    if (wall.kind === "bwrap") expect(written).toEqual([])
    else expect(written.length).toBeGreaterThan(0)
  })

  it("refuses a static import of /etc/hostname before anything runs, naming it", async () => {
    const name = `import-etc-${wall.kind}.ts`
    await at.file(name, 'import host from "/etc/hostname" with { type: "text" }\nconsole.log("LEAKED", host)\n')
    const failure = refusedWith(await runScript(at, name, { wall }))
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details).toEqual({ specifier: "file:///etc/hostname", reason: "is outside the workspace" })
    expect(failure.error.message).toMatch(/^Script imports file:\/\/\/etc\/hostname, which is outside the workspace/)
    expect(failure.exit).toBe(1)
  })
})

describe("the private copy", () => {
  const wall: Wall = bwrap ?? { kind: "none" }
  const tmpfsWithRoom = (() => {
    if (!existsSync("/dev/shm")) return false
    const fs = statfsSync("/dev/shm")
    return fs.type === 0x01021994 && fs.bavail * fs.bsize >= 2 * LIMITS.graphBytes
  })()

  const dirOfRun = async (tmpdir: string | undefined) => {
    const before = process.env.TMPDIR
    if (tmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = tmpdir
    let dir = ""
    try {
      await at.file("where.ts", 'console.log("ran")\n')
      const onPrepared = (prepared: Prepared) => {
        dir = prepared.dir
      }
      expect(ran(await runScript(at, "where.ts", { wall, onPrepared })).stdout).toBe("ran\n")
    } finally {
      if (before === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = before
    }
    expect(existsSync(dir)).toBe(false)
    return dir
  }

  it("is made in TMPDIR when it is set, and removed after the run", async () => {
    expect(path.dirname(await dirOfRun(at.outside))).toBe(at.outside)
  })

  it.runIf(tmpfsWithRoom)("is made in /dev/shm (a tmpfs with room) when TMPDIR is not set", async () => {
    expect(path.dirname(await dirOfRun(undefined))).toBe("/dev/shm")
  })
})

describe("imports", () => {
  const wall: Wall = bwrap ?? { kind: "none" }

  it.each([
    ["an npm: package", 'import pad from "npm:left-pad"', "npm:left-pad"],
    ["a jsr: package", 'import { join } from "jsr:@std/path"', "jsr:@std/path"],
    ["a remote module", 'import x from "https://deno.land/x/a.ts"', "https://deno.land/x/a.ts"],
    ["a data: module", 'import "data:text/javascript,export default 1"', "data:text/javascript,export default 1"]
  ])("refuses %s", async (_what, line, specifier) => {
    const name = `import-${specifier.replace(/\W+/g, "-")}.ts`
    await at.file(name, `${line}\nconsole.log("ran")\n`)
    const failure = refusedWith(await runScript(at, name, { wall }))
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details?.specifier).toBe(specifier)
  })

  it("refuses a module of the workspace that is a symlink to a file outside", async () => {
    await at.file("via-link.ts", 'import { secret } from "./evil-link.ts"\nconsole.log(secret)\n')
    const failure = refusedWith(await runScript(at, "via-link.ts", { wall }))
    expect(failure.error.code).toBe("SCRIPT_IMPORT_DENIED")
    expect(failure.error.details).toEqual({
      specifier: "evil-link.ts",
      reason: "is a symbolic link that leads outside the workspace"
    })
  })

  it("runs node: built-ins, JSON and text imports of the workspace", async () => {
    await at.file("data/conf.json", '{"name":"conf"}')
    await at.file(
      "builtins.ts",
      [
        'import { join } from "node:path"',
        'import conf from "./data/conf.json" with { type: "json" }',
        'import text from "./data/input.txt" with { type: "text" }',
        'console.log(join("a", "b"), conf.name, text.split("\\n")[0])'
      ].join("\n")
    )
    const outcome = ran(await runScript(at, "builtins.ts", { wall }))
    expect(outcome.stdout).toBe("a/b conf one\n")
    expect(outcome.exit).toBe(0)
  })
})
