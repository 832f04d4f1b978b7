// The proof that @pedelec/sdk is a real npm package (run after `build`): the tarball `npm pack` makes holds only what
// a page needs, publint and attw find nothing wrong with it, and a fresh project outside the repository that installs
// it as a user does (effect from the registry, no workspace, no path mapping) type-checks a page using the whole
// public API strictly against the packed .d.ts, bundles it with Vite within the size budget, and imports both entries
// in Node as a server render does. Everything the repository's own tests use (source paths, the workspace's
// node_modules) is out of reach there, so what passes here is what users get. Lives in scripts/ because it runs Node.
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const sdkRoot = path.resolve(import.meta.dirname, "..")
const repoRoot = path.resolve(sdkRoot, "../..")
const fixture = path.join(import.meta.dirname, "package-fixture")
const earlierPage = path.join(repoRoot, "libs/chain/src/page/earlier.ts")
const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc")
const vite = path.join(repoRoot, "node_modules/vite/bin/vite.js")
const bin = (name: string) => path.join(repoRoot, "node_modules/.bin", name)
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"))
const sdkPackage = readJson(path.join(sdkRoot, "package.json"))
const effectVersion: string = readJson(path.join(repoRoot, "package.json")).dependencies.effect

/** What the budget allows beyond the SDK: the fixture page's own code (its strings, handlers, DOM calls, ~1.5 KB). */
const PAGE_ALLOWANCE_BYTES = 2048

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * The npm variables an `npm run` (Nx's `npm run test`) exports point at the workspace (`local_prefix`, `prefix`,
 * the package's fields): a child npm would act on the repository instead of the temp project. The machine's own
 * npm settings (cache, registry, CA file) stay.
 */
const WORKSPACE_NPM_VARS =
  /^(npm_config_(local_prefix|prefix|workspaces?|include_workspace_root|call)|npm_command|init_cwd)$|^npm_(package|lifecycle)_/i
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !WORKSPACE_NPM_VARS.test(key)))

/** Never rejects: a failing command is an assertion's business, with its output to show. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env = cleanEnv()): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 150_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr: error !== null && stderr === "" ? String(error) : stderr })
    })
  })

const node = (args: ReadonlyArray<string>, cwd: string) => run(process.execPath, args, cwd)
const shown = (ran: Ran) => `exit ${ran.code}\n${ran.stdout}\n${ran.stderr}`

const step = async <A>(name: string, body: () => Promise<A>): Promise<A> => {
  const started = performance.now()
  try {
    return await body()
  } finally {
    console.log(`[package] ${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
}

/** The tarball's entries by path (ustar: 512-byte headers, name and prefix fields, octal sizes). */
const tarEntries = (tarball: string): ReadonlyMap<string, Buffer> => {
  const tar = gunzipSync(readFileSync(tarball))
  const entries = new Map<string, Buffer>()
  const field = (at: number, length: number) => tar.toString("utf8", at, at + length).replace(/\0.*$/s, "")
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const size = Number.parseInt(field(at + 124, 12).trim() || "0", 8)
    const prefix = field(at + 345, 155)
    const name = `${prefix === "" ? "" : `${prefix}/`}${field(at, 100)}`
    if (tar[at + 156] === 0x30 || tar[at + 156] === 0) entries.set(name, tar.subarray(at + 512, at + 512 + size))
    at += 512 + Math.ceil(size / 512) * 512
  }
  return entries
}

const typescriptLib = path.join(repoRoot, "node_modules/typescript/lib")
const isUnder = (dir: string, file: string) => !path.relative(dir, path.resolve(project, file)).startsWith("..")

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

let packDir: string
let project: string
let tarball: string
let entries: ReadonlyMap<string, Buffer>

