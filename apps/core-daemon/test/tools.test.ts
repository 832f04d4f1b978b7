// Tool routing through a real Core, a real scripted agent and the real pedelec-cli: what the agent sees when Core
// refuses, times out or loses a call, and what the page sees (events, late results).
import { readFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { script } from "@pedelec/providers/scripted/Script"
import {
  chatOf,
  cliLineOf,
  cliLinesOf,
  completionOf,
  coreForFile,
  failureCode,
  hostClient,
  isType,
  ORIGIN,
  openSession,
  runTurnAnswering,
  sessionProcesses,
  type ToolCall,
  waitUntil
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

/** The owner grace is short here so that its test need not wait Core's default 10 s. */
const OWNER_GRACE_MS = 2_000
const core = coreForFile({ env: { PEDELEC_OWNER_GRACE_MS: String(OWNER_GRACE_MS) } })

const EMPTY = { type: "object", properties: {} } as const

const tools: ToolsManifest = [
  {
    name: "add",
    description: "Adds two integers.",
    argsSchema: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
      additionalProperties: false
    }
  },
  {
    name: "match",
    description: "Takes a run of a's.",
    argsSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } }, required: ["s"] }
  },
  { name: "slow", description: "Answers after its timeout.", timeoutMs: 1_000, argsSchema: EMPTY },
  { name: "wait", description: "Waits for the page.", argsSchema: EMPTY },
  { name: "big", description: "Returns 50 KiB.", argsSchema: EMPTY }
]
const skills = { guidance: "Use the tools.", tools }

