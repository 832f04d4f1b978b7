/**
 * Versions — every place the release version lives, read and written: the root package.json (the release version
 * itself), each workspace's package.json and the extension's source manifest; and any source file that spells the
 * release version out as a string literal, which is always wrong (code reads its package.json, `with { type: "json" }`).
 * Writing touches only the JSON files, and the lock's copies of the workspace versions so `npm install` has nothing
 * to rewrite; a literal is only found and reported. The commands are check-version.ts and set-version.ts.
 */
import { readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"

export const MANIFEST = "apps/extension/static/manifest.json"

/** Where code lives: a string literal equal to the release version there is one that will go stale. */
const SOURCE_ROOTS = ["libs", "apps"]
const SOURCE_FILE = /\.(ts|tsx)$/
const TEST_FILE = /\.test\.tsx?$/

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

/** Source files under `<project>/src/` (tests excluded: their fixtures may name any version). */
const sourceFiles = async (root: string): Promise<ReadonlyArray<string>> => {
  const files: Array<string> = []
  for (const top of SOURCE_ROOTS) {
    for (const project of await readdir(path.join(root, top)).catch(() => [])) {
      const src = path.join(top, project, "src")
      const entries = await readdir(path.join(root, src), { recursive: true }).catch(() => [])
      for (const entry of entries.map(String)) {
        if (SOURCE_FILE.test(entry) && !TEST_FILE.test(entry)) files.push(path.join(src, entry))
      }
    }
  }
  return files
}

/** Each source file that spells `version` out as a string literal instead of reading its package.json. */
const literalSites = async (root: string, version: string): Promise<ReadonlyArray<VersionSite>> => {
  const spelled = new RegExp(`["'\`]${version.replaceAll(".", "\\.")}["'\`]`)
  const sites: Array<VersionSite> = []
  for (const file of await sourceFiles(root)) {
    const text = await readFile(path.join(root, file), "utf8")
    if (spelled.test(text)) sites.push({ file: file.split(path.sep).join("/"), kind: "literal", version: undefined })
  }
  return sites
}

/** Every version site of the workspace at `root`, the root package.json first. */
export const readSites = async (root: string): Promise<ReadonlyArray<VersionSite>> => {
  const sites: Array<VersionSite> = []
  for (const dir of ["", ...(await workspaceDirs(root))]) {
    const file = dir === "" ? "package.json" : `${dir}/package.json`
    sites.push({ file, kind: "package", version: versionOf(await readJson(root, file)) })
  }
  sites.push({ file: MANIFEST, kind: "manifest", version: versionOf(await readJson(root, MANIFEST)) })
  const release = sites[0]?.version
  if (release !== undefined) sites.push(...(await literalSites(root, release)))
  return sites
}

/** The sites whose version is not the root package.json's (the release version), and every code literal. */
export const mismatches = (sites: ReadonlyArray<VersionSite>): ReadonlyArray<VersionSite> => {
  const release = sites[0]?.version
  return sites.filter((site) => site.kind === "literal" || site.version === undefined || site.version !== release)
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
