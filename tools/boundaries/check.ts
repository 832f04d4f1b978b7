// Boundary check: owns the import rules between Pedelec workspace projects (platform, lib/app layering, the
// contracts node split, Core's internals only in the apps that run Core, declared workspace deps), package.json
// hygiene (Nx tags, banned Effect 3 packages), and no product function over 100 lines (function-length.ts).
// It uses the TypeScript parser only, so it needs no ESLint and runs the same in CI, in Nx and in its own tests.

import { realpathSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import { builtinModules } from "node:module"
import path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { CATALOG_FILE, readCatalogCodes, redefinedCodes } from "./error-codes.ts"
import { longFunctions, MAX_FUNCTION_LINES } from "./function-length.ts"

export type RuleId =
  | "browser-imports-node"
  | "browser-effect-barrel"
  | "lib-imports-app"
  | "app-imports-app"
  | "core-internals"
  | "contracts-imports"
  | "relative-escape"
  | "undeclared-dependency"
  | "banned-package"
  | "project-tags"
  | "error-code-redefined"
  | "function-too-long"

export interface Violation {
  readonly file: string
  readonly specifier: string
  readonly rule: RuleId
  readonly message: string
}

export interface BoundaryReport {
  readonly violations: ReadonlyArray<Violation>
  readonly projects: number
  readonly files: number
}

interface Project {
  readonly dir: string
  readonly rel: string
  readonly name: string
  readonly type: string | undefined
  readonly platform: string | undefined
  readonly deps: ReadonlySet<string>
}

/** `scripts/`, `bench/` and `conformance/` are Node-run (builds, benchmarks, live suites) even in browser projects. */
type Zone = "src" | "test" | "scripts" | "bench" | "conformance"
type Json = Record<string, unknown>

const ZONES: ReadonlyArray<Zone> = ["src", "test", "scripts", "bench", "conformance"]
const PROJECT_PARENTS = ["libs", "apps"]
const SKIPPED_DIRS = new Set(["node_modules", "dist"])
const SOURCE_FILE = /\.(ts|tsx|mts)$/
const SCOPE = "@pedelec/"
const BUNDLED_PLATFORMS = new Set(["platform:browser", "platform:neutral"])
const CONTRACTS = "@pedelec/contracts"
const DECLARING_FIELDS = ["dependencies", "devDependencies"]
const DEP_FIELDS = [...DECLARING_FIELDS, "peerDependencies", "optionalDependencies"]
const BANNED = new Set(["@effect/schema", "@effect/rpc"])
const CORE = "@pedelec/core"
/** The apps that run Core itself; every other app is a client and reaches Core through core-client. */
const CORE_HOSTS = new Set(["apps/core-daemon", "apps/desktop"])
const CONTRACTS_TEST_PACKAGES = new Set(["effect", "vitest", "@effect/vitest", "fast-check", "re2js", CONTRACTS])

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const isUnder = (parent: string, child: string): boolean => {
  const rel = path.relative(parent, child)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}
const hasPrefix = (spec: string, name: string): boolean => spec === name || spec.startsWith(`${name}/`)
const packageOf = (spec: string): string =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/")
const isBuiltin = (spec: string): boolean => spec.startsWith("node:") || builtinModules.includes(spec)
const isRelative = (spec: string): boolean => spec.startsWith(".") || spec.startsWith("/")
const isEffectRpc = (spec: string): boolean => hasPrefix(spec, "effect/rpc")

// undefined = no such file; a string = what is wrong with it.
const readJson = async (file: string): Promise<Json | string | undefined> => {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, "utf8"))
    return isRecord(parsed) ? parsed : "is not a JSON object"
  } catch (error) {
    if (isRecord(error) && error.code === "ENOENT") return undefined
    return `cannot be read as JSON (${error instanceof Error ? error.message : String(error)})`
  }
}

// Folders come and go while people work, so a missing directory is just empty.
const listDir = async (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => [])

const walk = async (dir: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for (const entry of await listDir(dir)) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) out.push(...(await walk(full)))
    else if (entry.isFile() && SOURCE_FILE.test(entry.name)) out.push(full)
  }
  return out
}