describe("tools through a real Core, scripted agent and pedelec-cli", () => {
  it.live("a second send_text while a turn runs is SESSION_BUSY, and the first turn still completes", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId, events } = yield* openSession(client, { skills })
      const send = (text: string) => client["session.send_text"]({ origin: ORIGIN, sessionId, text })
      const { turnId } = yield* send(script("call wait {}", "say done"))
      // Running (before the call) and then waiting for the page: busy either way.
      assert.strictEqual(yield* failureCode(send("again")), "SESSION_BUSY")
      const call = yield* events.next(isType("tool_call"))
      assert.strictEqual(yield* failureCode(send("again")), "SESSION_BUSY")
      assert.strictEqual(yield* failureCode(client["session.prepare"]({ origin: ORIGIN, sessionId })), "SESSION_BUSY")
      yield* client["tool.submit_result"]({
        origin: ORIGIN,
        sessionId,
        toolCallId: call.toolCallId,
        outcome: { ok: true, result: "ok" }
      })
      const completed = yield* events.next(completionOf(turnId))
      assert.strictEqual(completed.reason, "completed")
      assert.strictEqual(completed.text, "done")
      assert.strictEqual(events.seen.filter(isType("turn_completed")).length, 1, "the refused sends started no turn")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("invalid arguments reach the agent as TOOL_ARGS_INVALID with the path and reason, never the page", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId, events } = yield* openSession(client, { skills })
      const text = script('call add {"a":1,"b":"two"}', 'call add {"a":1,"b":2,"c":3}', 'call add {"a":1}', "say done")
      const completed = yield* runTurnAnswering(client, events, sessionId, text, () => ({ ok: true, result: 0 }))
      assert.strictEqual(completed.reason, "completed")
      const [wrongType, extraKey, missing] = cliLinesOf(events, completed.turnId, "add")
      for (const line of [wrongType, extraKey, missing]) {
        assert.strictEqual(line?.exit, 1, "a refused call is a failed tool call: exit 1")
        assert.isFalse(line?.output.ok)
        assert.strictEqual(line?.output.error?.code, "TOOL_ARGS_INVALID")
      }
      assert.strictEqual(wrongType?.output.error?.details?.path, "/b")
      assert.match(String(wrongType?.output.error?.details?.reason), /integer|number/i)
      assert.include(String(wrongType?.output.error?.message), "/b")
      assert.strictEqual(extraKey?.output.error?.details?.path, "/c")
      assert.include(String(extraKey?.output.error?.details?.reason), "additionalProperties")
      assert.strictEqual(missing?.output.error?.details?.path, "/b")
      assert.include(String(missing?.output.error?.details?.reason), "missing")
      assert.lengthOf(events.seen.filter(isType("tool_call")), 0, "Core refused before the page saw anything")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("a catastrophic pattern against 50,000 characters fails fast; a matching value reaches the page", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId, events } = yield* openSession(client, { skills })
      const evil = `${"a".repeat(50_000)}b`
      const text = script(`call match {"s":"${evil}"}`, 'call match {"s":"aaaa"}', "say done")
      const started = Date.now()
      const completed = yield* runTurnAnswering(client, events, sessionId, text, () => ({ ok: true, result: "ok" }))
      const elapsed = Date.now() - started
      assert.strictEqual(completed.reason, "completed")
      // Generous for a loaded 2-core CI machine: a backtracking engine would take hours, not seconds.
      assert.isBelow(elapsed, 20_000)
      const [refused, accepted] = cliLinesOf(events, completed.turnId, "match")
      assert.strictEqual(refused?.exit, 1)
      assert.strictEqual(refused?.output.error?.code, "TOOL_ARGS_INVALID")
      assert.strictEqual(refused?.output.error?.details?.path, "/s")
      assert.strictEqual(accepted?.exit, 0)
      assert.deepStrictEqual(accepted?.output, { ok: true, result: "ok" })
      const calls = events.seen.filter(isType("tool_call"))
      assert.deepStrictEqual(
        calls.map((call) => call.args),
        [{ s: "aaaa" }]
      )
      // Core still answers promptly afterwards.
      const info = yield* client["session.resume"]({ origin: ORIGIN, sessionId })
      assert.strictEqual(info.status, "idle")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live(
    "a call past its timeout is TOOL_TIMEOUT for the agent, cancelled for the page, and a late result is ignored",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const { sessionId, events } = yield* openSession(client, { skills })
        const { turnId } = yield* client["session.send_text"]({
          origin: ORIGIN,
          sessionId,
          text: script("call slow {}", "say after")
        })
        const call = yield* events.next(isType("tool_call"))
        assert.strictEqual(call.timeoutMs, 1_000)
        const offeredAt = Date.now()
        const cancelled = yield* events.next(isType("tool_call_cancelled"), 10_000)
        assert.strictEqual(cancelled.toolCallId, call.toolCallId)
        assert.strictEqual(cancelled.reason, "TOOL_TIMEOUT")
        yield* Effect.sleep(Math.max(0, offeredAt + 1_500 - Date.now()))
        const late = yield* client["tool.submit_result"]({
          origin: ORIGIN,
          sessionId,
          toolCallId: call.toolCallId,
          outcome: { ok: true, result: "too late" }
        })
        assert.isFalse(late.accepted)
        const completed = yield* events.next(completionOf(turnId))
        assert.strictEqual(completed.reason, "completed")
        const line = cliLineOf(events, turnId, "slow")
        assert.strictEqual(line.exit, 1)
        assert.strictEqual(line.output.error?.code, "TOOL_TIMEOUT")
        assert.notInclude(chatOf(events, turnId).join("\n"), "too late")
        assert.lengthOf(events.seen.filter(isType("tool_result")), 0, "the late result never became a result")
        yield* client["session.end"]({ origin: ORIGIN, sessionId })
      }).pipe(Effect.scoped)
  )

  it.live("pedelec-cli killed mid-call cancels the page's call (TOOL_CANCELLED) and frees the queue", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId, events } = yield* openSession(client, { skills })
      const text = script("call wait {}", 'call add {"a":2,"b":3}', "say done")
      const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
      const first = yield* events.next(isType("tool_call"))
      assert.strictEqual(first.tool, "wait", `the agent saw: ${chatOf(events, turnId).join(" | ")}`)
      const isCli = (argv: ReadonlyArray<string>) => argv.includes("tool-call") && argv.includes("wait")
      const [cli] = yield* Effect.promise(() =>
        waitUntil(
          "the session's pedelec-cli",
          () => sessionProcesses(sessionId),
          (found) => found.some((p) => isCli(p.argv))
        ).then((found) => found.filter((p) => isCli(p.argv)))
      )
      process.kill(cli!.pid, "SIGKILL")
      const cancelled = yield* events.next(isType("tool_call_cancelled"), 10_000)
      assert.strictEqual(cancelled.toolCallId, first.toolCallId)
      assert.strictEqual(cancelled.reason, "TOOL_CANCELLED")
      // The queue moved on: the next call reaches the page and its answer reaches the agent.
      const second = yield* events.next(isType("tool_call"))
      assert.strictEqual(second.tool, "add")
      const answered = yield* client["tool.submit_result"]({
        origin: ORIGIN,
        sessionId,
        toolCallId: second.toolCallId,
        outcome: { ok: true, result: 5 }
      })
      assert.isTrue(answered.accepted)
      const stale = yield* client["tool.submit_result"]({
        origin: ORIGIN,
        sessionId,
        toolCallId: first.toolCallId,
        outcome: { ok: true, result: "late" }
      })
      assert.isFalse(stale.accepted)
      const completed = yield* events.next(completionOf(turnId))
      assert.strictEqual(completed.reason, "completed")
      const chats = chatOf(events, turnId)
      assert.isTrue(
        chats.some((line) => /^tool wait exit (128|137)/.test(line)),
        `the killed CLI exits by signal: ${chats.join(" | ")}`
      )
      assert.deepStrictEqual(cliLineOf(events, turnId, "add").output, { ok: true, result: 5 })
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("a 50 KiB result reaches the agent as a file under .pedelec-runtime/tmp holding the exact JSON", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { session, sessionId, events } = yield* openSession(client, { skills })
      const result = { data: "x".repeat(50 * 1024), unicode: "é✓" }
      const completed = yield* runTurnAnswering(client, events, sessionId, script("call big {}", "say done"), () => ({
        ok: true,
        result
      }))
      assert.strictEqual(completed.reason, "completed")
      const line = cliLineOf(events, completed.turnId, "big")
      assert.strictEqual(line.exit, 0)
      assert.isTrue(line.output.ok)
      assert.isUndefined(line.output.result, "the result itself is not inline")
      const file = String(line.output.resultFile)
      assert.strictEqual(path.dirname(file), path.join(session.workspace.path, ".pedelec-runtime", "tmp"))
      const expected = JSON.stringify(result)
      const written = yield* Effect.promise(() => readFile(file, "utf8"))
      assert.strictEqual(written, expected)
      assert.strictEqual(line.output.bytes, Buffer.byteLength(expected))
      assert.isTrue(expected.startsWith(String(line.output.preview)))
      assert.isBelow(line.raw.length, 4 * 1024, "the line the agent's shell sees stays short")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live(
    "a call nobody claims ends TOOL_OWNER_GONE after the grace period",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        // Observing without claiming the tools: no tab handles them.
        const { sessionId, events } = yield* openSession(client, { skills }, { claimTools: false })
        const started = Date.now()
        const { turnId } = yield* client["session.send_text"]({
          origin: ORIGIN,
          sessionId,
          text: script("call wait {}", "say after")
        })
        const call: ToolCall = yield* events.next(isType("tool_call"))
        const cancelled = yield* events.next(isType("tool_call_cancelled"), OWNER_GRACE_MS + 10_000)
        assert.strictEqual(cancelled.toolCallId, call.toolCallId)
        assert.strictEqual(cancelled.reason, "TOOL_OWNER_GONE")
        assert.isAtLeast(Date.now() - started, OWNER_GRACE_MS - 100, "not before the grace period")
        const completed = yield* events.next(completionOf(turnId))
        assert.strictEqual(completed.reason, "completed")
        const line = cliLineOf(events, turnId, "wait")
        assert.strictEqual(line.exit, 1)
        assert.strictEqual(line.output.error?.code, "TOOL_OWNER_GONE")
        yield* client["session.end"]({ origin: ORIGIN, sessionId })
      }).pipe(Effect.scoped),
    30_000
  )
})
