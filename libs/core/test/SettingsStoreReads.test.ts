// SettingsStore's reads on a disk that fails them: an errno the disk answers a read with (EIO, EACCES, a directory
// where the file should be) is a coded STORAGE_UNAVAILABLE naming the file but not its path, never a defect; a
// half-written settings.json (a writer that is not ours, cut short by a full disk) is SETTINGS_INVALID at every
// length; reads while writes rename over the file always see one whole version. The faults a real disk cannot be
// made to give on demand (EIO; EACCES, which root ignores) come from support/FaultyReads.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import { DEFAULT_SETTINGS, type Settings } from "@pedelec/contracts/Settings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { SettingsStore } from "../src/SettingsStore.ts"
import { codedFailure, EACCES, EIO, faultyReads, type ReadFault } from "./support/FaultyReads.ts"

const custom: Settings = { ...DEFAULT_SETTINGS, defaultProvider: "claude", defaultModels: { ollama: "llama3.2" } }

const withStore = <A, E>(body: (home: string) => Effect.Effect<A, E, SettingsStore>, fault?: ReadFault) =>
  Effect.gen(function* () {
    const root = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-settings-reads-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const home = path.join(root, "home")
    const layer = SettingsStore.layer.pipe(
      Layer.provide(faultyReads(fault)),
      Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer))
    )
    return yield* body(home).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

const assertUnavailable = (error: PedelecError, home: string, errno: string, file: string) => {
  assert.strictEqual(error.code, "STORAGE_UNAVAILABLE")
  assert.strictEqual(error.details?.errno, errno)
  assert.include(String(error.details?.reason), `reading ${file}`)
  // A page may see this error: it names the file, never where the home is.
  assert.notInclude(`${error.message} ${JSON.stringify(error.details)}`, home)
}

const EIO_SETTINGS = EIO("settings.json")
const EACCES_SECRETS = EACCES("secrets.json")

describe("SettingsStore reads on a failing disk", () => {
  it.effect("get: settings.json read failing EIO is STORAGE_UNAVAILABLE, not a defect", () =>
    withStore(
      (home) =>
        Effect.gen(function* () {
          const store = yield* SettingsStore
          assertUnavailable(yield* codedFailure(store.get), home, "EIO", "settings.json")
          // update reads before it writes: it fails the same way and writes nothing.
          assertUnavailable(yield* codedFailure(store.update(() => custom)), home, "EIO", "settings.json")
        }),
      EIO_SETTINGS
    )
  )

  it.effect("getSecrets and set: secrets.json read failing EACCES is STORAGE_UNAVAILABLE, nothing written", () =>
    withStore(
      (home) =>
        Effect.gen(function* () {
          const store = yield* SettingsStore
          assertUnavailable(yield* codedFailure(store.getSecrets), home, "EACCES", "secrets.json")
          assertUnavailable(yield* codedFailure(store.get), home, "EACCES", "secrets.json")
          assertUnavailable(yield* codedFailure(store.set(custom)), home, "EACCES", "secrets.json")
          const written = yield* Effect.promise(() =>
            readFile(path.join(home, "settings.json")).then(
              () => true,
              () => false
            )
          )
          assert.isFalse(written)
        }),
      EACCES_SECRETS
    )
  )

  it.effect("a directory where settings.json should be (EISDIR on a real disk) is STORAGE_UNAVAILABLE", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        yield* Effect.promise(() => mkdir(path.join(home, "settings.json"), { recursive: true }))
        const error = yield* codedFailure(store.get)
        assertUnavailable(error, home, "EISDIR", "settings.json")
        // In words a user can act on, not the platform's tag.
        assert.include(String(error.details?.reason), "a folder is where a file should be")
      })
    )
  )

  it.effect("a half-written settings.json is SETTINGS_INVALID at every length it can be cut to", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        yield* store.set(custom)
        const file = path.join(home, "settings.json")
        const whole = yield* Effect.promise(() => readFile(file, "utf8"))
        const cut = whole.trimEnd()
        const codes = new Set<string>()
        for (let length = 0; length < cut.length; length++) {
          yield* Effect.promise(() => writeFile(file, cut.slice(0, length)))
          const error = yield* codedFailure(store.get)
          codes.add(error.code)
          assert.strictEqual(error.details?.file, "settings.json")
        }
        assert.deepStrictEqual([...codes], ["SETTINGS_INVALID"])
      })
    )
  )

  it.effect("reads while writes rename over settings.json always see one whole version", () =>
    withStore(() =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        yield* store.set(custom)
        const versions = Array.from({ length: 30 }, (_, i) => ({
          ...custom,
          ollama: { ...custom.ollama, timeoutMs: 2_000 + i }
        }))
        const timeouts = new Set([custom, ...versions].map((v) => v.ollama.timeoutMs))
        const writes = Effect.forEach(versions, (v) => store.set(v), { discard: true })
        const reads = Effect.forEach(versions, () => Effect.map(store.get, (got) => got.ollama.timeoutMs))
        const [, seen] = yield* Effect.all([writes, reads], { concurrency: 2 })
        for (const timeout of seen) assert.isTrue(timeouts.has(timeout), `read a version never written: ${timeout}`)
      })
    )
  )
})
