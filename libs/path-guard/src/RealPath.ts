/**
 * RealPath — the disk half of the containment check: where a path given relative to a folder really leads, symlinks
 * followed, and whether that is still inside the folder's real path. A path that does not exist (yet) is judged by
 * the deepest part of it that does, and a dangling symlink on the way is refused, since a later write would follow
 * it. It does not say whether the caller may use what is there (a file, a folder): callers decide, and word the
 * refusals for their users.
 */
import { lstat, realpath } from "node:fs/promises"
import path from "node:path"
import { isInside } from "./Inside.ts"

/** Why a relative path was refused: before the disk (`nul`, `absolute`, `climbs`) or by it. */
export type Refusal = "nul" | "absolute" | "climbs" | "outside" | "dangling"

export type Resolved =
  | {
      readonly _tag: "Inside"
      /** The real path of the deepest existing part, with the parts that do not exist appended. */
      readonly path: string
      readonly exists: boolean
    }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

/** The rules that need no disk: no NUL byte, not absolute, no `..` segment once normalized. */
export const lexicalRefusal = (relative: string): "nul" | "absolute" | "climbs" | undefined => {
  if (relative.includes("\0")) return "nul"
  if (path.isAbsolute(relative)) return "absolute"
  return path.normalize(relative).split(path.sep).includes("..") ? "climbs" : undefined
}

const errnoOf = (error: unknown) => (error as { code?: unknown }).code

/**
 * Resolves `relative` (`""` is the folder itself) inside `root`. Errors other than "not there" (EACCES, ELOOP, a
 * missing `root`) are thrown as the file system raised them.
 */
export const resolveInside = async (root: string, relative: string): Promise<Resolved> => {
  const lexical = lexicalRefusal(relative)
  if (lexical !== undefined) return { _tag: "Refused", refusal: lexical }
  const realRoot = await realpath(root)
  const target = path.join(realRoot, path.normalize(relative === "" ? "." : relative))
  let existing = target
  for (;;) {
    const real = await realpath(existing).catch((error: unknown) => {
      const code = errnoOf(error)
      if (code === "ENOENT" || code === "ENOTDIR") return undefined
      throw error
    })
    if (real !== undefined) {
      if (!isInside(realRoot, real)) return { _tag: "Refused", refusal: "outside" }
      const exists = existing === target
      return { _tag: "Inside", path: exists ? real : path.join(real, path.relative(existing, target)), exists }
    }
    const link = await lstat(existing).catch(() => undefined)
    if (link?.isSymbolicLink()) return { _tag: "Refused", refusal: "dangling" }
    existing = path.dirname(existing)
  }
}
