// AgentWire's decoding of every reply shape effect/rpc's NDJSON protocol can send (as logged against pedelec-core),
// and the constants Agent and Reach restate from the contracts so the agent path loads no effect.
import { SessionCapability, SessionId } from "@pedelec/contracts/Ids"
import { AUTH_HEADERS } from "@pedelec/contracts/node/CoreLink"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import { ToolName } from "@pedelec/contracts/Tool"
import { currentEnvironment, resolveCorePaths } from "@pedelec/core/CorePaths"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { decodeCliOutput, PATTERNS } from "../src/Agent.ts"
import { decodeLine } from "../src/AgentWire.ts"
import * as Reach from "../src/Reach.ts"

const at = { socketPath: "/tmp/core.sock", pid: 1 }
const line = (message: unknown) => JSON.stringify(message)
const codeOf = (answer: ReturnType<typeof decodeLine>) =>
  answer?._tag === "Refusal" ? answer.refusal.error.code : answer?._tag

describe("decodeLine", () => {
  it("reads a Success exit for its request, by string or number id", () => {
    expect(decodeLine(line({ _tag: "Exit", requestId: "1", exit: { _tag: "Success", value: [1] } }), "1", at)).toEqual({
      _tag: "Success",
      value: [1]
    })
    expect(codeOf(decodeLine(line({ _tag: "Exit", requestId: 1, exit: { _tag: "Success", value: 0 } }), "1", at))).toBe(
      "Success"
    )
  })

  it("reads a Fail cause as Core's error, keeping code, message and details only", () => {
    const error = { _tag: "PedelecError", code: "UNAUTHORIZED", message: "no", details: { a: 1 }, retryable: false }
    expect(
      decodeLine(
        line({ _tag: "Exit", requestId: "0", exit: { _tag: "Failure", cause: [{ _tag: "Fail", error }] } }),
        "0",
        at
      )
    ).toEqual({ _tag: "CoreError", error: { code: "UNAUTHORIZED", message: "no", details: { a: 1 } } })
  })

  it("skips Pong and answers PROTOCOL_ERROR for Die, Defect, ClientProtocolError, garbage and strangers", () => {
    expect(decodeLine(line({ _tag: "Pong" }), "0", at)).toBeUndefined()
    for (const bad of [
      line({ _tag: "Exit", requestId: "0", exit: { _tag: "Failure", cause: [{ _tag: "Die", defect: "x" }] } }),
      line({ _tag: "Exit", requestId: "0", exit: { _tag: "Failure", cause: [{ _tag: "Fail", error: { code: 1 } }] } }),
      line({ _tag: "Exit", requestId: "0", exit: { _tag: "Failure", cause: [] } }),
      line({ _tag: "Exit", requestId: "9", exit: { _tag: "Success", value: 1 } }),
      line({ _tag: "Defect", defect: { name: "NdjsonDecodeError" } }),
      line({ _tag: "ClientProtocolError", error: {} }),
      line({ _tag: "Chunk", requestId: "0", values: [1] }),
      "{garbage",
      "[]"
    ])
      expect(codeOf(decodeLine(bad, "0", at))).toBe("PROTOCOL_ERROR")
  })

  it("reads an Interrupt cause as a dropped request (Core stopped it)", () => {
    const answer = decodeLine(
      line({ _tag: "Exit", requestId: "0", exit: { _tag: "Failure", cause: [{ _tag: "Interrupt", fiberId: 3 }] } }),
      "0",
      at
    )
    expect(codeOf(answer)).toBe("CORE_RUNTIME_UNAVAILABLE")
  })
})

describe("decodeCliOutput", () => {
  it("keeps each CliOutput form and rejects the rest", () => {
    expect(decodeCliOutput({ ok: true, result: null, extra: 1 })).toEqual({ ok: true, result: null })
    const file = { ok: true, resultFile: "/f.json", bytes: 3, preview: "{" }
    expect(decodeCliOutput(file)).toEqual(file)
    expect(decodeCliOutput({ ok: false, error: { code: "TOOL_TIMEOUT", message: "late" } })).toEqual({
      ok: false,
      error: { code: "TOOL_TIMEOUT", message: "late" }
    })
    for (const bad of [null, [], { ok: true }, { ok: true, resultFile: "/f", bytes: -1, preview: "" }, { ok: false }])
      expect(decodeCliOutput(bad)).toBeUndefined()
  })
})

describe("constants restated from the contracts", () => {
  it("match the contracts' protocol, header, paths and id patterns", () => {
    expect(Reach.PROTOCOL_VERSION).toBe(PROTOCOL_VERSION)
    expect(Reach.SESSION_CAP_HEADER).toBe(AUTH_HEADERS.sessionCap)
    for (const home of [undefined, "", "/x/home", "rel/home"]) {
      const env = { PEDELEC_HOME: home }
      expect(Reach.runtimeFile(env, "linux", "/home/u")).toBe(
        resolveCorePaths({ ...currentEnvironment(), env, platform: "linux", homedir: "/home/u" }).runtimeFile
      )
    }
    const samples = ["", "a", "a".repeat(22), "a".repeat(43), "a".repeat(65), "a b", "../../etc", "x.y-z_1", "1abc"]
    const agrees = (pattern: RegExp, schema: Schema.Decoder<unknown>) =>
      samples.every((s) => pattern.test(s) === Schema.is(schema)(s))
    expect(agrees(PATTERNS.sessionId, SessionId)).toBe(true)
    expect(agrees(PATTERNS.capability, SessionCapability)).toBe(true)
    expect(agrees(PATTERNS.toolName, ToolName)).toBe(true)
  })
})
