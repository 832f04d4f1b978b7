// The lexical check, on the spellings that have fooled prefix tests: a sibling sharing a prefix, `..`, trailing and
// repeated separators, relative paths, the root itself, and Windows drives and case.
import { describe, expect, it } from "vitest"
import { isInside, rulesOf, samePath } from "../src/Inside.ts"

const posix = { platform: "linux", ignoreCase: false } as const

describe("isInside", () => {
  it.each([
    ["/a/b", "/a/b", true],
    ["/a/b", "/a/b/c", true],
    ["/a/b", "/a/b/c/d.txt", true],
    ["/a/b", "/a/b/..c", true],
    ["/a/b", "/a/bc", false],
    ["/a/b", "/a/bc/d", false],
    ["/a/b", "/a", false],
    ["/a/b", "/a/b/..", false],
    ["/a/b", "/a/b/../c", false],
    ["/a/b", "/a/b/c/../../bc", false],
    ["/a/b/", "/a/b", true],
    ["/a/b", "/a/b/", true],
    ["/a/b//", "/a/b//c/", true],
    ["/", "/etc", true],
    ["/", "/", true]
  ])("%s holds %s: %s", (root, target, inside) => {
    expect(isInside(root, target, posix)).toBe(inside)
  })

  it("never holds a relative path, nor anything under a relative root", () => {
    expect(isInside("/a/b", "c", posix)).toBe(false)
    expect(isInside("/a/b", "", posix)).toBe(false)
    expect(isInside("a/b", "a/b/c", posix)).toBe(false)
    expect(isInside(".", ".", posix)).toBe(false)
  })

  it("compares case only where the rules say", () => {
    expect(isInside("/Users/me/Project", "/users/me/project/x", posix)).toBe(false)
    expect(isInside("/Users/me/Project", "/users/me/project/x", rulesOf("darwin"))).toBe(true)
    expect(isInside("/Users/me/Project", "/users/me/projects", rulesOf("darwin"))).toBe(false)
  })

  it("reads Windows paths: either separator, any case, another drive outside", () => {
    const win = rulesOf("win32")
    expect(isInside("C:\\Proj\\Site", "c:/proj/site/src", win)).toBe(true)
    expect(isInside("C:\\Proj\\Site", "C:\\Proj\\Site", win)).toBe(true)
    expect(isInside("C:\\Proj\\Site", "C:\\Proj\\Sites", win)).toBe(false)
    expect(isInside("C:\\Proj\\Site", "D:\\Proj\\Site", win)).toBe(false)
    expect(isInside("C:\\Proj", "\\Proj\\x", win)).toBe(false)
    expect(isInside("\\\\server\\share", "\\\\server\\share\\x", win)).toBe(true)
  })
})

describe("samePath", () => {
  it("is equality once normalized, by the rules' case", () => {
    expect(samePath("/a/b", "/a/b/", posix)).toBe(true)
    expect(samePath("/a/b", "/a/b/c/..", posix)).toBe(true)
    expect(samePath("/a/b", "/a/bc", posix)).toBe(false)
    expect(samePath("/a/b", "/A/B", posix)).toBe(false)
    expect(samePath("/a/b", "/A/B", rulesOf("darwin"))).toBe(true)
    expect(samePath("a", "a", posix)).toBe(false)
  })
})
