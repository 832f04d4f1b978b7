import { createHash } from "node:crypto"
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  writeFile
} from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import { hasCode, type PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { mintSessionId } from "../src/Mint.ts"
import { type PathContext, pathRuleViolation } from "../src/Workspaces/PathRules.ts"
import { RUNTIME_SUBDIRS, Workspaces } from "../src/Workspaces.ts"

interface Fixture {
  /** A scratch folder outside the home, for explicit workspaces. */
  readonly root: string
  readonly home: string
  readonly managedRoot: string
}

const withWorkspaces = <A, E>(body: (fixture: Fixture) => Effect.Effect<A, E, Workspaces>) =>
  Effect.gen(function* () {
    const root = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-ws-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const home = path.join(root, "home")
    const layer = Workspaces.layer.pipe(Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer)))
    return yield* body({ root, home, managedRoot: path.join(home, "workspaces") }).pipe(Effect.provide(layer))
  })

const io = <A>(f: () => Promise<A>) => Effect.promise(f)
const modeOf = async (file: string) => (await stat(file)).mode & 0o777
const exists = (file: string) =>
  lstat(file).then(
    () => true,
    () => false
  )

/** Every path, type, link target and file content under `dir`, skipping `skip`, as one digest. */
const hashTree = async (dir: string, skip: string): Promise<string> => {
  const hash = createHash("sha256")
  const walk = async (current: string): Promise<void> => {
    for (const name of (await readdir(current)).sort()) {
      const full = path.join(current, name)
      if (full === skip) continue
      const info = await lstat(full)
      hash.update(`${path.relative(dir, full)}\0${info.mode}\0${info.mtimeMs}\0`)
      if (info.isSymbolicLink()) hash.update(await readlink(full))
      else if (info.isDirectory()) await walk(full)
      else hash.update(await readFile(full))
    }
  }
  await walk(dir)
  return hash.digest("hex")
}

const ruleOf = (candidate: string) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const error: PedelecError = yield* Effect.flip(workspaces.checkExplicit(candidate))
    assert.isTrue(hasCode(error, "WORKSPACE_PATH_INVALID"), `expected WORKSPACE_PATH_INVALID, got ${error.code}`)
    assert.strictEqual(error.details?.path, candidate)
    assert.isString(error.details?.reason)
    assert.include(error.message, String(error.details?.reason))
    return error.details?.rule
  })

describe("Workspaces.createManaged / removeManaged", () => {
  it.effect("creates workspaces/<id> 0700 with .pedelec-runtime/{assets,logs,skills,tmp}, idempotently", () =>
    withWorkspaces(({ home, managedRoot }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const sessionId = mintSessionId()
        const info = yield* workspaces.createManaged(sessionId)
        assert.deepStrictEqual(info, { path: path.join(managedRoot, sessionId), managed: true })
        assert.strictEqual(yield* io(() => modeOf(home)), 0o700)
        assert.strictEqual(yield* io(() => modeOf(managedRoot)), 0o700)
        assert.strictEqual(yield* io(() => modeOf(info.path)), 0o700)
        for (const sub of RUNTIME_SUBDIRS) {
          assert.isTrue((yield* io(() => stat(path.join(info.path, ".pedelec-runtime", sub)))).isDirectory())
        }
        yield* io(() => writeFile(path.join(info.path, "notes.txt"), "kept"))
        assert.deepStrictEqual(yield* workspaces.createManaged(sessionId), info)
        assert.strictEqual(yield* io(() => readFile(path.join(info.path, "notes.txt"), "utf8")), "kept")
      })
    )
  )

  it.effect("WORKSPACE_CREATE_FAILED when the managed folder cannot be created", () =>
    withWorkspaces(({ home, managedRoot }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        yield* io(() => mkdir(home, { recursive: true }))
        yield* io(() => writeFile(managedRoot, "a file where the managed root should be"))
        const error = yield* Effect.flip(workspaces.createManaged(mintSessionId()))
        assert.isTrue(hasCode(error, "WORKSPACE_CREATE_FAILED"))
        assert.notInclude(error.message, home)
      })
    )
  )

  it.effect("removeManaged deletes the folder without following links out of it, and is idempotent", () =>
    withWorkspaces(({ root }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const outside = path.join(root, "outside")
        yield* io(() => mkdir(outside))
        yield* io(() => writeFile(path.join(outside, "precious.txt"), "keep me"))
        const sessionId = mintSessionId()
        const info = yield* workspaces.createManaged(sessionId)
        yield* io(() => symlink(outside, path.join(info.path, "link-out")))
        yield* workspaces.removeManaged(sessionId)
        assert.isFalse(yield* io(() => exists(info.path)))
        assert.strictEqual(yield* io(() => readFile(path.join(outside, "precious.txt"), "utf8")), "keep me")
        yield* workspaces.removeManaged(sessionId)
      })
    )
  )

  it.effect("removeManaged refuses anything not directly under the managed root", () =>
    withWorkspaces(({ home, managedRoot }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        yield* io(() => mkdir(managedRoot, { recursive: true }))
        yield* io(() => writeFile(path.join(home, "settings.json"), "{}"))
        for (const bad of ["..", "../settings.json", "a/../../settings.json", ""]) {
          const exit = yield* Effect.exit(workspaces.removeManaged(bad as SessionId))
          assert.isTrue(Exit.isFailure(exit) && Exit.hasDies(exit), `expected a defect for ${bad}`)
        }
        assert.isTrue(yield* io(() => exists(path.join(home, "settings.json"))))
        assert.isTrue(yield* io(() => exists(managedRoot)))
      })
    )
  )
})

