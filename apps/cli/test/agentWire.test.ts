// AgentWire's decoding of every reply shape effect/rpc's NDJSON protocol can send (as logged against pedelec-core),
// and the constants Agent and Reach restate from the contracts so the agent path loads no effect.
import { readFile, stat } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { decodeCliOutput } from "../src/Agent.ts"
import { decodeLine } from "../src/AgentWire.ts"

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

describe("the agent path stays small", () => {
  it("tool-list, tool-spec and tool-call load no chunk with effect in it", async () => {
    const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist")
    const importsOf = async (file: string) =>
      [...(await readFile(file, "utf8")).matchAll(/(?:from|import)\s*\(?\s*"(\.\.?\/[^"]+\.mjs)"/g)].map((m) =>
        path.resolve(path.dirname(file), m[1]!)
      )
    const entry = path.join(dist, "pedelec-cli.mjs")
    const agentChunk = (await importsOf(entry)).find((file) => path.basename(file).startsWith("Agent-"))
    expect(agentChunk).toBeDefined()
    // Everything the agent chunk pulls in, transitively: small, and never the Program chunk with effect/rpc.
    const seen = new Set<string>()
    const queue = [agentChunk!]
    while (queue.length > 0) {
      const file = queue.pop()!
      if (seen.has(file)) continue
      seen.add(file)
      queue.push(...(await importsOf(file)))
    }
    const names = [...seen].map((file) => path.basename(file))
    expect(names.some((name) => name.startsWith("Program-"))).toBe(false)
    const bytes = await Promise.all([...seen].map(async (file) => (await stat(file)).size))
    expect(bytes.reduce((a, b) => a + b, 0)).toBeLessThan(64 * 1024)
  })
})
