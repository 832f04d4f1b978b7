// pedelec-deno's argv: `[--thread-id <id>] run <script> [--] [args…]`, help and version, and usage errors for
// everything else (Deno flags included: a script's permissions are not the caller's choice).
import { describe, expect, it } from "vitest"
import { parseArgs } from "../../src/pedelec-deno/Args.ts"
import { platformPackage } from "../../src/pedelec-deno/Runtime.ts"

const env = { PEDELEC_THREAD_ID: "from-env" }

describe("parseArgs", () => {
  it.each([
    [["run", "a.ts"], { threadId: "from-env", script: "a.ts", args: [] }],
    [["--thread-id", "t1", "run", "a.ts", "--", "x", "--y"], { threadId: "t1", script: "a.ts", args: ["x", "--y"] }],
    [["--thread-id=t2", "run", "a.ts", "x", "--", "y"], { threadId: "t2", script: "a.ts", args: ["x", "--", "y"] }],
    [["run", "--thread-id", "t3", "dir/a.ts", "--", "--"], { threadId: "t3", script: "dir/a.ts", args: ["--"] }]
  ])("%j runs", (argv, expected) => {
    expect(parseArgs(argv, env)).toEqual({ _tag: "Run", ...expected })
  })

  it("answers help and version", () => {
    expect(parseArgs(["--help"], env)).toEqual({ _tag: "Help" })
    expect(parseArgs(["-V"], env)).toEqual({ _tag: "Version" })
  })

  it.each([
    [[], /No command/],
    [["exec", "a.ts"], /Unknown command "exec"/],
    [["run"], /No script/],
    [["--allow-all", "run", "a.ts"], /takes no "--allow-all" option/],
    [["run", "--allow-net", "a.ts"], /takes no "--allow-net" option/],
    [["--thread-id"], /--thread-id needs a value/]
  ])("%j is a usage error", (argv, message) => {
    const parsed = parseArgs(argv, env)
    expect(parsed._tag).toBe("UsageError")
    if (parsed._tag === "UsageError") {
      expect(parsed.message).toMatch(message)
      expect(parsed.message).toContain("Usage: pedelec-deno")
    }
  })

  it("needs a thread id from the flag or PEDELEC_THREAD_ID", () => {
    expect(parseArgs(["run", "a.ts"], {})).toMatchObject({ _tag: "UsageError", message: /No thread id/ })
  })
})

describe("platformPackage", () => {
  it.each([
    ["linux", "x64", "@deno/linux-x64-glibc"],
    ["linux", "arm64", "@deno/linux-arm64-glibc"],
    ["darwin", "arm64", "@deno/darwin-arm64"],
    ["win32", "x64", "@deno/win32-x64"],
    ["freebsd", "x64", undefined],
    ["linux", "ia32", undefined]
  ] as const)("%s-%s is %s", (platform, arch, expected) => {
    expect(platformPackage(platform, arch)).toBe(expected)
  })
})
