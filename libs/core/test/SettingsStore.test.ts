import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { hasCode, type PedelecError } from "@pedelec/contracts/PedelecError"
import { DEFAULT_SETTINGS, type Settings } from "@pedelec/contracts/Settings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { SettingsStore } from "../src/SettingsStore.ts"

const CANARY = "sk-CANARY-7f3a9c1e-do-not-leak"

const tempRoot = Effect.acquireRelease(
  Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-settings-")))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** A fresh home that does not exist yet, with the store on top. */
const withStore = <A, E>(body: (home: string) => Effect.Effect<A, E, SettingsStore>) =>
  Effect.gen(function* () {
    const home = path.join(yield* tempRoot, "home")
    const layer = SettingsStore.layer.pipe(Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer)))
    return yield* body(home).pipe(Effect.provide(layer))
  })

const modeOf = async (file: string) => (await stat(file)).mode & 0o777

const expectInvalid = (error: PedelecError, file: string, pointer: string) => {
  assert.isTrue(hasCode(error, "SETTINGS_INVALID"), `expected SETTINGS_INVALID, got ${error.code}`)
  assert.strictEqual(error.details?.file, file)
  assert.strictEqual(error.details?.pointer, pointer)
  assert.isString(error.details?.reason)
}

const assertNoCanary = (value: unknown) => {
  const text = value instanceof Error ? `${value.message} ${JSON.stringify(value)}` : JSON.stringify(value)
  assert.notInclude(text, CANARY)
  assert.notInclude(text, "CANARY")
}

const custom: Settings = {
  ...DEFAULT_SETTINGS,
  defaultProvider: "claude",
  defaultModels: { ollama: "llama3.2" },
  effortProfiles: { codex: { high: { argv: ["-c", "model_reasoning_effort=high"], env: {} } } }
}

