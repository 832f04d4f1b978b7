// install/uninstall: on Linux against the real file system in a temp HOME (every file gone afterwards, and
// nothing of anyone else's touched), and on Windows and macOS against an in-memory file system and a recorded
// reg.exe, asserting the exact argv.
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Os, PEDELEC_EXTENSION_ID } from "../src/Browsers.ts"
import { detectBrowsers, type InstallOptions, install, uninstall } from "../src/Install.ts"
import type { RegistrationFs, RegistrationIo, RegResult } from "../src/RegistrationIo.ts"

const tempHome = Effect.acquireRelease(
  Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-hostreg-")))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

const filesUnder = async (dir: string): Promise<Array<string>> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((entry) => !entry.isDirectory()).map((entry) => path.join(entry.parentPath, entry.name))
}

const modeOf = async (file: string) => (await stat(file)).mode & 0o777

const linuxOptions = (home: string): InstallOptions => ({
  os: "linux",
  browsers: ["chrome", "brave"],
  extensionIds: [PEDELEC_EXTENSION_ID],
  launcherDir: path.join(home, ".pedelec", "bin"),
  nodePath: process.execPath,
  hostEntry: "/opt/pedelec/pedelec-native-host.mjs",
  pedelecHome: path.join(home, ".pedelec"),
  coreCommand: "/opt/pedelec/pedelec-core",
  homedir: home,
  env: {}
})

describe("Linux, real file system", () => {
  it.effect("install writes the launcher 0755 and each manifest 0644; uninstall leaves no file", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const options = linuxOptions(home)
      const report = yield* install(options)
      const launcher = path.join(home, ".pedelec/bin/pedelec-native-host")
      const chrome = path.join(home, ".config/google-chrome/NativeMessagingHosts/com.pedelec.host.json")
      const brave = path.join(home, ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts/com.pedelec.host.json")
      assert.deepStrictEqual(
        report.touched.filter((t) => t.kind !== "directory"),
        [
          { kind: "launcher", action: "written", target: launcher },
          { kind: "manifest", action: "written", target: chrome, browser: "chrome" },
          { kind: "manifest", action: "written", target: brave, browser: "brave" }
        ]
      )
      assert.include(
        report.touched.filter((t) => t.kind === "directory").map((t) => t.target),
        path.join(home, ".config/BraveSoftware")
      )
      const files = yield* Effect.promise(() => filesUnder(home))
      assert.sameMembers(files, [launcher, chrome, brave])
      assert.strictEqual(yield* Effect.promise(() => modeOf(launcher)), 0o755)
      assert.strictEqual(yield* Effect.promise(() => modeOf(chrome)), 0o644)
      const manifest = JSON.parse(yield* Effect.promise(() => readFile(brave, "utf8")))
      assert.deepStrictEqual(manifest.allowed_origins, [`chrome-extension://${PEDELEC_EXTENSION_ID}/`])
      assert.strictEqual(manifest.path, launcher)
      assert.include(yield* Effect.promise(() => readFile(launcher, "utf8")), `exec '${process.execPath}'`)
      // The directories install created make the browsers look present; uninstall takes them away again.
      assert.deepStrictEqual(yield* detectBrowsers({ os: "linux", homedir: home, env: {} }), ["chrome", "brave"])

      const removed = yield* uninstall({ ...options, browsers: ["chrome", "chromium", "edge", "brave"] })
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(home)), [])
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(path.join(home, ".config"))), [])
      // The Pedelec home outlives the launcher; only the bin dir install made goes.
      assert.sameMembers(yield* Effect.promise(() => readdir(home)), [".config", ".pedelec"])
      const actions = removed.touched.filter((t) => t.kind !== "directory").map((t) => `${t.action} ${t.target}`)
      assert.includeMembers(actions, [`removed ${chrome}`, `removed ${brave}`, `removed ${launcher}`])
      assert.include(
        actions,
        `absent ${path.join(home, ".config/chromium/NativeMessagingHosts/com.pedelec.host.json")}`
      )
    })
  )

  it.effect("keeps the launcher while another browser uses it, and never touches anyone else's files", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const options = linuxOptions(home)
      // A browser that is really installed, with another host's manifest next to ours.
      const hosts = path.join(home, ".config/google-chrome/NativeMessagingHosts")
      const foreign = path.join(hosts, "com.other.host.json")
      yield* Effect.promise(async () => {
        await mkdir(hosts, { recursive: true })
        await writeFile(foreign, "{}")
      })
      yield* install(options)
      const partial = yield* uninstall({ ...options, browsers: ["chrome"] })
      assert.deepStrictEqual(
        partial.touched.find((t) => t.kind === "launcher"),
        { kind: "launcher", action: "kept", target: path.join(home, ".pedelec/bin/pedelec-native-host") }
      )
      yield* uninstall({ ...options, browsers: ["brave"] })
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(home)), [foreign])
    })
  )

  it.effect("dry run writes nothing and reports what it would write", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const report = yield* install({ ...linuxOptions(home), dryRun: true })
      assert.isTrue(report.dryRun)
      assert.strictEqual(report.touched.filter((t) => t.action === "written").length, 3)
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(home)), [])
    })
  )

  it.effect("rejects a bad extension id before writing anything", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const error = yield* Effect.flip(install({ ...linuxOptions(home), extensionIds: ["not-an-id"] }))
      assert.strictEqual(error.reason, "InvalidInput")
      assert.strictEqual(error.target, "not-an-id")
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(home)), [])
    })
  )
})