describe("Workspaces.checkExplicit", () => {
  it.effect("accepts an existing, absolute, plain directory and returns its canonical path", () =>
    withWorkspaces(({ root }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const project = path.join(root, "project")
        yield* io(() => mkdir(project))
        assert.deepStrictEqual(yield* workspaces.checkExplicit(project), { path: project, managed: false })
        assert.deepStrictEqual(yield* workspaces.checkExplicit(`${project}/`), { path: project, managed: false })
        assert.deepStrictEqual(yield* io(() => readdir(project)), [])
      })
    )
  )

  it.effect("each rule of SPEC §6 is enforced and named", () =>
    withWorkspaces(({ root, home, managedRoot }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const project = path.join(root, "project")
        const file = path.join(root, "file.txt")
        const realParent = path.join(root, "real")
        const linkedParent = path.join(root, "linked")
        yield* io(() => mkdir(path.join(realParent, "child"), { recursive: true }))
        yield* io(() => symlink(realParent, linkedParent))
        yield* io(() => symlink(path.join(realParent, "child"), path.join(root, "linked-leaf")))
        yield* io(() => mkdir(project))
        yield* io(() => writeFile(file, "not a dir"))
        const managed = yield* workspaces.createManaged(mintSessionId())
        yield* io(() => mkdir(path.join(home, "sessions"), { recursive: true }))
        const cases: Array<readonly [string, string]> = [
          ["relative/path", "absolute"],
          ["", "absolute"],
          [`${project}/../project`, "normalized"],
          [`${root}//project`, "normalized"],
          [path.join(root, "missing"), "exists"],
          [path.join(file, "below"), "exists"],
          [file, "directory"],
          [path.join(linkedParent, "child"), "no-symlink"],
          [path.join(root, "linked-leaf"), "no-symlink"],
          [home, "pedelec-home"],
          [path.join(home, "sessions"), "pedelec-home"],
          [path.join(home, "not-yet"), "pedelec-home"],
          [managedRoot, "managed-root"],
          [managed.path, "managed-root"],
          [root, "managed-root"],
          [os.homedir(), "home-directory"],
          ["/home/somebody", "home-directory"],
          ["/Users/somebody", "home-directory"],
          ["/", "system-root"],
          ["/usr", "system-root"],
          ["/etc", "system-root"],
          ["/var", "system-root"],
          ["/tmp", "system-root"],
          ["/opt", "system-root"],
          ["/lib64", "system-root"],
          ["/System", "system-root"],
          ["/Applications", "system-root"]
        ]
        for (const [candidate, rule] of cases) {
          assert.strictEqual(yield* ruleOf(candidate), rule, `rule for ${JSON.stringify(candidate)}`)
        }
      })
    )
  )

  const linux = (overrides: Partial<PathContext> = {}): PathContext => ({
    platform: "linux",
    homedir: "/home/ada",
    pedelecHomes: ["/srv/pedelec"],
    managedRoots: ["/srv/pedelec/workspaces"],
    ...overrides
  })

  it("textual rules: home directories and what contains them, per platform", () => {
    const rule = (candidate: string, context: PathContext) => pathRuleViolation(candidate, context).violation?.rule
    assert.strictEqual(rule("/home/ada", linux()), "home-directory")
    assert.strictEqual(rule("/mnt/users", linux({ homedir: "/mnt/users/ada" })), "home-directory")
    assert.strictEqual(rule("/home/ada/code/app", linux()), undefined)
    assert.strictEqual(rule("/srv", linux()), "managed-root")
    assert.strictEqual(rule("/srv/pedelec/workspaces/x", linux()), "managed-root")
    assert.strictEqual(rule("/USR", { ...linux(), platform: "darwin" }), "system-root")
    assert.strictEqual(
      rule("/Users/ADA", { ...linux({ homedir: "/Users/ada" }), platform: "darwin" }),
      "home-directory"
    )
    const win = linux({
      platform: "win32",
      homedir: "C:\\Users\\ada",
      pedelecHomes: ["C:\\Users\\ada\\.pedelec"],
      managedRoots: ["C:\\Users\\ada\\.pedelec\\workspaces"]
    })
    assert.strictEqual(rule("C:\\", win), "system-root")
    assert.strictEqual(rule("D:\\", win), "system-root")
    assert.strictEqual(rule("C:\\Windows", win), "system-root")
    assert.strictEqual(rule("c:\\program files (x86)", win), "system-root")
    assert.strictEqual(rule("C:\\Program Files", win), "system-root")
    assert.strictEqual(rule("C:\\Users\\bob", win), "home-directory")
    assert.strictEqual(rule("c:\\users\\ADA", win), "home-directory")
    assert.strictEqual(rule("C:\\Users\\ada\\.pedelec\\logs", win), "pedelec-home")
    assert.strictEqual(rule("\\\\server\\share\\x", win), "absolute")
    assert.strictEqual(rule("projects\\x", win), "absolute")
    assert.strictEqual(rule("C:\\code\\..\\x", win), "normalized")
    assert.deepStrictEqual(pathRuleViolation("C:/code/app/", win), { canonical: "C:\\code\\app", violation: undefined })
  })
})

