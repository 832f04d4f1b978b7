/**
 * Versions — every place the release version lives, read and written: the root package.json (the release version
 * itself), each workspace's package.json, the extension's source manifest, and the few code literals that do not
 * yet read their package.json (LITERAL_SITES). Code that imports its package.json (`with { type: "json" }`) needs
 * no entry. Writing touches only the JSON files, and the lock's copies of the workspace versions so `npm install`
 * has nothing to rewrite; a literal is only read and reported. The commands are check-version.ts and set-version.ts.
 */
import { readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"

export const MANIFEST = "apps/extension/static/manifest.json"

/**
 * Code that still spells the version out. Each should read its package.json instead (then drop its entry); until
 * then the check compares it and names it. A file without the literal any more is skipped.
 */
export const LITERAL_SITES: ReadonlyArray<{ readonly file: string; readonly name: string }> = [
  { file: "libs/sdk/src/page/ExtensionLink.ts", name: "SDK_VERSION" },
  { file: "apps/desktop/src/main/DesktopConfig.ts", name: "APP_VERSION" }
]

export interface VersionSite {
  /** Relative to the workspace root, `/`-separated. */
  readonly file: string
  readonly kind: "package" | "manifest" | "literal"
  /** Undefined when the file has no version at all. */
  readonly version: string | undefined
}

/** Chrome's manifest takes one to four integers of 0–65535; a release is exactly three, without leading zeros. */
export const isReleaseVersion = (version: string): boolean =>
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.test(version) &&
  version.split(".").every((part) => Number(part) <= 65535)

const readJson = async (root: string, file: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(path.join(root, file), "utf8")) as Record<string, unknown>

const versionOf = (json: Record<string, unknown>) => (typeof json.version === "string" ? json.version : undefined)

/** The workspace folders of the root package.json, `libs/*` style patterns expanded to folders with a package.json. */
export const workspaceDirs = async (root: string): Promise<ReadonlyArray<string>> => {
  const patterns = (await readJson(root, "package.json")).workspaces
  if (!Array.isArray(patterns)) return []
  const dirs: Array<string> = []
  for (const pattern of patterns.map(String)) {
    if (!pattern.endsWith("/*")) {
      dirs.push(pattern)
      continue
    }
    const parent = pattern.slice(0, -2)
    const entries = await readdir(path.join(root, parent), { withFileTypes: true }).catch(() => [])
    for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(root, parent, entry.name, "package.json")
      if (
        await readFile(file).then(
          () => true,
          () => false
        )
      )
        dirs.push(`${parent}/${entry.name}`)
    }
  }
  return dirs
}

/** `NAME = "x.y.z"` in a literal site's file, or undefined when the file or the literal is gone. */
const literalVersion = async (root: string, file: string, name: string): Promise<string | undefined> => {
  const text = await readFile(path.join(root, file), "utf8").catch(() => "")
  return new RegExp(`\\b${name}\\s*(?::\\s*string\\s*)?=\\s*"([^"]*)"`).exec(text)?.[1]
}

/** Every version site of the workspace at `root`, the root package.json first. */
export const readSites = async (root: string): Promise<ReadonlyArray<VersionSite>> => {
  const sites: Array<VersionSite> = []
  for (const dir of ["", ...(await workspaceDirs(root))]) {
    const file = dir === "" ? "package.json" : `${dir}/package.json`
    sites.push({ file, kind: "package", version: versionOf(await readJson(root, file)) })
  }
  sites.push({ file: MANIFEST, kind: "manifest", version: versionOf(await readJson(root, MANIFEST)) })
  for (const { file, name } of LITERAL_SITES) {
    const version = await literalVersion(root, file, name)
    if (version !== undefined) sites.push({ file: `${file} (${name})`, kind: "literal", version })
  }
  return sites
}

/** The sites whose version is not the root package.json's (the release version). */
export const mismatches = (sites: ReadonlyArray<VersionSite>): ReadonlyArray<VersionSite> => {
  const release = sites[0]?.version
  return sites.filter((site) => site.version === undefined || site.version !== release)
}

/** Replaces the top-level `"version"` (two-space indented) and keeps the rest of the file as it was. */
const setJsonVersion = async (root: string, file: string, version: string) => {
  const full = path.join(root, file)
  const text = await readFile(full, "utf8")
  const field = /^ {2}"version": "[^"]*"/m
  if (!field.test(text)) throw new Error(`${file} has no top-level "version"; add "version": "${version}" to it.`)
  await writeFile(full, text.replace(field, `  "version": "${version}"`))
}

/** `entry` with `version` set, as npm orders it: name, version, then the rest as they were. */
const withVersion = (entry: Record<string, unknown>, version: string): Record<string, unknown> =>
  Object.fromEntries([
    ["name", entry.name],
    ["version", version],
    ...Object.entries(entry).filter(([key]) => key !== "name" && key !== "version")
  ])

/** The lock's copies: its root entry and each workspace entry (npm writes the lock as 2-space JSON, so this does). */
const setLockVersions = async (root: string, dirs: ReadonlyArray<string>, version: string) => {
  const lock = await readJson(root, "package-lock.json").catch(() => undefined)
  if (lock === undefined) return false
  const packages = (lock.packages ?? {}) as Record<string, Record<string, unknown>>
  for (const key of ["", ...dirs]) {
    const entry = packages[key]
    if (entry !== undefined) packages[key] = withVersion(entry, version)
  }
  await writeFile(path.join(root, "package-lock.json"), `${JSON.stringify(withVersion(lock, version), null, 2)}\n`)
  return true
}

/** Sets `version` in every package.json, the manifest and the lock; returns the files it wrote. */
export const setVersion = async (root: string, version: string): Promise<ReadonlyArray<string>> => {
  if (!isReleaseVersion(version))
    throw new Error(
      `"${version}" is not a release version: give three numbers such as 0.2.0 (Chrome's manifest takes no suffix).`
    )
  const dirs = await workspaceDirs(root)
  const files = ["package.json", ...dirs.map((dir) => `${dir}/package.json`), MANIFEST]
  for (const file of files) await setJsonVersion(root, file, version)
  return (await setLockVersions(root, dirs, version)) ? [...files, "package-lock.json"] : files
}