beforeAll(async () => {
  if (!existsSync(path.join(sdkRoot, "dist/index.js"))) {
    throw new Error("libs/sdk/dist/ is missing: run `npx nx run sdk:build` first (sdk:test depends on it)")
  }
  packDir = mkdtempSync(path.join(os.tmpdir(), "pedelec-sdk-pack-"))
  project = mkdtempSync(path.join(os.tmpdir(), "pedelec-sdk-user-"))
  const packed = await step("npm pack", () => run("npm", ["pack", "--json", "--pack-destination", packDir], sdkRoot))
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${shown(packed)}`)
  const [report] = JSON.parse(packed.stdout) as ReadonlyArray<{ readonly filename: string }>
  tarball = path.join(packDir, report!.filename)
  entries = tarEntries(tarball)
}, 60_000)

afterAll(() => {
  for (const dir of [packDir, project]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("the packed @pedelec/sdk", () => {
  it("holds only package.json, the README and the built .js and .d.ts files", () => {
    const files = [...entries.keys()].map((name) => name.replace(/^package\//, "")).sort()
    console.log(`[package] ${path.basename(tarball)}: ${files.join(", ")}`)
    for (const file of files) expect(file).toMatch(/^(package\.json|README\.md|dist\/[\w.-]+\.(js|d\.ts))$/)
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "dist/index.js",
        "dist/effect.js",
        "dist/pedelec.browser.js",
        "dist/index.d.ts",
        "dist/effect.d.ts"
      ])
    )
  })

  it("has a manifest a user's install can take: public, effect pinned, no workspace package, ESM conditions", () => {
    const manifest = JSON.parse(entries.get("package/package.json")!.toString("utf8"))
    expect(manifest.private).toBeUndefined()
    expect(manifest.sideEffects).toBe(false)
    // What npm installs for a user; devDependencies of a dependency are never installed.
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]) {
      expect(
        Object.keys(manifest[field] ?? {}).filter((name) => name.startsWith("@pedelec/")),
        field
      ).toEqual([])
    }
    expect(manifest.dependencies.effect).toBe(effectVersion)
    expect(effectVersion).toMatch(/^\d+\.\d+\.\d+$/)
    // Scripts a user's install would run (`prepare` runs for git installs).
    for (const hook of ["preinstall", "install", "postinstall", "prepare"])
      expect(manifest.scripts?.[hook]).toBeUndefined()
    for (const entry of [".", "./effect"]) {
      const conditions = manifest.exports[entry]
      // TypeScript takes the first condition that matches: `types` must come before the JavaScript ones.
      expect(Object.keys(conditions)[0], entry).toBe("types")
      expect(conditions, entry).toMatchObject({ types: expect.any(String), import: expect.any(String) })
      expect(conditions.browser, entry).toBe(conditions.import)
      for (const target of [conditions.types, conditions.import])
        expect(entries.has(path.posix.join("package", target))).toBe(true)
    }
  })

  it("passes publint and attw (esm-only)", async () => {
    const publint = await step("publint", () => run(bin("publint"), [tarball], repoRoot))
    expect(publint.code, shown(publint)).toBe(0)
    const attw = await step("attw", () => run(bin("attw"), [tarball, "--profile", "esm-only"], repoRoot))
    expect(attw.code, shown(attw)).toBe(0)
  }, 60_000)
})

/** A project as a user starts one: the fixture page, its own package.json, and the SDK installed from the tarball. */
const install = async (): Promise<Ran> => {
  cpSync(fixture, project, { recursive: true })
  if (existsSync(earlierPage)) cpSync(earlierPage, path.join(project, "src/earlier.ts"))
  writeFileSync(
    path.join(project, "package.json"),
    `${JSON.stringify({ name: "pedelec-sdk-user", private: true, type: "module" }, null, 2)}\n`
  )
  // effect is named too, at the SDK's pin, as a user of `@pedelec/sdk/effect` declares it (effect-page.ts imports it).
  const args = ["install", tarball, `effect@${effectVersion}`, "--no-audit", "--no-fund", "--prefer-offline"]
  return run("npm", [...args, "--no-workspaces", "--prefix", project], project, {
    ...cleanEnv(),
    npm_config_workspaces: "false"
  })
}

/** tsc as the user's project runs it: the repository's compiler, the project's node_modules. */
const typeCheck = (files: ReadonlyArray<string>, extra: ReadonlyArray<string> = []) =>
  node(
    [
      tsc,
      ...["--strict", "--noEmit", "--skipLibCheck", "false", "--exactOptionalPropertyTypes", "--pretty", "false"],
      ...["--module", "esnext", "--moduleResolution", "bundler", "--target", "es2022", "--lib", "ES2022,DOM"],
      ...extra,
      ...files
    ],
    project
  )

/** A session with known tool names and an `onTool` typo without `@ts-expect-error`: the typo is on line 8. */
const TYPO_PAGE = `import { defineTool, Pedelec } from "@pedelec/sdk"

const known = defineTool({ name: "known.tool", description: "A tool", argsSchema: { type: "object", properties: {} } })

export const wire = async (): Promise<void> => {
  const session = await new Pedelec().createSession({ skills: { guidance: "", tools: [known] } })
  session.onTool("known.tool", () => 1)
  session.onTool("typo", () => 1)
}
`

const SSR_SCRIPT = `
import { isPedelecError, Pedelec } from "@pedelec/sdk"
import { PedelecClient } from "@pedelec/sdk/effect"
const availability = await new Pedelec().checkAvailability()
const { error, ...rest } = availability
const reported = error && { code: error.code, message: error.message, isPedelecError: isPedelecError(error) }
console.log(JSON.stringify({ ...rest, error: reported, effectLayer: typeof PedelecClient.layer }))
`

/** Every .js file Vite wrote (the page's chunks, whatever their hashed names). */
const builtJs = (dir: string): ReadonlyArray<Buffer> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(entry.parentPath, entry.name)
    if (entry.isDirectory()) return builtJs(full)
    return entry.name.endsWith(".js") ? [readFileSync(full)] : []
  })

describe("in a user's fresh project", () => {
  const lockfile = path.join(repoRoot, "package-lock.json")
  let lockBefore: string
  let installed: Ran

  beforeAll(async () => {
    lockBefore = sha256(lockfile)
    installed = await step("npm install (fresh project)", install)
  }, 180_000)

  it("installs from the tarball outside the repository, with one copy of effect and no workspace package", () => {
    expect(path.relative(repoRoot, project)).toMatch(/^\.\./)
    expect(installed.code, shown(installed)).toBe(0)
    const modules = path.join(project, "node_modules")
    expect(readJson(path.join(modules, "@pedelec/sdk/package.json")).version).toBe(sdkPackage.version)
    expect(readdirSync(path.join(modules, "@pedelec"))).toEqual(["sdk"])
    expect(readJson(path.join(modules, "effect/package.json")).version).toBe(effectVersion)
    expect(existsSync(path.join(modules, "@pedelec/sdk/node_modules/effect"))).toBe(false)
    // The install acted on the temp project alone.
    expect(sha256(lockfile)).toBe(lockBefore)
  })

  it("type-checks a page using the whole public API strictly against the packed .d.ts", async () => {
    const pages = ["src/page.ts", "src/effect-page.ts"]
    if (existsSync(path.join(project, "src/earlier.ts"))) pages.push("src/earlier.ts")
    console.log(`[package] type-checking ${pages.join(", ")}${pages.length === 2 ? " (no earlier.ts yet)" : ""}`)
    const checked = await step("tsc --strict (lib check on)", () => typeCheck(pages, ["--listFiles"]))
    expect(checked.code, shown(checked)).toBe(0)
    const files = checked.stdout.split("\n").filter((line) => line.trim() !== "")
    // What the page compiled against: the installed package's declarations; of the repository, only tsc's own libs.
    expect(files.some((file) => file.endsWith("node_modules/@pedelec/sdk/dist/index.d.ts"))).toBe(true)
    expect(files.some((file) => file.endsWith("node_modules/@pedelec/sdk/dist/effect.d.ts"))).toBe(true)
    expect(files.filter((file) => !isUnder(project, file) && !isUnder(typescriptLib, file))).toEqual([])
  }, 120_000)

  it("fails to type-check an onTool typo, naming its line (so the check above can fail)", async () => {
    writeFileSync(path.join(project, "src/typo.ts"), TYPO_PAGE)
    const checked = await step("tsc on the typo", () => typeCheck(["src/typo.ts"], ["--skipLibCheck", "true"]))
    expect(checked.code).not.toBe(0)
    expect(checked.stdout).toMatch(/src\/typo\.ts\(8,\d+\): error TS\d+: .*"typo"/)
    expect(checked.stdout.trim().split("\n")).toHaveLength(1)
  }, 120_000)

  it("bundles the page with Vite within the SDK's size budget", async () => {
    const built = await step("vite build", () => node([vite, "build", "--logLevel", "warn"], project))
    expect(built.code, shown(built)).toBe(0)
    if (built.stdout.trim() !== "" || built.stderr.trim() !== "") console.log(`[package] vite said:\n${shown(built)}`)
    const js = builtJs(path.join(project, "dist"))
    expect(js.length).toBeGreaterThan(0)
    const minified = js.reduce((sum, file) => sum + file.byteLength, 0)
    const gzipped = js.reduce((sum, file) => sum + gzipSync(file, { level: 9 }).byteLength, 0)
    const limit = Number(/--limit\s+(\d+)/.exec(sdkPackage.scripts.size)?.[1])
    expect(limit).toBeGreaterThan(0)
    console.log(
      `[package] vite bundle of page.ts: ${minified} B min, ${gzipped} B min+gzip (budget ${limit} + ${PAGE_ALLOWANCE_BYTES} B for the page)`
    )
    expect(gzipped).toBeLessThanOrEqual(limit + PAGE_ALLOWANCE_BYTES)
  }, 120_000)

  it("imports both entries in Node as a server render does: checkAvailability reports EXTENSION_UNAVAILABLE", async () => {
    const ran = await step("node SSR import", () => node(["--input-type=module", "-e", SSR_SCRIPT], project))
    expect(ran.code, shown(ran)).toBe(0)
    expect(ran.stderr).toBe("")
    console.log(`[package] SSR checkAvailability(): ${ran.stdout.trim()}`)
    const availability = JSON.parse(ran.stdout.trim().split("\n").at(-1)!)
    expect(availability).toMatchObject({
      available: false,
      extension: { available: false },
      approval: { approved: false, origin: null },
      desktop: { available: false, launchAttempted: false },
      error: { code: "EXTENSION_UNAVAILABLE", isPedelecError: true },
      effectLayer: "function"
    })
  }, 60_000)
})
