// The release tools on a temp copy of this workspace's version sites (never the real tree): the check passes on the
// copy as it is, fails naming the file and version that differ, and set-version sets every package.json, the
// manifest and the lock; a source file that spells the version out fails the check.
import { spawnSync } from "node:child_process"
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { MANIFEST, mismatches, readSites, setVersion, workspaceDirs } from "./Versions.ts"

const workspaceRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
let copy = ""

/** The real sites' files and the lock, copied as they are. */
const copyWorkspace = async (to: string) => {
  const files = ["package.json", "package-lock.json", MANIFEST]
  for (const dir of await workspaceDirs(workspaceRoot)) files.push(`${dir}/package.json`)
  for (const file of files) {
    await mkdir(path.dirname(path.join(to, file)), { recursive: true })
    await cp(path.join(workspaceRoot, file), path.join(to, file)).catch(() => undefined)
  }
}

const run = (script: string, ...args: Array<string>) =>
  spawnSync(process.execPath, ["--import", "tsx", path.join(workspaceRoot, "tools/release", script), ...args], {
    cwd: workspaceRoot,
    encoding: "utf8"
  })

const setJson = async (file: string, change: (json: Record<string, unknown>) => void) => {
  const json = JSON.parse(await readFile(path.join(copy, file), "utf8")) as Record<string, unknown>
  change(json)
  await writeFile(path.join(copy, file), `${JSON.stringify(json, null, 2)}\n`)
}

beforeEach(async () => {
  copy = await mkdtemp(path.join(tmpdir(), "pedelec-release-"))
  await copyWorkspace(copy)
})
afterEach(() => rm(copy, { recursive: true, force: true }))

describe("check-version", () => {
  it("passes when every site has the root package.json's version", () => {
    const result = run("check-version.ts", copy)
    expect(result.stderr).toBe("")
    expect(result.stdout).toMatch(/^versions OK: \d+\.\d+\.\d+ in \d+ files/)
    expect(result.status).toBe(0)
  })

  it("fails naming each file that differs and the version it has", async () => {
    await setJson("apps/cli/package.json", (json) => {
      json.version = "9.9.9"
    })
    await setJson(MANIFEST, (json) => {
      delete json.version
    })
    const result = run("check-version.ts", copy)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("  apps/cli/package.json: 9.9.9\n")
    expect(result.stderr).toContain(`  ${MANIFEST}: (no version)\n`)
    expect(result.stderr).toContain("npm run release:version -- ")
  })

  it("fails naming a source file that spells the release version out", async () => {
    const release = JSON.parse(await readFile(path.join(copy, "package.json"), "utf8")).version as string
    await mkdir(path.join(copy, "libs/some/src"), { recursive: true })
    await writeFile(path.join(copy, "libs/some/src/Version.ts"), `export const VERSION = "${release}"\n`)
    await writeFile(path.join(copy, "libs/some/src/Version.test.ts"), `const fixture = "${release}"\n`)
    const result = run("check-version.ts", copy)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`  libs/some/src/Version.ts: spells ${release} out\n`)
    expect(result.stderr).not.toContain("Version.test.ts")
    expect(result.stderr).toContain("read its package.json")
  })
})

describe("set-version", () => {
  it("sets every package.json, the manifest and the lock", async () => {
    const manifestBefore = await readFile(path.join(copy, MANIFEST), "utf8")
    const result = run("set-version.ts", "0.2.0", copy)
    expect(result.stdout).toContain("set 0.2.0 in")
    const sites = await readSites(copy)
    expect(sites.map((site) => site.version)).toEqual(sites.map(() => "0.2.0"))
    expect(mismatches(sites)).toEqual([])
    expect(result.status).toBe(0)
    const manifestAfter = await readFile(path.join(copy, MANIFEST), "utf8")
    expect(manifestAfter).toBe(manifestBefore.replace(/"version": "[^"]*"/, '"version": "0.2.0"'))
    const lock = JSON.parse(await readFile(path.join(copy, "package-lock.json"), "utf8"))
    expect(lock.version).toBe("0.2.0")
    for (const dir of ["", ...(await workspaceDirs(copy))]) expect(lock.packages[dir].version).toBe("0.2.0")
  })

  it("refuses what Chrome's manifest would refuse, and writes nothing", async () => {
    for (const version of ["0.2", "0.2.0-beta.1", "01.2.3", "1.2.70000"])
      await expect(setVersion(copy, version)).rejects.toThrow(/not a release version/)
    expect(mismatches(await readSites(copy))).toEqual([])
    expect(run("set-version.ts").stderr).toContain("npm run release:version -- 0.2.0")
  })
})
