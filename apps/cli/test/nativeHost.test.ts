// install-native-host / uninstall-native-host end to end: the built CLI as a child process with a temp HOME and
// PEDELEC_HOME writes the Linux manifests for the chosen browsers, uninstall removes every file it wrote, and bad
// input exits 2 having written nothing. The host entry and Core bin are stand-ins, so no other app must be built.
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { PEDELEC_EXTENSION_ID } from "@pedelec/host-registration/Browsers"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { parseArgs } from "../src/Args.ts"
import { oneLine, runCli } from "./runCli.ts"

const DEV_ID = "abcdefghijklmnopabcdefghijklmnop"

let root: string
let home: string
let pedelecHome: string
let hostEntry: string
let coreBin: string

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-cli-nmh-")))
  home = path.join(root, "home")
  pedelecHome = path.join(root, "pedelec home")
  hostEntry = path.join(root, "apps", "pedelec-native-host.mjs")
  coreBin = path.join(root, "apps", "pedelec-core")
  await mkdir(home)
  await mkdir(path.join(root, "apps"))
  await writeFile(hostEntry, "")
  await writeFile(coreBin, "")
})

afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const cli = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  runCli(args, {
    env: {
      HOME: home,
      PEDELEC_HOME: pedelecHome,
      PEDELEC_NATIVE_HOST_ENTRY: hostEntry,
      PEDELEC_CORE_BIN: coreBin,
      ...extra
    }
  })

const filesUnder = async (dir: string): Promise<Array<string>> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((entry) => !entry.isDirectory()).map((entry) => path.join(entry.parentPath, entry.name))
}

const manifestOf = (dir: string) => path.join(home, ".config", dir, "NativeMessagingHosts", "com.pedelec.host.json")
const launcher = () => path.join(pedelecHome, "bin", "pedelec-native-host")

describe("install-native-host", () => {
  it("writes the chosen browsers' manifests and the launcher, and says so", async () => {
    const run = await cli(["install-native-host", "--browser", "chrome", "--browser=brave", "--extension-id", DEV_ID])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const chrome = manifestOf("google-chrome")
    const brave = manifestOf("BraveSoftware/Brave-Browser")
    expect((await filesUnder(root)).sort()).toEqual([coreBin, hostEntry, launcher(), brave, chrome].sort())
    expect(run.stdout).toContain("Registered com.pedelec.host for chrome, brave")
    for (const file of [chrome, brave, launcher()]) expect(run.stdout).toContain(file)
    const manifest = JSON.parse(await readFile(chrome, "utf8"))
    expect(manifest).toEqual({
      name: "com.pedelec.host",
      description: expect.any(String),
      path: launcher(),
      type: "stdio",
      allowed_origins: [`chrome-extension://${DEV_ID}/`]
    })
    expect((await stat(launcher())).mode & 0o777).toBe(0o755)
    const script = await readFile(launcher(), "utf8")
    expect(script).toContain(`PEDELEC_HOME='${pedelecHome}'`)
    expect(script).toContain(`PEDELEC_CORE_COMMAND='${coreBin}'`)
    expect(script).toContain(`exec '${process.execPath}' '${hostEntry}' "$@"`)
  })

  it("defaults to the published extension id and to every browser when none is found", async () => {
    const line = oneLine(await cli(["install-native-host", "--json"]))
    expect(line.ok).toBe(true)
    const result = line.result as { browsers: Array<string>; touched: Array<{ kind: string; target: string }> }
    expect(result.browsers).toEqual(["chrome", "chromium", "edge", "brave"])
    expect(result.touched.filter((t) => t.kind === "manifest")).toHaveLength(4)
    const manifest = JSON.parse(await readFile(manifestOf("microsoft-edge"), "utf8"))
    expect(manifest.allowed_origins).toEqual([`chrome-extension://${PEDELEC_EXTENSION_ID}/`])
  })

  it("defaults to the browsers this user has run", async () => {
    await mkdir(path.join(home, ".config", "chromium"), { recursive: true })
    const run = await cli(["install-native-host"])
    expect(run.code).toBe(0)
    expect(await filesUnder(path.join(home, ".config"))).toEqual([manifestOf("chromium")])
  })

  it("refuses to register a host entry that does not exist", async () => {
    const run = await cli(["install-native-host"], { PEDELEC_NATIVE_HOST_ENTRY: path.join(root, "nope.mjs") })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("PEDELEC_NATIVE_HOST_ENTRY")
    expect(run.stderr).toContain("NATIVE_HOST_UNAVAILABLE")
    expect(await readdir(home)).toEqual([])
  })
})

describe("uninstall-native-host", () => {
  it("removes every file install wrote and leaves others alone", async () => {
    const foreign = path.join(home, ".config", "google-chrome", "NativeMessagingHosts", "com.other.json")
    await mkdir(path.dirname(foreign), { recursive: true })
    await writeFile(foreign, "{}")
    expect((await cli(["install-native-host", "--browser", "all"])).code).toBe(0)
    // One browser only: the launcher stays for the others.
    const partial = await cli(["uninstall-native-host", "--browser", "chrome"])
    expect(partial.code).toBe(0)
    expect(partial.stdout).toContain("kept (still used)")
    const run = await cli(["uninstall-native-host"])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`removed           launcher  ${launcher()}`)
    expect((await filesUnder(home)).sort()).toEqual([foreign])
    expect(await filesUnder(pedelecHome)).toEqual([])
  })
})

describe("usage errors", () => {
  it.each([
    [["install-native-host", "--browser", "firefox"], "Unknown browser"],
    [["install-native-host", "--extension-id", "nope"], "not an extension id"],
    [["install-native-host", "--browser"], "--browser needs a value"],
    [["install-native-host", "extra"], "Unexpected argument"],
    [["uninstall-native-host", "--extension-id", DEV_ID], "--extension-id belongs to install-native-host"],
    [["settings", "get", "--browser", "chrome"], "--browser belongs to install-native-host"]
  ])("%j exits 2", async (args, message) => {
    const run = await cli(args)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(message)
    expect(run.stderr).toContain("INVALID_INPUT")
    expect(await readdir(home)).toEqual([])
  })

  it("answers with the JSON line under --json", async () => {
    const line = oneLine(await cli(["install-native-host", "--browser", "safari", "--json"]))
    expect(line).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } })
  })

  it("parses repeated and comma-separated browsers in a fixed order", () => {
    expect(parseArgs(["install-native-host", "--browser", "brave,chrome", "--browser", "chrome"], {})).toEqual({
      _tag: "InstallNativeHost",
      json: false,
      browsers: ["chrome", "brave"],
      extensionIds: []
    })
    expect(parseArgs(["uninstall-native-host", "--json"], {})).toEqual({
      _tag: "UninstallNativeHost",
      json: true,
      browsers: undefined
    })
  })
})
