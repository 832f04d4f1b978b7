// Lock check: owns whether package-lock.json records what every workspace package.json (the root's too) declares:
// its name, its `bin` entries and the names and specs of its dependencies, devDependencies, optionalDependencies and
// peerDependencies. `npm ci` installs from the lock alone, so a bin or a dependency the lock lacks is silently missing
// on a clean clone (a missing `bin` is a missing node_modules/.bin link). It does not check what is inside
// node_modules, nor the versions the lock resolved (npm ci refuses a lock whose resolutions do not satisfy the specs).
//
// Usage: tsx tools/setup/lock-check.ts [workspace root]; exit 1 with one line per difference. Part of `npm test`.

import { existsSync, readdirSync, readFileSync } from "node:fs"
import path from "node:path"

type Manifest = Readonly<Record<string, unknown>>

const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] as const

const readJson = (file: string): Manifest => JSON.parse(readFileSync(file, "utf8")) as Manifest

const asRecord = (value: unknown): Readonly<Record<string, string>> =>
  typeof value === "object" && value !== null ? (value as Record<string, string>) : {}

/** The workspace folders, relative to the root, from the root's `workspaces` ("dir" or "dir/*" globs only). */
const workspaceDirs = (root: string, rootManifest: Manifest): ReadonlyArray<string> => {
  const globs = Array.isArray(rootManifest.workspaces) ? (rootManifest.workspaces as ReadonlyArray<string>) : []
  return globs.flatMap((glob) => {
    if (!glob.endsWith("/*")) return [glob]
    const parent = glob.slice(0, -2)
    return readdirSync(path.join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(root, parent, entry.name, "package.json")))
      .map((entry) => `${parent}/${entry.name}`)
  })
}

/** `bin` as npm records it in the lock: a string becomes { unscoped name: path }, and a leading "./" goes. */
const normalBin = (manifest: Manifest): Readonly<Record<string, string>> => {
  const bin = manifest.bin
  const name = typeof manifest.name === "string" ? manifest.name.replace(/^@[^/]+\//, "") : ""
  const entries = typeof bin === "string" ? [[name, bin] as const] : Object.entries(asRecord(bin))
  return Object.fromEntries(entries.map(([key, file]) => [key, String(file).replace(/^\.\//, "")]))
}

/** One line per entry of `declared` the lock's `recorded` lacks or records with another value, and per extra one. */
const recordDrift = (
  where: string,
  field: string,
  declared: Readonly<Record<string, string>>,
  recorded: Readonly<Record<string, string>>
): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const [key, value] of Object.entries(declared)) {
    if (!(key in recorded)) lines.push(`${where}: ${field} "${key}" (${value}) is not in package-lock.json`)
    else if (recorded[key] !== value) {
      lines.push(`${where}: ${field} "${key}" is ${value} but package-lock.json records ${recorded[key]}`)
    }
  }
  for (const key of Object.keys(recorded)) {
    if (!(key in declared)) lines.push(`${where}: ${field} "${key}" is in package-lock.json but not in package.json`)
  }
  return lines
}

/** Every difference between one workspace's package.json and its entry in the lock. */
const workspaceDrift = (dir: string, manifest: Manifest, entry: Manifest | undefined): ReadonlyArray<string> => {
  const where = `${dir === "" ? "" : `${dir}/`}package.json (${String(manifest.name)})`
  if (entry === undefined) return [`${where}: package-lock.json has no entry for "${dir}"`]
  const lines: Array<string> = []
  if (dir !== "" && entry.name !== manifest.name) {
    lines.push(`${where}: name is ${String(manifest.name)} but package-lock.json records ${String(entry.name)}`)
  }
  lines.push(...recordDrift(where, "bin", normalBin(manifest), asRecord(entry.bin)))
  for (const field of DEPENDENCY_FIELDS) {
    lines.push(...recordDrift(where, field, asRecord(manifest[field]), asRecord(entry[field])))
  }
  return lines
}

/** Every difference between the workspace package.json files under `root` and its package-lock.json. */
const lockDrift = (root: string): ReadonlyArray<string> => {
  const rootManifest = readJson(path.join(root, "package.json"))
  const lockPackages = readJson(path.join(root, "package-lock.json")).packages as Record<string, Manifest> | undefined
  const packages = lockPackages ?? {}
  return ["", ...workspaceDirs(root, rootManifest)].flatMap((dir) =>
    workspaceDrift(dir, dir === "" ? rootManifest : readJson(path.join(root, dir, "package.json")), packages[dir])
  )
}

const main = () => {
  const root = path.resolve(process.argv[2] ?? ".")
  const drift = lockDrift(root)
  if (drift.length === 0) return
  console.error("lock check: package-lock.json does not record what these package.json files declare:")
  for (const line of drift) console.error(`  ${line}`)
  console.error("Run `npm install` (it rewrites package-lock.json to match), then commit package-lock.json.")
  process.exitCode = 1
}

main()
