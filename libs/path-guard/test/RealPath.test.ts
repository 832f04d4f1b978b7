// The disk check on a real temp folder: files and folders inside, the folder itself, paths that do not exist yet,
// symlinks that stay inside, symlinks out (a file, a folder, a folder with a missing file under it), a dangling
// symlink, `..`, a sibling sharing the folder's prefix, absolute and NUL paths, and a root reached through a link.
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { lexicalRefusal, resolveInside } from "../src/RealPath.ts"

let base: string
let root: string
let sibling: string

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), "path-guard-")))
  root = path.join(base, "ws")
  sibling = path.join(base, "ws-other")
  await mkdir(path.join(root, "src"), { recursive: true })
  await mkdir(sibling)
  await writeFile(path.join(root, "src", "a.txt"), "a")
  await writeFile(path.join(sibling, "secret.txt"), "secret")
  await symlink(path.join(root, "src", "a.txt"), path.join(root, "inner-link.txt"))
  await symlink(path.join(root, "src"), path.join(root, "inner-dir"))
  await symlink(path.join(sibling, "secret.txt"), path.join(root, "file-out.txt"))
  await symlink(sibling, path.join(root, "dir-out"))
  await symlink(path.join(sibling, "missing.txt"), path.join(root, "dangling.txt"))
  await symlink(path.join(root, "nowhere"), path.join(root, "dangling-dir"))
  await symlink(root, path.join(base, "ws-link"))
})

afterAll(() => rm(base, { recursive: true, force: true }))

const refusal = async (relative: string, from = root) => {
  const resolved = await resolveInside(from, relative)
  return resolved._tag === "Refused" ? resolved.refusal : undefined
}

describe("resolveInside", () => {
  it("resolves what exists inside to its real path", async () => {
    expect(await resolveInside(root, "src/a.txt")).toEqual({
      _tag: "Inside",
      path: path.join(root, "src", "a.txt"),
      exists: true
    })
    expect(await resolveInside(root, "src/")).toEqual({ _tag: "Inside", path: path.join(root, "src"), exists: true })
    expect(await resolveInside(root, "./src/./a.txt")).toMatchObject({ path: path.join(root, "src", "a.txt") })
  })

  it("resolves the folder itself, spelled empty or `.`", async () => {
    for (const relative of ["", ".", "./", "src/.."])
      expect(await resolveInside(root, relative)).toEqual({ _tag: "Inside", path: root, exists: true })
  })

  it("follows a symlink that stays inside", async () => {
    expect(await resolveInside(root, "inner-link.txt")).toMatchObject({ path: path.join(root, "src", "a.txt") })
    expect(await resolveInside(root, "inner-dir/new/b.txt")).toEqual({
      _tag: "Inside",
      path: path.join(root, "src", "new", "b.txt"),
      exists: false
    })
  })

  it("judges a path that does not exist yet by its deepest existing part", async () => {
    expect(await resolveInside(root, "new/dir/file.txt")).toEqual({
      _tag: "Inside",
      path: path.join(root, "new", "dir", "file.txt"),
      exists: false
    })
    expect(await resolveInside(root, "src/a.txt/under")).toMatchObject({ exists: false })
  })

  it("refuses a symlink out, to a file or a folder, whether or not what is under it exists", async () => {
    expect(await refusal("file-out.txt")).toBe("outside")
    expect(await refusal("dir-out")).toBe("outside")
    expect(await refusal("dir-out/secret.txt")).toBe("outside")
    expect(await refusal("dir-out/missing/new.txt")).toBe("outside")
  })

  it("refuses a dangling symlink, to a file or along the way", async () => {
    expect(await refusal("dangling.txt")).toBe("dangling")
    expect(await refusal("dangling-dir/new.txt")).toBe("dangling")
  })

  it("refuses `..`, absolute paths and NUL bytes before asking the disk", async () => {
    expect(await refusal("..")).toBe("climbs")
    expect(await refusal("../ws-other/secret.txt")).toBe("climbs")
    expect(await refusal("src/../../ws-other")).toBe("climbs")
    expect(await refusal(path.join(sibling, "secret.txt"))).toBe("absolute")
    expect(await refusal("src/a\0.txt")).toBe("nul")
  })

  it("does not take a sibling sharing the folder's prefix for the folder", async () => {
    await symlink(path.join(sibling, "secret.txt"), path.join(root, "prefix-out.txt"))
    expect(await refusal("prefix-out.txt")).toBe("outside")
    expect(sibling.startsWith(root)).toBe(true)
  })

  it("resolves the root itself first: a root reached through a link holds the same things", async () => {
    expect(await resolveInside(path.join(base, "ws-link"), "src/a.txt")).toMatchObject({
      path: path.join(root, "src", "a.txt")
    })
    expect(await refusal("dir-out", path.join(base, "ws-link"))).toBe("outside")
  })

  it("throws what the disk raised for a root that is not there", async () => {
    await expect(resolveInside(path.join(base, "gone"), "x")).rejects.toMatchObject({ code: "ENOENT" })
  })
})

describe("lexicalRefusal", () => {
  it.each([
    ["a/b", undefined],
    ["a/..b", undefined],
    ["a/b/../c", undefined],
    ["a/../../b", "climbs"],
    ["/etc", "absolute"],
    ["a\0", "nul"]
  ])("%s: %s", (relative, expected) => {
    expect(lexicalRefusal(relative)).toBe(expected)
  })
})
