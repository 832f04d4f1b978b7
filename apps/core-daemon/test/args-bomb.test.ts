// Hostile tool arguments against a real Core over its socket: a page's argsSchema with a 32×32 nested oneOf of
// patterns, or a pattern re2js accepts but runs for seconds, and the agent's call against it (agent role, as
// pedelec-cli makes it). The call fails TOOL_ARGS_INVALID naming the limit, and meanwhile Core answers another
// client at once: validation runs in a worker, not on the loop that serves everyone. Before, the slow-regex call
// held Core's loop for ~9 s (every other client waited that long) and the bomb could take Core out of memory.
// Also Core as the authority on argsSchema: a keyword it does not support is refused with its pointer, the SDK's
// code and pointer, where it used to be stripped silently (a typed client strips it too, so this one is raw NDJSON).
import { assert, describe, it } from "@effect/vitest"
import { decodeArgsSchema } from "@pedelec/contracts/ArgsSchema"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import {
  agentClient,
  coreForFile,
  failureOf,
  hostClient,
  ORIGIN,
  sessionWithAgent
} from "@pedelec/test-kit/core/Harness"
import { failureOfExit, rawConnect } from "@pedelec/test-kit/faults/RawIpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"

const core = coreForFile()

/** 29 characters whose program is large: re2js is linear in the input, ~31 µs a character here (ValidationBudget). */
const SLOW_PATTERN = "(?:\\pL|\\pN|\\pP|\\pS){1,900}\\pZ"

const bombItems = {
  oneOf: Array.from({ length: 32 }, (_, i) => ({
    oneOf: Array.from({ length: 32 }, (_, j) => ({ type: "string", pattern: `^x${i}_${j}$` }))
  }))
}

const tools = [
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } },
  {
    name: "hostile",
    description: "A page's hostile schema.",
    argsSchema: {
      type: "object",
      properties: { list: { type: "array", items: bombItems }, text: { type: "string", pattern: SLOW_PATTERN } }
    }
  }
] as unknown as ToolsManifest

/** Starts the hostile call, then times another client's request made while it is being checked. */
const whileChecking = (args: Schema.Json) =>
  Effect.gen(function* () {
    const host = yield* hostClient(core.info)
    const { sessionId, capability } = yield* sessionWithAgent(host, { skills: { guidance: "", tools } })
    const agent = yield* agentClient(core.info, { sessionCap: capability })
    const started = performance.now()
    const refused = yield* Effect.forkChild(failureOf(agent["tool.call"]({ sessionId, name: "hostile", args })), {
      startImmediately: true
    })
    yield* Effect.sleep(50)
    const other = yield* hostClient(core.info)
    const asked = performance.now()
    const listed = yield* other["session.list"]({ origin: ORIGIN })
    const answeredMs = performance.now() - asked
    const error = yield* Fiber.join(refused)
    const refusedMs = performance.now() - started
    assert.isTrue(listed.some((info) => info.sessionId === sessionId))
    return { answeredMs, refusedMs, error }
  }).pipe(Effect.scoped)

describe("hostile tool arguments against a real Core", () => {
  it.live(
    "a slow-regex call (90,000 characters) fails TOOL_ARGS_INVALID (limit time); Core answers another client meanwhile",
    () =>
      Effect.gen(function* () {
        // Three times the 1 s budget: 30,000 characters finished in 0.97 s on Node 24 once, a mismatch naming no limit.
        const { answeredMs, refusedMs, error } = yield* whileChecking({ text: "é".repeat(90_000) })
        process.stdout.write(
          `[args-bomb] slow regex: another client answered in ${answeredMs.toFixed(1)} ms; refused after ${refusedMs.toFixed(0)} ms\n`
        )
        assert.strictEqual(error?.code, "TOOL_ARGS_INVALID")
        assert.strictEqual(error?.details?.limit, "time")
        assert.isBelow(answeredMs, 200)
      }),
    60_000
  )

  it.live(
    "the 32×32 oneOf bomb (12,000 items) fails TOOL_ARGS_INVALID (limit work); Core answers another client meanwhile",
    () =>
      Effect.gen(function* () {
        const list = Array.from({ length: 12_000 }, (_, k) => `x${k % 32}_${k % 31}`)
        const { answeredMs, refusedMs, error } = yield* whileChecking({ list })
        process.stdout.write(
          `[args-bomb] oneOf bomb: another client answered in ${answeredMs.toFixed(1)} ms; refused after ${refusedMs.toFixed(0)} ms\n`
        )
        assert.strictEqual(error?.code, "TOOL_ARGS_INVALID")
        // The work budget stops it; on a loaded machine the 1 s time budget may come first. Either is a refusal.
        assert.oneOf(error?.details?.limit, ["work", "time"])
        assert.isBelow(answeredMs, 200)
      }),
    60_000
  )

  it.live.each([
    ["format", { type: "object", properties: { when: { type: "string", format: "date-time" } } }],
    ["an unknown keyword", { type: "object", properties: { n: { type: "integer", multipleOf: 2 } } }]
  ])("session.create with %s in an argsSchema is TOOLS_MANIFEST_INVALID with the SDK's pointer", ([, argsSchema]) =>
    Effect.promise(async () => {
      const sdk = decodeArgsSchema(argsSchema)
      assert.isTrue(Result.isFailure(sdk))
      const pointer = `/skills/tools/0/argsSchema${Result.isFailure(sdk) ? sdk.failure.pointer : ""}`
      const raw = await rawConnect(core.info.socketPath, core.info.launchSecret)
      try {
        raw.request("1", "core.hello", { protocolVersion: PROTOCOL_VERSION, component: "native-host", version: "test" })
        await raw.answer("1")
        const tool = { name: "t", description: "A tool.", argsSchema }
        const input = { provider: "scripted", skills: { guidance: "", tools: [tool] } }
        raw.request("2", "session.create", { origin: ORIGIN, input })
        const answer = await raw.answer("2")
        const failure = answer?._tag === "Exit" ? failureOfExit(answer.exit) : undefined
        const error =
          failure?._tag === "Fail" ? (failure.error as { code?: string; details?: { pointer?: string } }) : {}
        assert.strictEqual(error.code, "TOOLS_MANIFEST_INVALID")
        assert.strictEqual(error.details?.pointer, pointer)
      } finally {
        raw.close()
      }
    })
  )
})