describe("Workspaces.prepareExplicit / sweep", () => {
  it.effect("prepareExplicit adds only .pedelec-runtime/ and leaves everything else byte-for-byte alone", () =>
    withWorkspaces(({ root }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const project = path.join(root, "project")
        yield* io(() => mkdir(path.join(project, "src", "deep"), { recursive: true }))
        yield* io(() => writeFile(path.join(project, "README.md"), "# hi"))
        yield* io(() => writeFile(path.join(project, "src", "deep", "a.ts"), "export {}"))
        yield* io(() => symlink("README.md", path.join(project, "readme-link")))
        const runtime = path.join(project, ".pedelec-runtime")
        const before = yield* io(() => hashTree(project, runtime))
        assert.deepStrictEqual(yield* workspaces.prepareExplicit(project), { path: project, managed: false })
        assert.deepStrictEqual((yield* io(() => readdir(runtime))).sort(), [...RUNTIME_SUBDIRS])
        yield* io(() => writeFile(path.join(runtime, "assets", "upload.bin"), "data"))
        yield* workspaces.prepareExplicit(project)
        assert.strictEqual(yield* io(() => readFile(path.join(runtime, "assets", "upload.bin"), "utf8")), "data")
        assert.strictEqual(yield* io(() => hashTree(project, runtime)), before)
      })
    )
  )

  it.effect("prepareExplicit refuses a .pedelec-runtime planted as a symlink and writes nothing through it", () =>
    withWorkspaces(({ root }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const project = path.join(root, "project")
        const elsewhere = path.join(root, "elsewhere")
        yield* io(() => mkdir(project))
        yield* io(() => mkdir(elsewhere))
        yield* io(() => symlink(elsewhere, path.join(project, ".pedelec-runtime")))
        const error = yield* Effect.flip(workspaces.prepareExplicit(project))
        assert.isTrue(hasCode(error, "WORKSPACE_PATH_INVALID"))
        assert.strictEqual(error.details?.rule, "no-symlink")
        assert.deepStrictEqual(yield* io(() => readdir(elsewhere)), [])
      })
    )
  )

  it.effect("sweep removes ended, unknown and idle managed workspaces; keeps live ones and explicit ones", () =>
    withWorkspaces(({ root, managedRoot }) =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const [live, ended, idle, unknown] = [mintSessionId(), mintSessionId(), mintSessionId(), mintSessionId()]
        for (const id of [live, ended, idle, unknown]) yield* workspaces.createManaged(id)
        const explicit = path.join(root, "explicit")
        yield* io(() => mkdir(explicit))
        yield* workspaces.prepareExplicit(explicit)
        yield* io(() => mkdir(path.join(managedRoot, "not-a-session")))
        const removed = yield* workspaces.sweep({ liveSessionIds: [live, idle], idleSessionIds: [idle] })
        assert.deepStrictEqual([...removed].sort(), [ended, idle, unknown].sort())
        const left = (yield* io(() => readdir(managedRoot))).sort()
        assert.deepStrictEqual(left, [live, "not-a-session"].sort())
        assert.isTrue(yield* io(() => exists(path.join(explicit, ".pedelec-runtime", "tmp"))))
        assert.deepStrictEqual(yield* workspaces.sweep({ liveSessionIds: [live], idleSessionIds: [] }), [])
      })
    )
  )

  it.effect("sweep of a home without a managed root removes nothing", () =>
    withWorkspaces(() =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        assert.deepStrictEqual(yield* workspaces.sweep({ liveSessionIds: [], idleSessionIds: [] }), [])
      })
    )
  )
})
