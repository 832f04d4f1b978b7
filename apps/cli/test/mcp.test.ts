// `pedelec-cli mcp` end to end: the built CLI as a child process serving MCP on stdio, driven by Effect's McpClient,
// against the real built Core (test-kit's CoreProcess, the scripted agent). A host client in this file is the page:
// it claims the session's tools, answers `echo`, holds `slow`, and records every call and cancellation it sees.
// Core takes tool calls only while a turn runs, so the scripted agent sleeps through the file's one turn.
// The session capability is read from the scripted agent's environment (test-kit's SessionCapability).
import { existsSync } from "node:fs"
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { NodeChildProcessSpawner, NodeFileSystem, NodePath } from "@effect/platform-node"
import type { Origin, SessionId, ToolCallId } from "@pedelec/contracts/Ids"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { connectHost } from "@pedelec/core-client/CoreClient"
import { BUILT, type CoreProcess, startCoreProcess } from "@pedelec/test-kit/core/CoreProcess"
import { sessionCapability } from "@pedelec/test-kit/core/SessionCapability"
import * as McpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import type * as McpSchema from "effect/ai/McpSchema"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import type * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BUNDLE, runCli } from "./runCli.ts"

const ORIGIN = "http://127.0.0.1:5173" as Origin
const ECHO_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", description: "What to echo." } },
  required: ["text"],
  additionalProperties: false
}
const TOOLS = [
  { name: "wait", description: "Never called here.", argsSchema: { type: "object" } },
  {
    name: "echo",
    description: "Echoes its arguments.",
    argsSchema: ECHO_SCHEMA,
    annotations: { readOnly: true, idempotent: true, title: "Echo" }
  },
  {
    name: "slow",
    description: "Never answers by itself.",
    argsSchema: { type: "object" },
    annotations: { destructive: true }
  }
] as unknown as ToolsManifest

let core: CoreProcess
let scope: Scope.Closeable
let sessionId: SessionId
let capability: string
const seen = { calls: [] as Array<{ tool: string; toolCallId: string }>, cancelled: [] as Array<string> }

const inFile = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.provide(scope)(effect))

/** The page: answers echo at once and holds every other call; the agent's turn runs while the file does. */
const claim = Effect.gen(function* () {
  const host = yield* connectHost(core.info, { component: "native-host", version: "test" })
  const session = yield* host["session.create"]({
    origin: ORIGIN,
    input: { provider: "scripted", autoEndOnDisconnect: false, skills: { guidance: "", tools: TOOLS } }
  })
  const answer = (toolCallId: string, result: Schema.Json) =>
    host["tool.submit_result"]({
      origin: ORIGIN,
      sessionId: session.sessionId,
      toolCallId: toolCallId as ToolCallId,
      outcome: { ok: true, result }
    })
  yield* host["session.subscribe"]({
    origin: ORIGIN,
    sessionId: session.sessionId,
    afterSeq: 0,
    claimTools: true
  }).pipe(
    Stream.runForEach((event) => {
      if (event.type === "tool_call_cancelled") seen.cancelled.push(event.toolCallId)
      if (event.type !== "tool_call") return Effect.void
      seen.calls.push({ tool: event.tool, toolCallId: event.toolCallId })
      return event.tool === "echo" ? answer(event.toolCallId, { echoed: event.args }) : Effect.void
    }),
    Effect.forkScoped
  )
  const fence = ["```pedelec-script", "sleep 600000", "```"].join("\n")
  yield* host["session.send_text"]({ origin: ORIGIN, sessionId: session.sessionId, text: fence })
  return session.sessionId
})

const agentEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  PEDELEC_HOME: core.home,
  PEDELEC_THREAD_ID: sessionId,
  PEDELEC_SESSION_CAP: capability,
  ...extra
})

/** A connected McpClient on a fresh `pedelec-cli mcp` child, closed (stdin, then the child) with the scope. */
const mcpClient = McpClient.make({ name: "pedelec-test", version: "test" }).pipe(
  Effect.provideServiceEffect(
    McpClient.Transport,
    Effect.suspend(() =>
      McpClient.stdio({
        command: ChildProcess.make(process.execPath, [BUNDLE, "mcp"], { env: agentEnv(), extendEnv: false }),
        protocol: McpProtocol.v2025_11_25
      })
    )
  ),
  Effect.provide(
    NodeChildProcessSpawner.layer.pipe(Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)))
  )
)