/** An in-memory file system for one OS's path rules, and a reg.exe that records argv and keeps keys. */
const fakeIo = (os: Os, failAdd = false) => {
  const sep = os === "win32" ? "\\" : "/"
  const dirs = new Set<string>()
  const files = new Map<string, { readonly text: string; readonly mode: number }>()
  const keys = new Map<string, string>()
  const calls: Array<ReadonlyArray<string>> = []
  const fs: RegistrationFs = {
    exists: async (target) => dirs.has(target) || files.has(target),
    mkdir: async (dir) => {
      dirs.add(dir)
    },
    writeFile: async (file, text, mode) => {
      files.set(file, { text, mode })
    },
    removeFile: async (file) => files.delete(file),
    removeEmptyDir: async (dir) => {
      const busy = [...dirs, ...files.keys()].some((entry) => entry.startsWith(`${dir}${sep}`))
      return !busy && dirs.delete(dir)
    }
  }
  const reg = async (argv: ReadonlyArray<string>): Promise<RegResult> => {
    calls.push(argv)
    const [verb, key] = argv as [string, string]
    if (verb === "add") {
      if (failAdd) return { code: 1, stderr: "ERROR: Access is denied.\r\n" }
      keys.set(key, argv[argv.indexOf("/d") + 1]!)
      return { code: 0, stderr: "" }
    }
    if (verb === "query") return keys.has(key) ? { code: 0, stderr: "" } : { code: 1, stderr: "ERROR: not found" }
    return keys.delete(key) ? { code: 0, stderr: "" } : { code: 1, stderr: "ERROR: not found" }
  }
  const io: RegistrationIo = { fs, reg }
  return { io, dirs, files, keys, calls }
}

const LOCAL = "C:\\Users\\ada\\AppData\\Local"
const windowsOptions: InstallOptions = {
  os: "win32",
  browsers: ["chrome", "edge"],
  extensionIds: [PEDELEC_EXTENSION_ID],
  launcherDir: "C:\\Users\\ada\\.pedelec\\bin",
  nodePath: "C:\\Program Files\\Pedelec\\Pedelec.exe",
  hostEntry: "C:\\Program Files\\Pedelec\\resources\\pedelec-native-host.mjs",
  pedelecHome: "C:\\Users\\ada\\.pedelec",
  coreCommand: "C:\\Program Files\\Pedelec\\resources\\pedelec-core.cmd",
  homedir: "C:\\Users\\ada",
  env: { LOCALAPPDATA: LOCAL }
}