const checkManifest = (rel: string, json: Json): Array<Violation> => {
  const file = path.posix.join(rel, "package.json")
  return DEP_FIELDS.flatMap((field) => {
    const deps = json[field]
    return isRecord(deps)
      ? Object.keys(deps)
          .filter((name) => BANNED.has(name))
          .map((name) => ({
            file,
            specifier: name,
            rule: "banned-package" as const,
            message: `"${name}" in ${field} is an Effect 3 package; Schema is in "effect" (import "effect/Schema") and RPC is "effect/rpc" — remove it`
          }))
      : []
  })
}

const toProject = (root: string, rel: string, json: Json): { project: Project; problems: Array<string> } => {
  const problems: Array<string> = []
  const nx = isRecord(json.nx) ? json.nx : {}
  const tags = Array.isArray(nx.tags) ? nx.tags.filter((t): t is string => typeof t === "string") : []
  const types = tags.filter((t) => t.startsWith("type:"))
  const platforms = tags.filter((t) => t.startsWith("platform:"))
  if (typeof nx.name !== "string" || nx.name === "") problems.push(`set an explicit "nx": { "name": "<short>" }`)
  if (types.length !== 1) problems.push(`nx.tags needs exactly one "type:*" tag (has ${types.length}), e.g. "type:lib"`)
  if (platforms.length !== 1)
    problems.push(`nx.tags needs exactly one "platform:*" tag (has ${platforms.length}), e.g. "platform:node"`)
  if (typeof json.name !== "string") problems.push(`set "name": "${SCOPE}${path.basename(rel)}"`)
  const deps = DECLARING_FIELDS.flatMap((f) => (isRecord(json[f]) ? Object.keys(json[f]) : []))
  const project: Project = {
    dir: path.join(root, rel),
    rel,
    name: typeof json.name === "string" ? json.name : `(unnamed ${rel})`,
    type: types.length === 1 ? types[0] : undefined,
    platform: platforms.length === 1 ? platforms[0] : undefined,
    deps: new Set(deps)
  }
  return { project, problems }
}

const discover = async (root: string) => {
  const rels = ["tools"]
  for (const parent of PROJECT_PARENTS) {
    for (const entry of await listDir(path.join(root, parent))) {
      if (entry.isDirectory()) rels.push(path.posix.join(parent, entry.name))
    }
  }
  const projects: Array<Project> = []
  const violations: Array<Violation> = []
  for (const rel of rels.sort()) {
    const file = path.posix.join(rel, "package.json")
    const json = await readJson(path.join(root, file))
    // A folder without package.json is not a project (yet); a broken one is a problem.
    if (json === undefined) continue
    if (typeof json === "string") {
      violations.push({ file, specifier: "", rule: "project-tags", message: `${file} ${json}; fix the JSON` })
      continue
    }
    const { project, problems } = toProject(root, rel, json)
    projects.push(project)
    violations.push(...checkManifest(rel, json))
    for (const problem of problems) violations.push({ file, specifier: "", rule: "project-tags", message: problem })
  }
  return { projects, violations }
}

interface ImportSite {
  readonly projects: ReadonlyArray<Project>
  readonly project: Project
  readonly file: string
  readonly zone: Zone
}

type Finding = readonly [RuleId, string]
const SCRIPTS_HINT = "; if this is Node-run build code, put it in scripts/"
const SHARE_VIA_LIB = "move the shared code into a lib that both depend on"

const relativeFindings = ({ projects, project, file, zone }: ImportSite, spec: string): Array<Finding> => {
  const target = path.resolve(path.dirname(file), spec)
  const nodeDir = path.join(project.dir, "src", "node")
  if (!isUnder(project.dir, target)) {
    const owner = projects.find((p) => isUnder(p.dir, target))
    const instead = owner ? `import "${owner.name}/..." and declare it in dependencies` : "move the file into it"
    return [["relative-escape", `relative import leaves ${project.rel}/; ${instead}`]]
  }
  const browserFacing = project.name === CONTRACTS && zone === "src" && !isUnder(nodeDir, file)
  return browserFacing && isUnder(nodeDir, target)
    ? [["contracts-imports", "browser-facing contracts code imports src/node/; move this file under src/node/"]]
    : []
}

