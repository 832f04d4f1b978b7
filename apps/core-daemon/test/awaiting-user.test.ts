// A call whose page waits on a person, on a real Core with the built `pedelec-cli mcp` (issue 16.2): the page's
// `tool.awaiting_user` (from the connection holding the claim) pauses the timeout, the MCP client that asked for
// progress hears "waiting on the user", and the call is answered long after its own timeout; the same request from
// another host connection changes nothing (the call times out as usual).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import path from "node:path"
import { createInterface } from "node:readline"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { script } from "@pedelec/providers/scripted/Script"
import { BUILT } from "@pedelec/test-kit/core/CoreProcess"
import { coreForFile, hostClient, isType, ORIGIN, openSession } from "@pedelec/test-kit/core/Harness"
import { sessionCapability } from "@pedelec/test-kit/core/SessionCapability"
import * as Effect from "effect/Effect"

const core = coreForFile()
const TIMEOUT_MS = 1_500
const TOOLS: ToolsManifest = [
  { name: "ask", description: "Asks the user.", argsSchema: { type: "object" }, timeoutMs: TIMEOUT_MS }
]
const CLI = path.join(BUILT.cliBinDir, "..", "dist", "pedelec-cli.mjs")

interface Mcp {
  readonly send: (message: object) => void
  /** The next JSON-RPC line that matches, within the timeout. */
  readonly next: (match: (message: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<unknown>
  readonly seen: Array<Record<string, unknown>>
  readonly child: ChildProcessWithoutNullStreams
}

/** `pedelec-cli mcp` for the session, as an agent CLI starts it, speaking raw JSON-RPC lines. */
const startMcp = (sessionId: SessionId, capability: string): Mcp => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PEDELEC_HOME: core.home }
  const child = spawn(process.execPath, [CLI, "mcp"], {
    env: { ...env, PEDELEC_THREAD_ID: sessionId, PEDELEC_SESSION_CAP: capability }
  })
  const seen: Array<Record<string, unknown>> = []
  const waiting: Array<() => void> = []
  createInterface({ input: child.stdout }).on("line", (line) => {
    seen.push(JSON.parse(line) as Record<string, unknown>)
    for (const wake of waiting.splice(0)) wake()
  })
  const next = async (match: (message: Record<string, unknown>) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const found = seen.find(match)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no matching MCP message; seen ${JSON.stringify(seen)}`)
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }
  return { send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`), next, seen, child }
}

const CLIENT = { name: "raw", version: "0" }
const callAsk = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "ask", arguments: {}, _meta: { progressToken: `p${id}` } }
})
const response = (id: number) => (message: Record<string, unknown>) => message.id === id
const progressOf = (id: number) => (message: Record<string, unknown>) =>
  message.method === "notifications/progress" &&
  (message.params as { progressToken?: unknown } | undefined)?.progressToken === `p${id}`

describe("a call waiting on the user, through pedelec-cli mcp and a real Core", () => {
  it.live("pauses the timeout, tells the MCP client, and only for the claim's own connection", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const page = yield* hostClient(core.info)
        const other = yield* hostClient(core.info)
        const { sessionId, events } = yield* openSession(page, { skills: { guidance: "", tools: TOOLS } })
        yield* page["session.send_text"]({ origin: ORIGIN, sessionId, text: script("sleep 600000") })
        const capability = yield* Effect.promise(() => sessionCapability(sessionId))
        const mcp = startMcp(sessionId, capability)
        yield* Effect.addFinalizer(() => Effect.sync(() => mcp.child.kill()))
        mcp.send({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: CLIENT }
        })
        mcp.send({ jsonrpc: "2.0", method: "notifications/initialized" })
        yield* Effect.promise(() => mcp.next(response(1)))

        // Another connection's word is ignored: the call times out on its own timeout.
        mcp.send(callAsk(2))
        const first = yield* events.next(isType("tool_call"))
        yield* other["tool.awaiting_user"]({ origin: ORIGIN, sessionId, toolCallId: first.toolCallId })
        const timedOut = (yield* Effect.promise(() => mcp.next(response(2), TIMEOUT_MS + 5_000))) as {
          result: { isError?: boolean; content: Array<{ text: string }> }
        }
        assert.isTrue(timedOut.result.isError)
        assert.include(timedOut.result.content[0]?.text ?? "", "TOOL_TIMEOUT")
        assert.isUndefined(mcp.seen.find(progressOf(2)))

        // The claim's connection pauses it: the client hears so, and the answer comes after three timeouts.
        mcp.send(callAsk(3))
        const second = yield* events.next(
          (e): e is typeof first => e.type === "tool_call" && e.toolCallId !== first.toolCallId
        )
        yield* page["tool.awaiting_user"]({ origin: ORIGIN, sessionId, toolCallId: second.toolCallId })
        const heard = (yield* Effect.promise(() => mcp.next(progressOf(3)))) as { params: { message: string } }
        assert.include(heard.params.message, "waiting on the user")
        yield* Effect.sleep(TIMEOUT_MS * 3)
        assert.isUndefined(mcp.seen.find(response(3)))
        yield* page["tool.submit_result"]({
          origin: ORIGIN,
          sessionId,
          toolCallId: second.toolCallId,
          outcome: { ok: true, result: { answer: "yes" } }
        })
        const answered = (yield* Effect.promise(() => mcp.next(response(3)))) as {
          result: { isError?: boolean; content: Array<{ text: string }> }
        }
        assert.notStrictEqual(answered.result.isError, true)
        assert.deepStrictEqual(JSON.parse(answered.result.content[0]?.text ?? "null"), { answer: "yes" })
        yield* page["session.end"]({ origin: ORIGIN, sessionId })
      })
    )
  )
})