describe("SettingsStore", () => {
  it.effect("missing files read as the defaults and no secrets, and reading creates nothing", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const settings = yield* store.get
        assert.deepStrictEqual(settings, { ...DEFAULT_SETTINGS, secretsSet: { ollamaApiKey: false } })
        assert.deepStrictEqual(yield* store.getSecrets, {})
        const exists = yield* Effect.promise(() =>
          stat(home).then(
            () => true,
            () => false
          )
        )
        assert.isFalse(exists)
      })
    )
  )

  it.effect("set round-trips, creates the home 0700 and writes settings.json 0644", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const returned = yield* store.set(custom)
        assert.deepStrictEqual(returned, { ...custom, secretsSet: { ollamaApiKey: false } })
        assert.deepStrictEqual(yield* store.get, returned)
        assert.strictEqual(yield* Effect.promise(() => modeOf(home)), 0o700)
        assert.strictEqual(yield* Effect.promise(() => modeOf(path.join(home, "settings.json"))), 0o644)
        const onDisk = JSON.parse(yield* Effect.promise(() => readFile(path.join(home, "settings.json"), "utf8")))
        assert.deepStrictEqual(onDisk, custom)
      })
    )
  )

  it.effect("setSecret writes secrets.json 0600; get only says it is set; null removes it", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const afterSet = yield* store.setSecret("ollamaApiKey", CANARY)
        assert.deepStrictEqual(afterSet.secretsSet, { ollamaApiKey: true })
        assertNoCanary(afterSet)
        assertNoCanary(yield* store.get)
        assertNoCanary(yield* store.set(custom))
        assert.strictEqual((yield* store.getSecrets).ollamaApiKey, CANARY)
        assert.strictEqual(yield* Effect.promise(() => modeOf(path.join(home, "secrets.json"))), 0o600)
        const cleared = yield* store.setSecret("ollamaApiKey", null)
        assert.deepStrictEqual(cleared.secretsSet, { ollamaApiKey: false })
        assert.deepStrictEqual(yield* store.getSecrets, {})
      })
    )
  )

  it.effect("an invalid value is SETTINGS_INVALID with its pointer, and the file is left as it was", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        yield* store.set(custom)
        const file = path.join(home, "settings.json")
        const broken = JSON.stringify({ ...custom, ollama: { ...custom.ollama, timeoutMs: "soon" } })
        yield* Effect.promise(() => writeFile(file, broken))
        expectInvalid(yield* Effect.flip(store.get), "settings.json", "/ollama/timeoutMs")
        // Never silently reset: the next read fails the same way and the bytes are untouched.
        expectInvalid(yield* Effect.flip(store.get), "settings.json", "/ollama/timeoutMs")
        assert.strictEqual(yield* Effect.promise(() => readFile(file, "utf8")), broken)
      })
    )
  )

  it.effect("excess keys, unparsable JSON and too-deep nesting are SETTINGS_INVALID", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const file = path.join(home, "settings.json")
        yield* Effect.promise(() => mkdir(home, { recursive: true }))
        yield* Effect.promise(() => writeFile(file, JSON.stringify({ ...DEFAULT_SETTINGS, theme: "dark" })))
        expectInvalid(yield* Effect.flip(store.get), "settings.json", "/theme")
        yield* Effect.promise(() =>
          writeFile(file, JSON.stringify({ ...DEFAULT_SETTINGS, defaultModels: { vim: "x" } }))
        )
        expectInvalid(yield* Effect.flip(store.get), "settings.json", "/defaultModels/vim")
        yield* Effect.promise(() => writeFile(file, '{"defaultProvider": null,'))
        expectInvalid(yield* Effect.flip(store.get), "settings.json", "")
        yield* Effect.promise(() => writeFile(file, `${"[".repeat(100)}${"]".repeat(100)}`))
        const deep = yield* Effect.flip(store.get)
        assert.isTrue(hasCode(deep, "SETTINGS_INVALID"))
        assert.include(deep.message, "settings.json")
      })
    )
  )

  it.effect("set validates before writing: an invalid settings object writes nothing", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const bad = { ...custom, defaultEffortLevel: "extreme" } as unknown as Settings
        expectInvalid(yield* Effect.flip(store.set(bad)), "settings.json", "/defaultEffortLevel")
        const withExtra = { ...custom, extra: true } as unknown as Settings
        expectInvalid(yield* Effect.flip(store.set(withExtra)), "settings.json", "/extra")
        assert.isFalse(
          yield* Effect.promise(() =>
            stat(path.join(home, "settings.json")).then(
              () => true,
              () => false
            )
          )
        )
      })
    )
  )

  it.effect("secrets never leak: not in PublicSettings, error messages or details", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const file = path.join(home, "secrets.json")
        yield* Effect.promise(() => mkdir(home, { recursive: true }))
        // An unknown key next to the secret.
        yield* Effect.promise(() => writeFile(file, JSON.stringify({ ollamaApiKey: CANARY, other: CANARY })))
        const excess = yield* Effect.flip(store.get)
        expectInvalid(excess, "secrets.json", "/other")
        assertNoCanary(excess)
        // JSON errors quote the text around the fault.
        yield* Effect.promise(() => writeFile(file, `{"ollamaApiKey": "${CANARY}" oops}`))
        const unparsable = yield* Effect.flip(store.get)
        expectInvalid(unparsable, "secrets.json", "")
        assertNoCanary(unparsable)
        yield* Effect.promise(() => writeFile(file, `{"ollamaApiKey": ${CANARY}}`))
        assertNoCanary(yield* Effect.flip(store.getSecrets))
        // A value that breaks the schema, through the API.
        yield* Effect.promise(() => rm(file))
        const tooLong = yield* Effect.flip(store.setSecret("ollamaApiKey", CANARY.repeat(200)))
        expectInvalid(tooLong, "secrets.json", "/ollamaApiKey")
        assertNoCanary(tooLong)
        assert.isFalse(
          yield* Effect.promise(() =>
            stat(file).then(
              () => true,
              () => false
            )
          )
        )
      })
    )
  )

  it.effect("a leftover temp file from a crash mid-write never corrupts the real file", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        yield* store.set(custom)
        yield* store.setSecret("ollamaApiKey", "k1")
        // What a crash between open and rename leaves: a half-written temp next to the real file.
        yield* Effect.promise(() => writeFile(path.join(home, "settings.json.0badc0ffee00.tmp"), '{"defaultProv'))
        yield* Effect.promise(() => writeFile(path.join(home, "secrets.json.0badc0ffee00.tmp"), '{"ollamaA'))
        assert.deepStrictEqual(yield* store.get, { ...custom, secretsSet: { ollamaApiKey: true } })
        const next = { ...custom, defaultProvider: "codex" as const }
        yield* store.set(next)
        yield* store.setSecret("ollamaApiKey", "k2")
        assert.strictEqual((yield* store.get).defaultProvider, "codex")
        assert.strictEqual((yield* store.getSecrets).ollamaApiKey, "k2")
        // Our own writes leave no temp files behind.
        const temps = (yield* Effect.promise(() => readdir(home))).filter((name) => name.endsWith(".tmp"))
        assert.deepStrictEqual(temps.sort(), ["secrets.json.0badc0ffee00.tmp", "settings.json.0badc0ffee00.tmp"])
      })
    )
  )

  it.effect("concurrent writes serialize: the file always holds one complete version", () =>
    withStore((home) =>
      Effect.gen(function* () {
        const store = yield* SettingsStore
        const versions = Array.from({ length: 25 }, (_, i) => ({
          ...custom,
          ollama: { ...custom.ollama, timeoutMs: 1_000 + i }
        }))
        yield* Effect.forEach(versions, (v) => store.set(v), { concurrency: "unbounded", discard: true })
        const final = yield* store.get
        assert.isTrue(versions.some((v) => v.ollama.timeoutMs === final.ollama.timeoutMs))
        const onDisk = JSON.parse(yield* Effect.promise(() => readFile(path.join(home, "settings.json"), "utf8")))
        assert.strictEqual(onDisk.ollama.timeoutMs, final.ollama.timeoutMs)
      })
    )
  )
})