describe("Windows, injected file system and reg.exe", () => {
  const chromeFile = `${LOCAL}\\Pedelec\\NativeMessagingHosts\\chrome\\com.pedelec.host.json`
  const edgeFile = `${LOCAL}\\Pedelec\\NativeMessagingHosts\\edge\\com.pedelec.host.json`
  const chromeKey = "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\com.pedelec.host"
  const edgeKey = "HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\com.pedelec.host"
  const launcher = "C:\\Users\\ada\\.pedelec\\bin\\pedelec-native-host.cmd"

  it.effect("install writes the .cmd and manifests and sets each key's default value to its manifest", () =>
    Effect.gen(function* () {
      const fake = fakeIo("win32")
      const report = yield* install(windowsOptions, fake.io)
      assert.deepStrictEqual(fake.calls, [
        ["add", chromeKey, "/ve", "/t", "REG_SZ", "/d", chromeFile, "/f"],
        ["add", edgeKey, "/ve", "/t", "REG_SZ", "/d", edgeFile, "/f"]
      ])
      assert.sameMembers([...fake.files.keys()], [launcher, chromeFile, edgeFile])
      assert.strictEqual(JSON.parse(fake.files.get(edgeFile)!.text).path, launcher)
      assert.isTrue(fake.files.get(launcher)!.text.startsWith("@echo off\r\n"))
      assert.includeMembers(
        report.touched.map((t) => `${t.kind} ${t.target}`),
        [`registry ${chromeKey}`, `registry ${edgeKey}`, `directory ${LOCAL}\\Pedelec`]
      )
    })
  )

  it.effect("uninstall deletes only keys that exist, then the files and the directories it made", () =>
    Effect.gen(function* () {
      const fake = fakeIo("win32")
      yield* install(windowsOptions, fake.io)
      fake.calls.length = 0
      const report = yield* uninstall({ ...windowsOptions, browsers: ["chrome", "chromium", "edge", "brave"] }, fake.io)
      assert.deepStrictEqual(fake.calls, [
        ["query", chromeKey, "/ve"],
        ["delete", chromeKey, "/f"],
        ["query", "HKCU\\Software\\Chromium\\NativeMessagingHosts\\com.pedelec.host", "/ve"],
        ["query", edgeKey, "/ve"],
        ["delete", edgeKey, "/f"],
        ["query", "HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\com.pedelec.host", "/ve"]
      ])
      assert.strictEqual(fake.files.size, 0)
      assert.strictEqual(fake.keys.size, 0)
      assert.deepStrictEqual([...fake.dirs], [])
      assert.include(
        report.touched.map((t) => `${t.action} ${t.target}`),
        `removed ${launcher}`
      )
    })
  )

  it.effect("a failing reg.exe fails install with the key it could not set", () =>
    Effect.gen(function* () {
      const fake = fakeIo("win32", true)
      const error = yield* Effect.flip(install(windowsOptions, fake.io))
      assert.strictEqual(error.reason, "Registry")
      assert.strictEqual(error.target, chromeKey)
      assert.include(error.message, "Access is denied")
    })
  )
})

describe("macOS, injected file system", () => {
  it.effect("writes under ~/Library/Application Support and never runs reg.exe", () =>
    Effect.gen(function* () {
      const fake = fakeIo("darwin")
      const options: InstallOptions = {
        ...linuxOptions("/Users/ada"),
        os: "darwin",
        browsers: ["chrome", "chromium", "edge", "brave"]
      }
      yield* install(options, fake.io)
      const base = "/Users/ada/Library/Application Support"
      assert.sameMembers(
        [...fake.files.keys()],
        [
          "/Users/ada/.pedelec/bin/pedelec-native-host",
          `${base}/Google/Chrome/NativeMessagingHosts/com.pedelec.host.json`,
          `${base}/Chromium/NativeMessagingHosts/com.pedelec.host.json`,
          `${base}/Microsoft Edge/NativeMessagingHosts/com.pedelec.host.json`,
          `${base}/BraveSoftware/Brave-Browser/NativeMessagingHosts/com.pedelec.host.json`
        ]
      )
      assert.strictEqual(fake.files.get("/Users/ada/.pedelec/bin/pedelec-native-host")!.mode, 0o755)
      assert.strictEqual(fake.files.get(`${base}/Chromium/NativeMessagingHosts/com.pedelec.host.json`)!.mode, 0o644)
      assert.deepStrictEqual(fake.calls, [])
      yield* uninstall(options, fake.io)
      assert.strictEqual(fake.files.size, 0)
      assert.deepStrictEqual([...fake.dirs], [])
    })
  )
})
