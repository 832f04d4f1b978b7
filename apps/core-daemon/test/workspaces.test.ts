// Workspaces on a real Core: an explicit project directory is never touched outside .pedelec-runtime/, unsafe
// paths are refused, and a managed workspace lives exactly as long as its session.
import { createHash } from "node:crypto"
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { script } from "@pedelec/providers/scripted/Script"
import {
  coreForFile,
  exists,
  failureOf,
  hostClient,
  ORIGIN,
  openSession,
  removeHome,
  runTurnAnswering,
  tempDir
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const core = coreForFile()

const tools: ToolsManifest = [
  {
    name: "add",
    description: "Adds two integers.",
    argsSchema: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] }
  }
]
const skills = { guidance: "", tools }
const noAnswer = () => ({ ok: true as const, result: null })

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex")

/** Every path under a directory except `.pedelec-runtime/`, with type, mode, mtime and content hash. */
const snapshotTree = async (root: string) => {
  const entries: Record<string, string> = {}
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      const rel = path.relative(root, full)
      if (rel === ".pedelec-runtime") continue
      const info = await lstat(full)
      const meta = `${(info.mode & 0o7777).toString(8)} ${info.mtimeMs}`
      if (info.isSymbolicLink()) entries[rel] = `link ${meta} -> ${await readlink(full)}`
      else if (info.isDirectory()) {
        entries[rel] = `dir ${meta}`
        await walk(full)
      } else entries[rel] = `file ${meta} ${sha256(await readFile(full))}`
    }
  }
  // The root's mtime changes when .pedelec-runtime/ is added; its mode must not.
  entries["."] = `dir ${((await lstat(root)).mode & 0o7777).toString(8)}`
  await walk(root)
  return entries
}

describe("workspaces on a real Core", () => {
  it.live("an explicit workspace is untouched outside .pedelec-runtime/ by a session that works in it and ends", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("pedelec-workspace-"))
      yield* Effect.addFinalizer(() => Effect.promise(() => removeHome(dir)))
      yield* Effect.promise(async () => {
        await mkdir(path.join(dir, "src", "deep"), { recursive: true })
        await mkdir(path.join(dir, "empty"))
        await writeFile(path.join(dir, "README.md"), "# project\n")
        await writeFile(path.join(dir, "src", "main.ts"), "export const x = 1\n", { mode: 0o640 })
        await writeFile(path.join(dir, "src", "deep", "data.bin"), Buffer.from([0, 1, 2, 255, 254]))
        await symlink("README.md", path.join(dir, "link-to-readme"))
      })
      const before = yield* Effect.promise(() => snapshotTree(dir))
      const client = yield* hostClient(core.info)
      const { session, sessionId, events } = yield* openSession(client, { skills, workspace: { path: dir } })
      assert.deepStrictEqual(session.workspace, { path: dir, managed: false })
      // The agent keeps its memory there and Core writes the spec files and a large result there: all of it inside
      // .pedelec-runtime/.
      const text = script("remember here", 'call add {"a":1,"b":2}', "say done")
      const large = () => ({ ok: true as const, result: "y".repeat(40 * 1024) })
      const completed = yield* runTurnAnswering(client, events, sessionId, text, large)
      assert.strictEqual(completed.reason, "completed")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
      const after = yield* Effect.promise(() => snapshotTree(dir))
      assert.deepStrictEqual(after, before)
      const runtime = path.join(dir, ".pedelec-runtime")
      assert.isTrue(yield* Effect.promise(() => exists(path.join(runtime, "skills", "add.json"))))
      assert.lengthOf(yield* Effect.promise(() => readdir(path.join(runtime, "tmp"))), 1, "the large result's file")
    }).pipe(Effect.scoped)
  )

  it.live("the Pedelec home, a home directory and a path through a symlink are WORKSPACE_PATH_INVALID", () =>
    Effect.gen(function* () {
      const base = yield* Effect.promise(() => tempDir("pedelec-links-"))
      yield* Effect.addFinalizer(() => Effect.promise(() => removeHome(base)))
      yield* Effect.promise(async () => {
        await mkdir(path.join(base, "real", "project"), { recursive: true })
        await symlink(path.join(base, "real"), path.join(base, "link"))
      })
      const client = yield* hostClient(core.info)
      const before = (yield* client["session.list"]({})).length
      const cases = [
        [core.home, "pedelec-home"],
        [path.join(core.home, "sessions"), "pedelec-home"],
        [os.homedir(), "home-directory"],
        [path.join(base, "link", "project"), "no-symlink"]
      ] as const
      for (const [candidate, rule] of cases) {
        const input = { provider: "scripted", workspace: { path: candidate } } as const
        const error = yield* failureOf(client["session.create"]({ origin: ORIGIN, input }))
        assert.strictEqual(error?.code, "WORKSPACE_PATH_INVALID", candidate)
        assert.strictEqual(error?.details?.rule, rule, candidate)
      }
      // The same directory by its real path is fine.
      const ok = yield* client["session.create"]({
        origin: ORIGIN,
        input: { provider: "scripted", workspace: { path: path.join(base, "real", "project") } }
      })
      assert.lengthOf(yield* client["session.list"]({}), before + 1)
      yield* client["session.end"]({ origin: ORIGIN, sessionId: ok.sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("a managed workspace exists (0700) while its session lives and is deleted at the end", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { session, sessionId, events } = yield* openSession(client)
      const workspace = session.workspace.path
      assert.isTrue(session.workspace.managed)
      assert.strictEqual(workspace, path.join(core.home, "workspaces", sessionId))
      const info = yield* Effect.promise(() => lstat(workspace))
      assert.isTrue(info.isDirectory())
      assert.strictEqual((info.mode & 0o777).toString(8), "700")
      const completed = yield* runTurnAnswering(client, events, sessionId, script("remember kept"), noAnswer)
      assert.strictEqual(completed.reason, "completed")
      assert.isTrue(yield* Effect.promise(() => exists(path.join(workspace, ".pedelec-runtime"))))
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
      assert.isFalse(yield* Effect.promise(() => exists(workspace)))
      // end() is idempotent (SPEC §2): ending it again is not an error.
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )
})
