// The script's path, on the disk: what a run may start (a regular file whose real path is inside the workspace, also
// through a symlink that stays inside) and what it refuses, in SCRIPT_PATH_INVALID's words, whichever way Script
// resolves it (synchronously for a plain path, resolveInside for the rest); and the private dir's removal, which
// takes a symlink in it away without following it.
import { existsSync } from "node:fs"
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Refused } from "../../src/pedelec-deno/Failure.ts"
import { privateDir, removeDir } from "../../src/pedelec-deno/Script/PrivateDir.ts"
import { resolveScript } from "../../src/pedelec-deno/Script.ts"
import { type Place, place, SECRET } from "./scripts.ts"

let at: Place

beforeAll(async () => {
  at = await place()
  await at.file("main.ts", "console.log(1)\n")
  await at.file("lib/mod.ts", "export {}\n")
  await symlink(path.join(at.workspace, "lib"), path.join(at.workspace, "linked"))
  await symlink(path.join(at.workspace, "main.ts"), path.join(at.workspace, "alias.ts"))
  await symlink(path.join(at.outside, "secret.txt"), path.join(at.workspace, "out.ts"))
  await symlink(at.outside, path.join(at.workspace, "outdir"))
  await symlink(path.join(at.workspace, "gone.ts"), path.join(at.workspace, "dangling.ts"))
})
afterAll(() => at.remove())

/** SCRIPT_PATH_INVALID's reason for `script`, or the path it resolved to. */
const resolved = async (script: string): Promise<string> => {
  try {
    return await resolveScript(at.workspace, script)
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    expect(error.failure.error.code).toBe("SCRIPT_PATH_INVALID")
    return `refused: ${String(error.failure.error.details?.reason)}`
  }
}

describe("a script's path", () => {
  it.each([
    ["main.ts", "main.ts"],
    ["./lib/mod.ts", "lib/mod.ts"],
    ["linked/mod.ts", "lib/mod.ts"],
    ["alias.ts", "main.ts"],
    ["lib/../main.ts", "main.ts"]
  ])("%s runs the workspace's %s", async (script, real) => {
    expect(await resolved(script)).toBe(path.join(at.workspace, real))
  })

  it.each([
    ["out.ts", "a symbolic link along it leads outside the workspace"],
    ["outdir/secret.txt", "a symbolic link along it leads outside the workspace"],
    ["../outside/secret.txt", "it climbs out of the workspace with `..`"],
    ["dangling.ts", "it does not exist"],
    ["missing.ts", "it does not exist"],
    ["lib", "it is not a file"],
    ["", "it is not a file"],
    ["main.ts\0", "it contains a NUL byte"]
  ])("%j is refused: %s", async (script, reason) => {
    expect(await resolved(script)).toBe(`refused: ${reason}`)
  })

  it("is refused when absolute, even naming a file of the workspace", async () => {
    expect(await resolved(path.join(at.workspace, "main.ts"))).toBe("refused: it is absolute")
  })
})

describe("the private dir's removal", () => {
  it("removes everything in it, a symlink leading out taken away and not followed", async () => {
    const dir = privateDir(at.workspace)
    await mkdir(path.join(dir, "src", "lib"), { recursive: true })
    await writeFile(path.join(dir, "src", "lib", "mod.ts"), "export {}\n", { mode: 0o400 })
    await symlink(at.outside, path.join(dir, "src", "out"))
    removeDir(dir)
    expect(existsSync(dir)).toBe(false)
    expect(await readFile(path.join(at.outside, "secret.txt"), "utf8")).toBe(SECRET)
  })
})