// Contracts src has an allow-list, so whatever it rejects needs no further rule.
const contractsSrcFinding = (site: ImportSite, spec: string, target: Project | undefined): Finding | undefined => {
  const nodeOnly = spec === "re2js" || isEffectRpc(spec)
  if (nodeOnly && isUnder(path.join(site.project.dir, "src", "node"), site.file)) return undefined
  if (nodeOnly)
    return ["contracts-imports", `"${spec}" is node-only; move this file under src/node/ (${CONTRACTS}/node/*)`]
  if (target === site.project)
    return ["contracts-imports", "contracts must not import itself by name; use a relative .ts import"]
  if (spec === "effect" || spec.startsWith("effect/")) return undefined
  return ["contracts-imports", `contracts src may import only effect/* module paths and relative files; drop "${spec}"`]
}

const browserMessage = (spec: string, target: Project | undefined): string | undefined => {
  if (target?.platform === "platform:node")
    return `browser code imports node project ${target.name}; share the code via ${CONTRACTS} or a browser/neutral lib`
  if (isBuiltin(spec)) return `Node builtin "${spec}" does not exist in the browser; use a web API${SCRIPTS_HINT}`
  if (hasPrefix(spec, `${CONTRACTS}/node`))
    return `${CONTRACTS}/node/* is node-only; import a browser-facing ${CONTRACTS}/<Module> instead`
  if (isEffectRpc(spec))
    return "effect/rpc is too big for a browser bundle (SPEC); keep RPC on the node side, send plain contracts messages"
  if (spec.startsWith("@effect/platform-node"))
    return `"${spec}" is Node-only; use effect/* modules or web APIs${SCRIPTS_HINT}`
  return undefined
}

const workspaceFindings = ({ projects, project }: ImportSite, spec: string, target: Project | undefined) => {
  const findings: Array<Finding> = []
  if (!target && spec.startsWith(SCOPE)) {
    const known = projects.map((p) => p.name).join(", ")
    findings.push(["undeclared-dependency", `no workspace project is named ${packageOf(spec)}; use one of: ${known}`])
  }
  if (!target || target === project) return findings
  if (!project.deps.has(target.name)) {
    const fix = `add "${target.name}": "*" to dependencies in ${project.rel}/package.json`
    findings.push(["undeclared-dependency", `${target.name} is not a declared dependency; ${fix}`])
  }
  if (project.type === "type:lib" && target.type === "type:app")
    findings.push(["lib-imports-app", `lib imports app ${target.name}; ${SHARE_VIA_LIB}`])
  if (project.type === "type:app" && target.type === "type:app")
    findings.push(["app-imports-app", `apps must not import each other (${target.name}); ${SHARE_VIA_LIB}`])
  if (target.name === CORE && project.rel.startsWith("apps/") && !CORE_HOSTS.has(project.rel))
    findings.push([
      "core-internals",
      `only ${[...CORE_HOSTS].join(" and ")} run Core; reach it through @pedelec/core-client (paths, run/core.json, connectHost/connectAgent, findOrStart)`
    ])
  return findings
}

/** A package's own subpath import (`#name`, declared in its package.json `imports`): a file of the same project. */
const isSubpathImport = (spec: string): boolean => spec.startsWith("#")

