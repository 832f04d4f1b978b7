// Lock check's test: runs lock-check.ts as `npm test` does, on the real tree and on doctored copies of its
// package.json files and package-lock.json in a temp dir (nothing else is copied: the check reads nothing else).

import { spawnSync } from "node:child_process"
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const SCRIPT = fileURLToPath(new URL("./lock-check.ts", import.meta.url))
const ROOT = path.resolve(path.dirname(SCRIPT), "../..")
const scratch = await mkdtemp(path.join(os.tmpdir(), "pedelec-lock-check-"))
afterAll(() => rm(scratch, { recursive: true, force: true }))

const check = (root: string) => {
  const result = spawnSync(process.execPath, ["--import", "tsx", SCRIPT, root], { cwd: ROOT, encoding: "utf8" })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

type Doctor = (manifest: Record<string, unknown>) => void

let copies = 0
/** A copy of the tree's manifests and lock, with `doctor` applied to one package.json. */
const doctored = async (dir: string, doctor: Doctor) => {
  copies += 1
  const root = path.join(scratch, `tree-${copies}`)
  await cp(ROOT, root, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(ROOT, source)
      if (relative.split(path.sep).includes("node_modules") || relative.startsWith(".")) return false
      return !relative.includes(".") || relative.endsWith("package.json") || relative === "package-lock.json"
    }
  })
  const file = path.join(root, dir, "package.json")
  const manifest = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>
  doctor(manifest)
  await writeFile(file, JSON.stringify(manifest, null, 2))
  return root
}

/** A doctor that sets `field[key]` to `value`, or deletes it when `value` is undefined. */
const setEntry =
  (field: string, key: string, value: string | undefined): Doctor =>
  (manifest) => {
    const entries = { ...(manifest[field] as Record<string, string> | undefined) }
    if (value === undefined) delete entries[key]
    else entries[key] = value
    manifest[field] = entries
  }

describe("lock check", () => {
  it("passes on the real tree", () => {
    const run = check(ROOT)
    expect(run.output).toBe("")
    expect(run.status).toBe(0)
  })

  it("fails on a bin the lock does not record, naming the package, the field and npm install", async () => {
    const run = check(await doctored("apps/cli", setEntry("bin", "pedelec-new", "bin/pedelec-new")))
    expect(run.status).toBe(1)
    expect(run.output).toContain('apps/cli/package.json (@pedelec/cli): bin "pedelec-new" (bin/pedelec-new) is not in')
    expect(run.output).toContain("Run `npm install`")
  })

  it("fails on a dependency the lock does not record", async () => {
    const run = check(await doctored("libs/path-guard", setEntry("dependencies", "left-pad", "1.3.0")))
    expect(run.status).toBe(1)
    expect(run.output).toContain('libs/path-guard/package.json (@pedelec/path-guard): dependencies "left-pad"')
  })

  it("fails on a devDependency whose spec differs from the lock's, and on one the lock has but package.json not", async () => {
    const root = await doctored("", (manifest) => {
      setEntry("devDependencies", "vitest", "4.2.0")(manifest)
      setEntry("devDependencies", "esbuild", undefined)(manifest)
    })
    const run = check(root)
    expect(run.status).toBe(1)
    expect(run.output).toContain('package.json (pedelec): devDependencies "vitest" is 4.2.0 but package-lock.json')
    expect(run.output).toContain('devDependencies "esbuild" is in package-lock.json but not in package.json')
  })

  it("fails on a workspace the lock has no entry for", async () => {
    const root = await doctored("", () => undefined)
    await cp(path.join(root, "libs/sdk"), path.join(root, "libs/sdk-copy"), { recursive: true })
    const run = check(root)
    expect(run.status).toBe(1)
    expect(run.output).toContain('package-lock.json has no entry for "libs/sdk-copy"')
  })
})
