// pedelec-agent's built-in tools on a real temp workspace: files are listed, read and written inside it, and every
// way out is refused with INVALID_INPUT (absolute paths, `..`, a symlinked folder or file pointing outside, a
// dangling symlink a write would follow). Scripts need pedelec-deno, and without it the answer is DENO_UNAVAILABLE.
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LIMITS, resolveInside, runWorkspaceTool, type ToolAnswer } from "../../src/pedelec-agent/WorkspaceTools.ts"

let root: string
let workspace: string
let outside: string

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "pedelec-agent-tools-"))
  workspace = path.join(root, "ws")
  outside = path.join(root, "outside")
  await mkdir(path.join(workspace, "src"), { recursive: true })
  await mkdir(outside)
  await writeFile(path.join(workspace, "src", "a.txt"), "hello workspace")
  await writeFile(path.join(outside, "secret.txt"), "not yours")
  await symlink(outside, path.join(workspace, "escape"))
  await symlink(path.join(outside, "secret.txt"), path.join(workspace, "secret-link.txt"))
  await symlink(path.join(outside, "missing.txt"), path.join(workspace, "dangling.txt"))
  await symlink(path.join(workspace, "src", "a.txt"), path.join(workspace, "inner-link.txt"))
})
afterAll(() => rm(root, { recursive: true, force: true }))

const run = (name: string, args: Record<string, unknown>) =>
  runWorkspaceTool(name, args, {
    workspace,
    threadId: "t1",
    signal: new AbortController().signal
  }) as Promise<ToolAnswer>

const refused = async (name: string, args: Record<string, unknown>, reason: RegExp) => {
  const answer = await run(name, args)
  expect(answer.ok).toBe(false)
  if (answer.ok) return
  expect(answer.error.code).toBe("INVALID_INPUT")
  expect(answer.error.message).toMatch(reason)
}

describe("workspace tools", () => {
  it("lists, reads and writes inside the workspace", async () => {
    const listed = await run("pedelec_list_files", { recursive: true })
    expect(listed).toMatchObject({ ok: true, result: { truncated: false } })
    expect((listed as { result: { entries: Array<string> } }).result.entries).toContain("src/a.txt")
    expect(await run("pedelec_read_file", { path: "src/a.txt" })).toEqual({
      ok: true,
      result: { text: "hello workspace", bytes: 15 }
    })
    expect(await run("pedelec_read_file", { path: "src/a.txt", offset: 6 })).toMatchObject({
      result: { text: "workspace" }
    })
    expect(await run("pedelec_write_file", { path: "out/deep/b.txt", content: "written" })).toEqual({
      ok: true,
      result: { path: "out/deep/b.txt", bytes: 7 }
    })
    expect(await readFile(path.join(workspace, "out", "deep", "b.txt"), "utf8")).toBe("written")
    // A symlink that stays inside is fine.
    expect(await run("pedelec_read_file", { path: "inner-link.txt" })).toMatchObject({
      result: { text: "hello workspace" }
    })
  })

  it("reads a large file a slice at a time and says how much is left", async () => {
    await writeFile(path.join(workspace, "big.txt"), "x".repeat(LIMITS.readBytes + 10))
    const first = await run("pedelec_read_file", { path: "big.txt" })
    expect(first).toMatchObject({ ok: true, result: { bytes: LIMITS.readBytes + 10, more: 10 } })
  })

  it("refuses every way out of the workspace", async () => {
    await refused("pedelec_read_file", { path: path.join(outside, "secret.txt") }, /absolute/)
    await refused("pedelec_read_file", { path: "../outside/secret.txt" }, /`\.\.`/)
    await refused("pedelec_read_file", { path: "src/../../outside/secret.txt" }, /`\.\.`/)
    await refused("pedelec_read_file", { path: "escape/secret.txt" }, /symlink/)
    await refused("pedelec_read_file", { path: "secret-link.txt" }, /symlink/)
    await refused("pedelec_list_files", { path: "escape" }, /symlink/)
    await refused("pedelec_write_file", { path: "escape/new.txt", content: "x" }, /symlink/)
    await refused("pedelec_write_file", { path: "dangling.txt", content: "x" }, /symlink/)
    expect(existsSync(path.join(outside, "new.txt"))).toBe(false)
    expect(existsSync(path.join(outside, "missing.txt"))).toBe(false)
  })

  it("says what is wrong with bad arguments", async () => {
    await refused("pedelec_read_file", {}, /`path` must be a string/)
    await refused("pedelec_read_file", { path: "nope.txt" }, /does not exist/)
    await refused("pedelec_write_file", { path: "c.txt" }, /`content` must be a string/)
  })

  it("resolves a path whose folders do not exist yet to where it will be", async () => {
    const real = await resolveInside(workspace, "new/dir/file.txt")
    expect(real.endsWith(path.join("ws", "new", "dir", "file.txt"))).toBe(true)
  })

  it("runs scripts only through pedelec-deno, and says so when it is missing", async () => {
    const saved = process.env.PATH
    process.env.PATH = root
    try {
      const answer = await run("pedelec_run_script", { script: "main.ts" })
      expect(answer).toMatchObject({ ok: false, error: { code: "DENO_UNAVAILABLE" } })
      if (!answer.ok) expect(answer.error.message).toContain("do not run the script with node")
    } finally {
      process.env.PATH = saved
    }
  })

  it("leaves other names to the page's tools", () => {
    expect(
      runWorkspaceTool("page_title", {}, { workspace, threadId: "t1", signal: new AbortController().signal })
    ).toBe(undefined)
  })
})
