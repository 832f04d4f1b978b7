// The launcher's text on every OS, and a POSIX launcher actually run by /bin/sh with spaces, quotes and shell
// metacharacters in every baked-in path, to prove the quoting rather than eyeball it.
import { execFile } from "node:child_process"
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { cmdQuote, launcherFileName, launcherScript, shQuote } from "../src/Launcher.ts"
import { RegistrationError } from "../src/RegistrationError.ts"

const run = promisify(execFile)
const temps: Array<string> = []

afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true })
})

const POSIX = {
  os: "linux",
  nodePath: "/usr/bin/node",
  hostEntry: "/opt/pedelec/native-host/dist/pedelec-native-host.mjs",
  pedelecHome: "/home/ada/.pedelec",
  coreCommand: "/opt/pedelec/desktop/bin/pedelec-core"
} as const

describe("launcherScript (POSIX)", () => {
  it("execs the absolute node with the host entry and exports the baked-in environment", () => {
    expect(launcherScript(POSIX)).toBe(
      [
        "#!/bin/sh",
        "# Pedelec native host launcher, written by the Pedelec installer; a browser runs it with the calling",
        "# extension's origin as the argument. Everything is baked in at install time: reinstall to change it.",
        "PEDELEC_HOME='/home/ada/.pedelec'",
        "export PEDELEC_HOME",
        "PEDELEC_CORE_COMMAND='/opt/pedelec/desktop/bin/pedelec-core'",
        "export PEDELEC_CORE_COMMAND",
        "exec '/usr/bin/node' '/opt/pedelec/native-host/dist/pedelec-native-host.mjs' \"$@\"",
        ""
      ].join("\n")
    )
    expect(launcherScript({ ...POSIX, os: "darwin" })).toBe(launcherScript(POSIX))
    expect(launcherFileName("linux")).toBe("pedelec-native-host")
  })

  it("sets ELECTRON_RUN_AS_NODE when asked", () => {
    expect(launcherScript({ ...POSIX, electronRunAsNode: true })).toContain(
      "ELECTRON_RUN_AS_NODE=1\nexport ELECTRON_RUN_AS_NODE\n"
    )
    expect(launcherScript(POSIX)).not.toContain("ELECTRON")
  })

  it("quotes single quotes the POSIX way", () => {
    expect(shQuote("a b")).toBe("'a b'")
    expect(shQuote("it's")).toBe("'it'\\''s'")
    expect(shQuote('$HOME `x` "y"')).toBe("'$HOME `x` \"y\"'")
  })

  it("rejects relative paths and NUL bytes", () => {
    expect(() => launcherScript({ ...POSIX, nodePath: "node" })).toThrow(RegistrationError)
    expect(() => launcherScript({ ...POSIX, pedelecHome: "~/.pedelec" })).toThrow(
      /PEDELEC_HOME must be an absolute path/
    )
    expect(() => launcherScript({ ...POSIX, hostEntry: "/a\0b" })).toThrow(/NUL/)
  })

  it.runIf(process.platform !== "win32")("runs under /bin/sh with awkward paths intact", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), "pedelec-launcher-"))
    temps.push(root)
    const dir = path.join(root, `it's a "dir" with $HOME and \`ticks\` & spaces`)
    await mkdir(dir)
    // A stand-in for node that prints what it was given, one value per line.
    const fakeNode = path.join(dir, "no de")
    await writeFile(
      fakeNode,
      '#!/bin/sh\nprintf \'%s\\n\' "$@" "home=$PEDELEC_HOME" "core=$PEDELEC_CORE_COMMAND" "path=$PATH"\n'
    )
    await chmod(fakeNode, 0o755)
    const launcher = path.join(dir, "pedelec-native-host")
    const input = {
      os: "linux",
      nodePath: fakeNode,
      hostEntry: path.join(dir, "host 'entry'.mjs"),
      pedelecHome: path.join(dir, "home ' \" $x"),
      coreCommand: path.join(dir, "core; rm -rf nothing")
    } as const
    await writeFile(launcher, launcherScript(input))
    await chmod(launcher, 0o755)
    // A browser started from a desktop launcher may have next to nothing on PATH; the launcher must not care.
    const { stdout } = await run(launcher, ["chrome-extension://abc/"], { env: { PATH: "/nonexistent" } })
    expect(stdout.split("\n")).toEqual([
      input.hostEntry,
      "chrome-extension://abc/",
      `home=${input.pedelecHome}`,
      `core=${input.coreCommand}`,
      "path=/nonexistent",
      ""
    ])
  })
})

const WINDOWS = {
  os: "win32",
  nodePath: "C:\\Program Files\\Pedelec\\Pedelec.exe",
  hostEntry: "C:\\Program Files\\Pedelec\\resources\\pedelec-native-host.mjs",
  pedelecHome: "C:\\Users\\Ada & Bob\\.pedelec",
  coreCommand: "C:\\Program Files\\Pedelec\\resources\\pedelec-core 100%.cmd"
} as const

describe("launcherScript (Windows)", () => {
  it("is a .cmd with echo off first, CRLF lines and quoted, %-escaped paths", () => {
    const script = launcherScript({ ...WINDOWS, electronRunAsNode: true })
    expect(script.split("\r\n")).toEqual([
      "@echo off",
      "rem Pedelec native host launcher, written by the Pedelec installer. Reinstall to change it.",
      "setlocal DisableDelayedExpansion",
      'set "ELECTRON_RUN_AS_NODE=1"',
      'set "PEDELEC_HOME=C:\\Users\\Ada & Bob\\.pedelec"',
      'set "PEDELEC_CORE_COMMAND=C:\\Program Files\\Pedelec\\resources\\pedelec-core 100%%.cmd"',
      '"C:\\Program Files\\Pedelec\\Pedelec.exe" "C:\\Program Files\\Pedelec\\resources\\pedelec-native-host.mjs" %*',
      ""
    ])
    expect(script.replaceAll("\r\n", "")).not.toContain("\n")
    expect(launcherFileName("win32")).toBe("pedelec-native-host.cmd")
  })

  it("rejects what a .cmd cannot carry and POSIX-style paths", () => {
    expect(() => cmdQuote('C:\\a"b')).toThrow(RegistrationError)
    expect(() => launcherScript({ ...WINDOWS, pedelecHome: "C:\\a\r\nb" })).toThrow(/quotes or line breaks/)
    expect(() => launcherScript({ ...WINDOWS, nodePath: "node.exe" })).toThrow(/absolute/)
  })
})
