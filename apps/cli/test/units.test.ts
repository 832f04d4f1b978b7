// Unit tests of the pure parts: argv parsing, the connect-error mapping (EPERM as codex's sandbox raises it, which
// the process tests can only simulate with a preload), exit codes, and the providers table.

import { RpcClientDefect, RpcClientError } from "effect/rpc/RpcClientError"
import { SocketOpenError, SocketReadError } from "effect/socket/Socket"
import { describe, expect, it } from "vitest"
import { parseArgs } from "../src/Args.ts"
import { table } from "../src/commands/providers.ts"
import { parseValue } from "../src/commands/settings.ts"
import { EXIT, exitFor } from "../src/Output.ts"
import { connectFailure } from "../src/ToCore.ts"
import { PROVIDERS } from "./FakeCore.ts"

const env = { PEDELEC_THREAD_ID: "from-env" }

describe("parseArgs", () => {
  it("reads the agent commands, with --thread-id anywhere and the env as fallback", () => {
    expect(parseArgs(["tool-list"], env)).toEqual({ _tag: "ToolList", threadId: "from-env" })
    expect(parseArgs(["--thread-id", "t1", "tool-spec", "x"], env)).toEqual({
      _tag: "ToolSpec",
      threadId: "t1",
      name: "x"
    })
    expect(parseArgs(["tool-call", "x", '{"a":[1]}', "--thread-id=t2"], env)).toEqual({
      _tag: "ToolCall",
      threadId: "t2",
      name: "x",
      args: { a: [1] }
    })
    expect(parseArgs(["tool-call", "--", "x", '{"a":"--help"}'], env)).toMatchObject({ _tag: "ToolCall", name: "x" })
  })

  it("answers help and version before anything else", () => {
    expect(parseArgs(["tool-call", "--help"], {})).toEqual({ _tag: "Help" })
    expect(parseArgs(["-V"], {})).toEqual({ _tag: "Version" })
    expect(parseArgs(["tool-call", "x", "--", "--help"], env)).toMatchObject({ _tag: "UsageError" })
  })

  it("reports usage errors as JSON for agent commands and as text for user commands", () => {
    expect(parseArgs(["tool-list", "-x"], env)).toMatchObject({ _tag: "UsageError", json: true })
    expect(parseArgs(["settings", "set", "k"], env)).toMatchObject({ _tag: "UsageError", json: false })
    expect(parseArgs(["settings", "set", "k", "--json"], env)).toMatchObject({ _tag: "UsageError", json: true })
    expect(parseArgs(["providers", "--thread-id", "t"], env)).toMatchObject({ _tag: "UsageError", json: true })
    // An agent that forgot the id's value: the command word became the id, yet its shell still reads one JSON line.
    expect(parseArgs(["--thread-id", "tool-call", "add", "-1e27"], env)).toMatchObject({
      _tag: "UsageError",
      json: true
    })
  })

  it("reads the user commands", () => {
    expect(parseArgs(["providers", "--rescan"], {})).toEqual({ _tag: "Providers", json: false, rescan: true })
    expect(parseArgs(["settings", "set", "ollama.apiKey", "-", "--json"], {})).toEqual({
      _tag: "SettingsSet",
      json: true,
      key: "ollama.apiKey",
      value: "-"
    })
  })
})

describe("connectFailure", () => {
  const at = { socketPath: "/home/u/.pedelec/run/core.sock", pid: process.pid }
  const open = (code: string) =>
    new RpcClientError({
      reason: new SocketOpenError({
        kind: "Unknown",
        cause: Object.assign(new Error(`connect ${code} ${at.socketPath}`), { code, syscall: "connect" })
      })
    })

  it("EPERM: the sandbox blocks local sockets, and how the user allows them (exit 3)", () => {
    const failure = connectFailure(open("EPERM"), at)
    expect(failure.exit).toBe(EXIT.unavailable)
    expect(failure.error.code).toBe("CORE_RUNTIME_UNAVAILABLE")
    expect(failure.error.message).toContain("this agent's sandbox blocks local sockets")
    expect(failure.error.message).toContain("-c sandbox_workspace_write.network_access=true")
    expect(failure.error.details).toMatchObject({ errno: "EPERM", syscall: "connect", socketPath: at.socketPath })
  })

  it("ENOENT / ECONNREFUSED: Pedelec is not running; a dead pid makes core.json stale", () => {
    for (const code of ["ENOENT", "ECONNREFUSED"]) {
      const failure = connectFailure(open(code), at)
      expect(failure.exit).toBe(EXIT.unavailable)
      expect(failure.error.message).toContain("Pedelec is not running")
      expect(failure.error.message).not.toContain("stale")
    }
    expect(connectFailure(open("ECONNREFUSED"), { ...at, pid: 2 ** 22 + 1 }).error.message).toContain("stale")
  })

  it("a dropped connection, an unreadable reply and a silent Core each say what happened", () => {
    const dropped = connectFailure(
      new RpcClientError({ reason: new SocketReadError({ cause: new Error("reset") }) }),
      at
    )
    expect(dropped.error.message).toContain("closed before it answered")
    expect(dropped.error.message).toContain("may or may not have reached the page")
    const garbled = connectFailure(
      new RpcClientError({ reason: new RpcClientDefect({ message: "Error decoding message", cause: new Error("x") }) }),
      at
    )
    expect(garbled.error.code).toBe("PROTOCOL_ERROR")
    expect(garbled.exit).toBe(EXIT.unavailable)
    expect(connectFailure({ _tag: "HelloTimeout" }, at).error.message).toContain("did not answer")
  })
})

describe("exit codes and formatting", () => {
  it("maps codes to exits: unavailable is 3, a failed call is 1", () => {
    for (const code of ["CORE_RUNTIME_UNAVAILABLE", "UNAUTHORIZED", "SESSION_NOT_FOUND", "SESSION_ENDED"] as const)
      expect(exitFor(code)).toBe(3)
    for (const code of ["TOOL_NOT_FOUND", "TOOL_ARGS_INVALID", "TOOL_TIMEOUT", "TOOL_CANCELLED"] as const)
      expect(exitFor(code)).toBe(1)
  })

  it("parses settings values as JSON when they parse, else as text", () => {
    expect(parseValue("8080")).toBe(8080)
    expect(parseValue("null")).toBeNull()
    expect(parseValue("codex")).toBe("codex")
    expect(parseValue('["https://a.example"]')).toEqual(["https://a.example"])
  })

  it("lays out the providers table", () => {
    expect(table(PROVIDERS).split("\n")[0]).toBe("PROVIDER  NAME          STATUS       VERSION  NOTE")
    expect(table([])).toContain("No providers found")
  })
})