const toolNamed = (tools: ReadonlyArray<McpSchema.Tool>, name: string) => {
  const tool = tools.find((candidate) => candidate.name === name)
  if (tool === undefined) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(", ")}`)
  return tool
}

const textOf = (result: McpSchema.CallToolResult) => {
  const [first] = result.content
  if (first?.type !== "text") throw new Error(`expected one text block, got ${JSON.stringify(result.content)}`)
  return JSON.parse(first.text) as Record<string, unknown>
}

const RAW_CLIENT = { name: "raw", version: "0" }

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

beforeAll(async () => {
  if (!existsSync(BUILT.coreBin) || !existsSync(path.join(BUILT.coreBin, "../../dist/pedelec-core.mjs")))
    throw new Error("this suite runs the built Core: run `npx nx run core-daemon:build` first")
  const home = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-cli-mcp-")))
  core = await startCoreProcess({ home, env: { PEDELEC_ENABLE_SCRIPTED: "1" } })
  scope = Effect.runSync(Scope.make())
  sessionId = await inFile(claim)
  capability = await sessionCapability(sessionId)
}, 60_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await core?.stop()
  if (core !== undefined) await rm(core.home, { recursive: true, force: true })
})

describe("pedelec-cli mcp", () => {
  it("lists the page's tools with their argument schemas and hints", async () => {
    const tools = await inFile(Effect.flatMap(mcpClient, (client) => client.listTools()))
    expect(tools.map((tool) => tool.name)).toEqual(["wait", "echo", "slow"])
    const echo = toolNamed(tools, "echo")
    expect(echo.description).toBe("Echoes its arguments.")
    expect(echo.inputSchema).toEqual(ECHO_SCHEMA)
    expect(echo.title).toBe("Echo")
    expect(echo.annotations).toMatchObject({ title: "Echo", readOnlyHint: true, idempotentHint: true })
    expect(toolNamed(tools, "slow").annotations).toMatchObject({ destructiveHint: true })
  })

  it("speaks plain JSON-RPC lines on stdout, nothing else, and exits 0 when stdin closes", async () => {
    const requests = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {} } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }
    ].map((request) => JSON.stringify({ ...request, params: { ...request.params, clientInfo: RAW_CLIENT } }))
    const run = await runCli(["mcp"], { env: agentEnv(), stdin: `${requests.join("\n")}\n` })
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const [initialized, listed, ...rest] = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line))
    expect(rest).toEqual([])
    expect(initialized.result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "pedelec" } })
    const tools = listed.result.tools as ReadonlyArray<{ name: string; annotations?: unknown }>
    expect(tools.find((tool) => tool.name === "wait")).not.toHaveProperty("annotations")
    expect(tools.find((tool) => tool.name === "echo")?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true
    })
  })

  it("answers a call with the page's result, and bad arguments with Core's TOOL_ARGS_INVALID as isError", async () => {
    const [ok, bad] = await inFile(
      Effect.gen(function* () {
        const client = yield* mcpClient
        const echo = toolNamed(yield* client.listTools(), "echo")
        const ok = yield* client.callTool({ tool: echo, arguments: { text: "hi" } })
        const bad = yield* client.callTool({ tool: echo, arguments: { text: 42 } })
        return [ok, bad] as const
      })
    )
    expect(ok.isError).not.toBe(true)
    expect(textOf(ok)).toEqual({ echoed: { text: "hi" } })
    expect(bad.isError).toBe(true)
    const line = textOf(bad) as { ok: boolean; error: { code: string; message: string; details: unknown } }
    expect(line.ok).toBe(false)
    expect(line.error.code).toBe("TOOL_ARGS_INVALID")
    expect(line.error.details).toMatchObject({ tool: "echo", path: "/text" })
    expect(line.error.message).toContain("call again")
  })

  it("cancels the page's handler on notifications/cancelled, and keeps serving on the same connection", async () => {
    const after = await inFile(
      Effect.gen(function* () {
        const client = yield* mcpClient
        const tools = yield* client.listTools()
        const before = seen.calls.length
        const call = yield* Effect.forkChild(client.callTool({ tool: toolNamed(tools, "slow"), arguments: {} }), {
          startImmediately: true
        })
        const offered = yield* Effect.promise(async () => {
          for (let tries = 0; tries < 200; tries++) {
            const slow = seen.calls.slice(before).find((c) => c.tool === "slow")
            if (slow !== undefined) return slow
            await sleep(25)
          }
          throw new Error("the page never saw the slow call")
        })
        yield* Fiber.interrupt(call)
        yield* Effect.promise(async () => {
          for (let tries = 0; tries < 200 && !seen.cancelled.includes(offered.toolCallId); tries++) await sleep(25)
        })
        expect(seen.cancelled).toContain(offered.toolCallId)
        return yield* client.callTool({ tool: toolNamed(tools, "echo"), arguments: { text: "after" } })
      })
    )
    expect(textOf(after)).toEqual({ echoed: { text: "after" } })
  })

  it("serves many sequential calls over its one connection (median ms per call vs a tool-call spawn)", async () => {
    const CALLS = 40
    const mcpMs = await inFile(
      Effect.gen(function* () {
        const client = yield* mcpClient
        const echo = toolNamed(yield* client.listTools(), "echo")
        const times: Array<number> = []
        for (let i = 0; i < CALLS; i++) {
          const started = performance.now()
          const result = yield* client.callTool({ tool: echo, arguments: { text: `n${i}` } })
          times.push(performance.now() - started)
          expect(textOf(result)).toEqual({ echoed: { text: `n${i}` } })
        }
        return times
      })
    )
    const spawnMs: Array<number> = []
    for (let i = 0; i < 8; i++) {
      const started = performance.now()
      const run = await runCli(["tool-call", "echo", '{"text":"x"}'], { env: agentEnv() })
      spawnMs.push(performance.now() - started)
      expect(run.code).toBe(0)
    }
    process.stdout.write(
      `[mcp] ${CALLS} sequential calls: median ${median(mcpMs).toFixed(2)} ms per call over pedelec-cli mcp; ` +
        `pedelec-cli tool-call spawn median ${median(spawnMs).toFixed(1)} ms (${(median(spawnMs) / median(mcpMs)).toFixed(1)}×)\n`
    )
    expect(median(mcpMs)).toBeLessThan(median(spawnMs))
  }, 60_000)

  it("refuses to start for a capability Core does not know: one line on stderr, exit 3, nothing on stdout", async () => {
    const run = await runCli(["mcp"], {
      env: agentEnv({ PEDELEC_SESSION_CAP: capability.replace(/.$/, (c) => (c === "A" ? "B" : "A")) })
    })
    expect(run.code).toBe(3)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^pedelec-cli: .*\[UNAUTHORIZED\]\n$/)
  })
})
