import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll } from "vitest"
import { candidates, commonDirs, compareVersions, detected, discover, versionIn } from "../src/Discovery.ts"

let root = ""
const dir = (name: string) => path.join(root, name)

/** A fake CLI: prints `output` for --version, or fails. */
const fakeCli = async (folder: string, name: string, output: string | undefined) => {
  await mkdir(folder, { recursive: true })
  const file = path.join(folder, name)
  const body = output === undefined ? "exit 3" : `echo '${output}'`
  await writeFile(file, `#!/bin/sh\n${body}\n`)
  await chmod(file, 0o755)
  return file
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-discovery-")))
  await fakeCli(dir("a"), "agent", "agent 1.2.9 (old)")
  await fakeCli(dir("b"), "agent", "agent-cli 1.2.10")
  await fakeCli(dir("c"), "agent", undefined)
  await fakeCli(dir("home/.local/bin"), "agent", "1.2.10")
  await mkdir(dir("d"), { recursive: true })
  await symlink(path.join(dir("b"), "agent"), path.join(dir("d"), "agent"))
  await writeFile(path.join(dir("c"), "not-executable"), "#!/bin/sh\necho 9.9.9\n")
})
afterAll(() => rm(root, { recursive: true, force: true }))

const spec = { commands: ["agent"], versionArgs: ["--version"] }

describe("Discovery", () => {
  it("reads versions the way CLIs print them and orders them numerically", () => {
    assert.strictEqual(versionIn("claude 2.1.197 (Claude Code)"), "2.1.197")
    assert.strictEqual(versionIn("codex-cli 0.171.0\n"), "0.171.0")
    assert.strictEqual(versionIn("no version here"), undefined)
    assert.isAbove(compareVersions("1.2.10", "1.2.9"), 0)
    assert.isBelow(compareVersions("0.9", "0.10.1"), 0)
    assert.strictEqual(compareVersions("2.0.0", "2.0"), 0)
  })

  it.effect("finds the newest copy on PATH, skipping one that does not answer --version", () =>
    Effect.gen(function* () {
      const env = { PATH: [dir("c"), dir("a"), dir("b")].join(":"), HOME: dir("nohome") }
      const found = yield* discover(spec, env, "linux")
      assert.deepStrictEqual(found, { path: path.join(dir("b"), "agent"), version: "1.2.10" })
    })
  )

  it.effect("looks in the usual folders a desktop app's PATH lacks, and the first of equal versions wins", () =>
    Effect.gen(function* () {
      const onlyHome = yield* discover(spec, { PATH: "", HOME: dir("home") }, "linux")
      assert.deepStrictEqual(onlyHome, { path: path.join(dir("home/.local/bin"), "agent"), version: "1.2.10" })
      const tie = yield* discover(spec, { PATH: dir("b"), HOME: dir("home") }, "linux")
      assert.strictEqual(tie?.path, path.join(dir("b"), "agent"))
    })
  )

  it("lists a symlinked copy once, and nothing that is not executable", async () => {
    const env = { PATH: [dir("b"), dir("d"), dir("c")].join(":"), HOME: dir("nohome") }
    const found = await candidates({ commands: ["agent", "not-executable"], versionArgs: [] }, env, "linux")
    assert.deepStrictEqual(found, [path.join(dir("b"), "agent"), path.join(dir("c"), "agent")])
  })

  it.effect("reports nothing when no copy answers", () =>
    Effect.gen(function* () {
      assert.isUndefined(yield* discover(spec, { PATH: dir("c"), HOME: dir("nohome") }, "linux"))
    })
  )

  it.effect("a copy that does not answer is named in the error, not called missing", () =>
    Effect.gen(function* () {
      const about = { code: "codex", name: "Codex", experimental: false, effort: { supported: false } } as const
      const broken = detected(about, spec, "not found", { PATH: dir("c"), HOME: dir("nohome") })
      const info = yield* broken.detect
      assert.isFalse(info.available)
      assert.include(info.error, `Found ${path.join(dir("c"), "agent")}, but`)
      const missing = yield* detected(about, spec, "not found", { PATH: dir("none"), HOME: dir("nohome") }).detect
      assert.strictEqual(missing.error, "not found")
    })
  )

  it("knows each OS's usual folders", () => {
    assert.include(commonDirs({ HOME: "/home/u" }, "linux"), "/home/u/.local/bin")
    assert.include(commonDirs({ HOME: "/Users/u" }, "darwin"), "/opt/homebrew/bin")
    assert.include(
      commonDirs({ USERPROFILE: "C:\\Users\\u", APPDATA: "C:\\Users\\u\\AppData\\Roaming" }, "win32"),
      "C:\\Users\\u\\AppData\\Roaming\\npm"
    )
  })
})
