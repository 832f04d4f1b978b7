/**
 * Inside — the lexical half of the containment check: whether one absolute path is a folder or lies under it, and
 * whether two spell the same place, by a platform's separators and case rules. It never asks the disk, so it means
 * something only for paths already resolved (real paths, or canonical ones whose every part was checked not to be a
 * link); `RealPath.resolveInside` resolves a path first. A path that is not absolute is never inside anything.
 */
import path from "node:path"

export interface PathRules {
  /** `win32` reads drive and UNC paths with either separator; any other platform reads POSIX paths. */
  readonly platform: NodeJS.Platform
  /** Whether `/A` and `/a` are one place. */
  readonly ignoreCase: boolean
}

/** Real paths as this machine spells them: the disk gave their case, so it is compared exactly. */
export const EXACT: PathRules = { platform: process.platform, ignoreCase: false }

/** The rules of a platform's usual file systems: Windows and (by default) macOS ignore case. */
export const rulesOf = (platform: NodeJS.Platform): PathRules => ({
  platform,
  ignoreCase: platform === "win32" || platform === "darwin"
})

const WIN32_RESOLVED = /^([A-Za-z]:[\\/]|[\\/]{2}[^\\/])/

/** Absolute and complete: a rooted Windows path without a drive depends on the current drive, so it is not. */
const isResolved = (candidate: string, rules: PathRules) =>
  rules.platform === "win32" ? WIN32_RESOLVED.test(candidate) : candidate.startsWith("/")

/** `target` relative to `root`, with `.`, `..` and repeated or trailing separators normalized away. */
const relativeTo = (root: string, target: string, rules: PathRules): string | undefined => {
  if (!isResolved(root, rules) || !isResolved(target, rules)) return undefined
  const fold = (text: string) => (rules.ignoreCase ? text.toLowerCase() : text)
  const paths = rules.platform === "win32" ? path.win32 : path.posix
  return paths.relative(fold(root), fold(target))
}

/**
 * `target` is `root` itself or under it: `/a/b` holds `/a/b/c` and `/a/b/`, not `/a/bc` nor `/a/b/../c`. A Windows
 * path on another drive is outside.
 */
export const isInside = (root: string, target: string, rules: PathRules = EXACT): boolean => {
  const relative = relativeTo(root, target, rules)
  if (relative === undefined) return false
  const paths = rules.platform === "win32" ? path.win32 : path.posix
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${paths.sep}`) && !paths.isAbsolute(relative))
}

/** `a` and `b` are the same place once normalized (`/a/b/` is `/a/b`). */
export const samePath = (a: string, b: string, rules: PathRules = EXACT): boolean => relativeTo(a, b, rules) === ""