const checkImport = (site: ImportSite, spec: string): Array<Finding> => {
  if (isRelative(spec)) return relativeFindings(site, spec)
  if (isSubpathImport(spec)) return []
  const { project, zone } = site
  const target = site.projects.filter((p) => hasPrefix(spec, p.name)).sort((a, b) => b.name.length - a.name.length)[0]
  const isContracts = project.name === CONTRACTS
  const findings: Array<Finding> = []
  if (isContracts && zone === "src") {
    const finding = contractsSrcFinding(site, spec, target)
    if (finding) return [finding]
  }
  if (isContracts && zone === "test" && !isBuiltin(spec) && !CONTRACTS_TEST_PACKAGES.has(packageOf(spec))) {
    const allowed = "effect, vitest, @effect/vitest, fast-check, re2js, node builtins and contracts itself"
    findings.push(["contracts-imports", `contracts tests may import only ${allowed}; drop "${spec}"`])
  }
  // Only src/ and test/ of a browser project must stay browser-safe.
  const browserSafe = project.platform === "platform:browser" && (zone === "src" || zone === "test")
  const nodeMessage = browserSafe ? browserMessage(spec, target === project ? undefined : target) : undefined
  if (nodeMessage) findings.push(["browser-imports-node", nodeMessage])
  if (BUNDLED_PLATFORMS.has(project.platform ?? "") && zone === "src" && spec === "effect") {
    const instead = `import module paths such as "effect/Schema" or "effect/Effect"`
    findings.push(["browser-effect-barrel", `the "effect" barrel quadruples the bundle; ${instead}`])
  }
  return [...findings, ...workspaceFindings(site, spec, target)]
}

const tooLong = (rel: string, text: string): Array<Violation> =>
  longFunctions(rel, text).map(({ line, lines }) => ({
    file: rel,
    specifier: `line ${line}`,
    rule: "function-too-long" as const,
    message: `a function of ${lines} lines (at most ${MAX_FUNCTION_LINES}): lift its parts into module-level functions that take their state explicitly`
  }))

export const runBoundaryCheck = async (workspaceRoot: string): Promise<BoundaryReport> => {
  const root = path.resolve(workspaceRoot)
  const rootJson = await readJson(path.join(root, "package.json"))
  if (typeof rootJson !== "object")
    throw new Error(`${root}/package.json ${rootJson ?? "is missing"}; is ${root} the workspace root?`)
  const { projects, violations } = await discover(root)
  violations.push(...checkManifest("", rootJson))
  const codes = await readCatalogCodes(root)
  let files = 0
  for (const project of projects) {
    for (const zone of ZONES) {
      for (const file of await walk(path.join(project.dir, zone))) {
        const text = await readFile(file, "utf8").catch(() => undefined)
        if (text === undefined) continue
        files++
        const rel = path.relative(root, file).split(path.sep).join("/")
        if (project.name !== CONTRACTS && zone === "src") {
          for (const code of redefinedCodes(text, codes)) {
            const message = `error code ${code} is defined in ${CATALOG_FILE}; import it from ${CONTRACTS}/ErrorCode instead of defining it again`
            violations.push({ file: rel, specifier: code, rule: "error-code-redefined", message })
          }
        }
        if (zone === "src") violations.push(...tooLong(rel, text))
        for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
          for (const [rule, message] of checkImport({ projects, project, file, zone }, specifier))
            violations.push({ file: rel, specifier, rule, message })
        }
      }
    }
  }
  const sorted = violations.sort((a, b) => a.file.localeCompare(b.file) || a.specifier.localeCompare(b.specifier))
  return { violations: sorted, projects: projects.length, files }
}

export const checkBoundaries = async (workspaceRoot: string): Promise<ReadonlyArray<Violation>> =>
  (await runBoundaryCheck(workspaceRoot)).violations

// realpath on both sides because tsx, npm scripts and symlinked node_modules each spell the path differently.
const isMain = (): boolean => {
  const script = process.argv[1]
  try {
    return script !== undefined && realpathSync(path.resolve(script)) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isMain()) {
  const root = path.resolve(process.argv[2] ?? ".")
  const report = await runBoundaryCheck(root)
  for (const v of report.violations)
    console.error(`${v.file}: [${v.rule}] ${v.specifier ? `"${v.specifier}" ` : ""}${v.message}`)
  if (report.violations.length > 0) {
    console.error(`boundaries: ${report.violations.length} violation(s) in ${report.projects} projects`)
    process.exitCode = 1
  } else {
    console.log(`boundaries OK: ${report.projects} projects, ${report.files} files checked`)
  }
}
