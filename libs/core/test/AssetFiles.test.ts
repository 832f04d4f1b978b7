import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { Readable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import type { AssetPath } from "@pedelec/contracts/Assets"
import { hasCode } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import { AssetFiles, contentTypeOf } from "../src/AssetFiles.ts"

const io = <A>(run: () => Promise<A>) => Effect.promise(run)
const asset = (text: string) => text as AssetPath

/** A workspace with `.pedelec-runtime/{assets,tmp}`, and a folder outside it with one file. */
const fixture = Effect.gen(function* () {
  const root = yield* Effect.acquireRelease(
    io(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-assets-")))),
    (dir) => io(() => rm(dir, { recursive: true, force: true }))
  )
  const workspace = path.join(root, "workspace")
  const outside = path.join(root, "outside")
  const assets = path.join(workspace, ".pedelec-runtime", "assets")
  const tmp = path.join(workspace, ".pedelec-runtime", "tmp")
  yield* io(async () => {
    await mkdir(assets, { recursive: true })
    await mkdir(tmp)
    await mkdir(outside)
    await writeFile(path.join(outside, "secret.txt"), "secret")
  })
  return { workspace, outside, assets, tmp, files: yield* AssetFiles }
}).pipe(Effect.provide(AssetFiles.layer))

const body = (...chunks: ReadonlyArray<string>) => Readable.from(chunks.map((chunk) => Buffer.from(chunk)))

const codeOf = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.flip(effect), (error) =>
    hasCode(error, "ASSET_PATH_INVALID", "ASSET_NOT_FOUND", "ASSET_TOO_LARGE", "INVALID_INPUT")
      ? error.code
      : String(error)
  )

describe("contentTypeOf", () => {
  it.each([
    ["a.txt", "text/plain; charset=utf-8"],
    ["dir.v2/A.JSON", "application/json"],
    ["x.png", "image/png"],
    ["x.tar.gz", "application/gzip"],
    ["noext", "application/octet-stream"],
    ["dir.txt/noext", "application/octet-stream"],
    [".hidden", "application/octet-stream"],
    ["x.exe", "application/octet-stream"]
  ])("%s → %s", (name, type) => assert.strictEqual(contentTypeOf(name), type))
})

describe("AssetFiles", () => {
  it.effect("writes through tmp/ into place, creating folders, and replaces an older file", () =>
    Effect.gen(function* () {
      const { workspace, assets, tmp, files } = yield* fixture
      const info = yield* files.write(workspace, asset("a/b/c.txt"), body("hel", "lo"), 5)
      assert.deepStrictEqual([info.path, info.bytes, info.contentType], ["a/b/c.txt", 5, "text/plain; charset=utf-8"])
      assert.strictEqual(yield* io(() => readFile(path.join(assets, "a", "b", "c.txt"), "utf8")), "hello")
      yield* files.write(workspace, asset("a/b/c.txt"), body("bye"), 3)
      assert.strictEqual(yield* io(() => readFile(path.join(assets, "a", "b", "c.txt"), "utf8")), "bye")
      assert.deepStrictEqual(yield* io(() => readdir(tmp)), [])
      assert.strictEqual((yield* io(() => lstat(path.join(assets, "a")))).mode & 0o777, 0o700)
      assert.strictEqual((yield* io(() => lstat(path.join(assets, "a", "b", "c.txt")))).mode & 0o777, 0o600)
    })
  )

  it.effect("a body longer than announced is ASSET_TOO_LARGE, a shorter one INVALID_INPUT; no file either way", () =>
    Effect.gen(function* () {
      const { workspace, assets, tmp, files } = yield* fixture
      assert.strictEqual(
        yield* codeOf(files.write(workspace, asset("x.bin"), body("1234", "5678"), 6)),
        "ASSET_TOO_LARGE"
      )
      assert.strictEqual(yield* codeOf(files.write(workspace, asset("x.bin"), body("1234"), 6)), "INVALID_INPUT")
      assert.deepStrictEqual(yield* io(() => readdir(assets)), [])
      assert.deepStrictEqual(yield* io(() => readdir(tmp)), [])
    })
  )

  it.effect("no symlink leads out: a linked file, a linked folder, a linked assets/ or tmp/", () =>
    Effect.gen(function* () {
      const { workspace, outside, assets, tmp, files } = yield* fixture
      yield* io(async () => {
        await symlink(path.join(outside, "secret.txt"), path.join(assets, "link.txt"))
        await symlink(outside, path.join(assets, "dir"))
        await writeFile(path.join(assets, "file"), "x")
      })
      for (const name of ["link.txt", "dir/secret.txt"]) {
        assert.strictEqual(yield* codeOf(files.stat(workspace, asset(name))), "ASSET_PATH_INVALID", name)
        assert.strictEqual(yield* codeOf(Effect.scoped(files.open(workspace, asset(name)))), "ASSET_PATH_INVALID")
        assert.strictEqual(yield* codeOf(files.checkUpload(workspace, asset(name))), "ASSET_PATH_INVALID")
        assert.strictEqual(yield* codeOf(files.write(workspace, asset(name), body("x"), 1)), "ASSET_PATH_INVALID")
      }
      assert.strictEqual(yield* codeOf(files.checkUpload(workspace, asset("dir/new.txt"))), "ASSET_PATH_INVALID")
      assert.strictEqual(yield* codeOf(files.checkUpload(workspace, asset("file/new.txt"))), "ASSET_PATH_INVALID")
      assert.strictEqual(yield* codeOf(files.stat(workspace, asset("missing.txt"))), "ASSET_NOT_FOUND")
      assert.strictEqual(yield* codeOf(files.stat(workspace, asset("none/missing.txt"))), "ASSET_NOT_FOUND")
      assert.deepStrictEqual(yield* io(() => readdir(outside)), ["secret.txt"])
      // tmp/ as a link: an upload would land its bytes elsewhere first.
      yield* io(async () => {
        await rm(tmp, { recursive: true })
        await symlink(outside, tmp)
      })
      assert.strictEqual(yield* codeOf(files.write(workspace, asset("ok.txt"), body("x"), 1)), "ASSET_PATH_INVALID")
      assert.deepStrictEqual(yield* io(() => readdir(outside)), ["secret.txt"])
      // assets/ as a link.
      yield* io(async () => {
        await rm(assets, { recursive: true })
        await symlink(outside, assets)
      })
      assert.strictEqual(yield* codeOf(files.stat(workspace, asset("secret.txt"))), "ASSET_PATH_INVALID")
      assert.strictEqual(yield* codeOf(files.list(workspace)), "ASSET_PATH_INVALID")
    })
  )

  it.effect("open streams exactly the file; list skips links and sorts by path", () =>
    Effect.gen(function* () {
      const { workspace, outside, assets, files } = yield* fixture
      yield* files.write(workspace, asset("b.txt"), body("bb"), 2)
      yield* files.write(workspace, asset("a/z.json"), body("{}"), 2)
      yield* io(() => symlink(path.join(outside, "secret.txt"), path.join(assets, "link.txt")))
      const listed = yield* files.list(workspace)
      assert.deepStrictEqual(
        listed.map((info) => [info.path, info.bytes, info.contentType]),
        [
          ["a/z.json", 2, "application/json"],
          ["b.txt", 2, "text/plain; charset=utf-8"]
        ]
      )
      const text = yield* Effect.scoped(
        Effect.gen(function* () {
          const opened = yield* files.open(workspace, asset("b.txt"))
          assert.strictEqual(opened.info.bytes, 2)
          return yield* io(async () => {
            const chunks: Array<Buffer> = []
            for await (const chunk of opened.stream) chunks.push(chunk as Buffer)
            return Buffer.concat(chunks).toString("utf8")
          })
        })
      )
      assert.strictEqual(text, "bb")
    })
  )
})
