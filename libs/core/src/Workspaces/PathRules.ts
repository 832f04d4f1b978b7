/**
 * Workspaces/PathRules — the rules of SPEC §6 an explicit `workspace.path` must pass that need no disk: absolute,
 * normalized, not a system root or a home directory, clear of the Pedelec home and the managed root, by the
 * platform's spelling and case rules (a parameter, so Windows and macOS rules are testable anywhere). The disk rules
 * (exists, a directory, no symlink) are Workspaces'.
 */
import path from "node:path"
import { isInside, rulesOf } from "@pedelec/path-guard/Inside"

/** Which rule of SPEC §6 a path broke; the `rule` detail of `WORKSPACE_PATH_INVALID`. */
export const WORKSPACE_RULES = [
  "absolute",
  "normalized",
  "system-root",
  "home-directory",
  "pedelec-home",
  "managed-root",
  "exists",
  "directory",
  "no-symlink"
] as const

export interface RuleViolation {
  readonly rule: (typeof WORKSPACE_RULES)[number]
  readonly reason: string
}

/** What the textual rules compare against; a parameter so Windows and macOS rules are testable anywhere. */
export interface PathContext {
  readonly platform: NodeJS.Platform
  readonly homedir: string
  /** The home as configured and as resolved: a home behind a symlink must not be reachable by its real name. */
  readonly pedelecHomes: ReadonlyArray<string>
  readonly managedRoots: ReadonlyArray<string>
}

// Exact matches only: `/opt/project` is fine, `/opt` is not. macOS spellings included (`/private/...`, `/Users`).
const POSIX_ROOTS = [
  "/",
  "/usr",
  "/etc",
  "/var",
  "/tmp",
  "/opt",
  "/bin",
  "/sbin",
  "/home",
  "/root",
  "/dev",
  "/proc",
  "/sys",
  "/boot",
  "/run",
  "/system",
  "/applications",
  "/library",
  "/users",
  "/volumes",
  "/private",
  "/private/tmp",
  "/private/var",
  "/private/etc"
]
const POSIX_ROOT_PATTERN = /^\/lib[^/]*$/
const WINDOWS_ROOT_PATTERN = /^[a-z]:\\(windows|program files[^\\]*|programdata|users)?$/i
const USER_HOME_PATTERN = { posix: /^\/(home|Users)\/[^/]+$/, win32: /^[a-z]:\\users\\[^\\]+$/i }

/**
 * The rules that need no disk: absolute, normalized (no `.`, `..` or empty segment; one trailing separator is
 * dropped), not a system root or home directory, clear of the Pedelec home and the managed root. Returns the
 * canonical spelling the disk rules then check.
 */
export const pathRuleViolation = (
  candidate: string,
  context: PathContext
): { readonly canonical: string; readonly violation: RuleViolation | undefined } => {
  const win = context.platform === "win32"
  const paths = win ? path.win32 : path.posix
  // Windows and (by default) macOS file systems ignore case, so `/USR` is `/usr` there.
  const rules = rulesOf(context.platform)
  const fold = (text: string) => (rules.ignoreCase ? text.toLowerCase() : text)
  const within = (parent: string, child: string) => isInside(parent, child, rules)
  const fail = (rule: RuleViolation["rule"], reason: string) => ({ canonical: candidate, violation: { rule, reason } })
  if (candidate.length === 0 || candidate.length > 4096 || candidate.includes("\0"))
    return fail("absolute", "it is empty, longer than 4096 characters or contains a NUL character")
  const root = win ? /^[A-Za-z]:[\\/]/.exec(candidate)?.[0] : candidate.startsWith("/") ? "/" : undefined
  if (root === undefined)
    return fail("absolute", win ? "it is not an absolute drive path (C:\\...)" : "it is not absolute")
  const segments = candidate.slice(root.length).split(win ? /[\\/]/ : "/")
  if (segments.at(-1) === "") segments.pop()
  if (segments.some((segment) => segment === "" || segment === "." || segment === ".."))
    return fail("normalized", "it contains `.`, `..` or an empty segment; pass the plain absolute path")
  const canonical = paths.join(root, ...segments)
  const found = (rule: RuleViolation["rule"], reason: string) => ({ canonical, violation: { rule, reason } })
  const folded = fold(canonical)
  if (folded === fold(paths.normalize(context.homedir))) return found("home-directory", "it is your home directory")
  // Compared case-insensitively on every platform: a Linux `/System` is no project folder either.
  const lower = canonical.toLowerCase()
  if (win ? WINDOWS_ROOT_PATTERN.test(canonical) : POSIX_ROOTS.includes(lower) || POSIX_ROOT_PATTERN.test(lower))
    return found("system-root", "it is a system directory")
  if ((win ? USER_HOME_PATTERN.win32 : USER_HOME_PATTERN.posix).test(canonical))
    return found("home-directory", "it is a user's home directory")
  if (within(canonical, context.homedir)) return found("home-directory", "it contains your home directory")
  const { pedelecHomes: homes, managedRoots: managed } = context
  if (homes.some((home) => fold(home) === folded)) return found("pedelec-home", "it is the Pedelec home")
  if (managed.some((root) => within(root, canonical)))
    return found("managed-root", "it is inside the managed workspaces folder")
  if (homes.some((home) => within(home, canonical))) return found("pedelec-home", "it is inside the Pedelec home")
  if (managed.some((root) => within(canonical, root)))
    return found("managed-root", "it contains the managed workspaces folder")
  if (homes.some((home) => within(canonical, home))) return found("pedelec-home", "it contains the Pedelec home")
  return { canonical, violation: undefined }
}
