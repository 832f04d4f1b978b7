/**
 * Decoding of page messages (page/PageRequests.ts): the depth bound before Schema, the envelope, the method's params
 * with the pointer of the fault, and which messages cannot be answered at all.
 */
import { assert, describe, it } from "@effect/vitest"
import { decodePageMessage } from "../src/page/PageRequests.ts"

const request = (method: string, params: unknown, id: unknown = "r1") => ({ kind: "request", id, method, params })
const nested = (depth: number): unknown => {
  let value: unknown = "leaf"
  for (let level = 0; level < depth; level++) value = [value]
  return value
}

const refusal = (message: unknown) => {
  const decoded = decodePageMessage(message)
  if (decoded._tag !== "Refused") return assert.fail(`expected a refusal, got ${decoded._tag}`)
  const { response } = decoded
  if (response.ok) return assert.fail("a refusal must not be ok")
  return { id: response.id, error: response.error }
}

describe("decodePageMessage", () => {
  it("decodes a valid request into its method and params", () => {
    const decoded = decodePageMessage(request("session.send_text", { sessionId: "s".repeat(22), text: "hi" }))
    assert.strictEqual(decoded._tag, "Call")
    if (decoded._tag !== "Call") return
    assert.strictEqual(decoded.id, "r1")
    assert.deepStrictEqual(decoded.call as unknown, {
      method: "session.send_text",
      params: { sessionId: "s".repeat(22), text: "hi" }
    })
  })

  it("refuses a message nested deeper than 64 levels with INVALID_INPUT, before any Schema runs", () => {
    const { id, error } = refusal(request("session.create", { input: { skills: nested(80) } }))
    assert.strictEqual(id, "r1")
    assert.strictEqual(error.code, "INVALID_INPUT")
    assert.strictEqual(error.source, "extension")
    assert.isTrue(String(error.details?.pointer).startsWith("/params/input/skills/0/0"))
    // A few levels less is not refused for depth (it is decoded, and fails on its shape instead).
    const shallow = refusal(request("session.create", { input: { skills: nested(10) } }))
    assert.notInclude(String(shallow.error.details?.reason), "deeper than")
  })

  it("refuses bad params with INVALID_INPUT and the pointer of the fault", () => {
    const { error } = refusal(request("session.send_text", { sessionId: "s".repeat(22), text: 42 }))
    assert.strictEqual(error.code, "INVALID_INPUT")
    assert.strictEqual(error.details?.pointer, "/params/text")
    assert.strictEqual(error.details?.method, "session.send_text")
    assert.include(error.message, "/params/text")
  })

  it("refuses a bad tool manifest with the SDK's code and pointer (TOOLS_MANIFEST_INVALID at /skills/…)", () => {
    // Each pointer is the one the SDK's own check (libs/sdk/src/tools/Manifest.ts) gives for the same manifest.
    const cases = [
      [{ argsSchema: { type: "object", properties: 3 } }, "/skills/tools/0/argsSchema/properties"],
      [{ name: "look up" }, "/skills/tools/0/name"]
    ] as const
    for (const [fault, pointer] of cases) {
      const tool = { name: "lookup", description: "Finds a word.", argsSchema: { type: "object" }, ...fault }
      const { error } = refusal(request("session.create", { input: { skills: { guidance: "", tools: [tool] } } }))
      assert.deepStrictEqual([error.code, error.details?.pointer], ["TOOLS_MANIFEST_INVALID", pointer])
    }
  })

  it("refuses unknown keys in params rather than dropping them", () => {
    const { error } = refusal(request("settings.get", { surprise: true }))
    assert.strictEqual(error.code, "INVALID_INPUT")
    assert.strictEqual(error.details?.pointer, "/params/surprise")
  })

  it("refuses `model` without `provider` (a check of the contract, not only of types)", () => {
    const { error } = refusal(request("session.create", { input: { model: "gpt" } }))
    assert.strictEqual(error.code, "INVALID_INPUT")
    assert.strictEqual(error.details?.pointer, "/params/input/model")
  })

  it("answers a malformed envelope that still has an id with PROTOCOL_ERROR", () => {
    assert.strictEqual(refusal(request("no_such_method", {})).error.code, "PROTOCOL_ERROR")
    assert.strictEqual(refusal({ kind: "nonsense", id: "r9" }).error.code, "PROTOCOL_ERROR")
    assert.strictEqual(refusal({ kind: "nonsense", id: "r9" }).id, "r9")
  })

  it("drops what has no usable id: there is nobody to answer", () => {
    for (const message of [
      null,
      42,
      "text",
      [],
      {},
      request("extension.hello", {}, 7),
      request("extension.hello", {}, "bad id!")
    ]) {
      assert.strictEqual(decodePageMessage(message)._tag, "Dropped", JSON.stringify(message))
    }
  })
})
