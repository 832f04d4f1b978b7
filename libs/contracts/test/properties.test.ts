/**
 * Properties of every schema in the table: arbitrary JSON never makes a decoder throw and is rejected as input (a
 * SchemaError, never a defect); corrupted valid values (test/corrupt.ts) are always rejected. Then the targeted
 * properties of the ids, `Origin`, `AssetPath` and `ToolName`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { AssetPath } from "../src/Assets.ts"
import { LaunchSecret, Origin, RequestId, SessionCapability, SessionId, ToolCallId, TurnId } from "../src/Ids.ts"
import { jsonDepthExceeded } from "../src/JsonPointer.ts"
import { CreateSessionInput } from "../src/Session.ts"
import { ToolName } from "../src/Tool.ts"
import { corruptionsOf } from "./corrupt.ts"
import { type AnyCodec, SCHEMAS } from "./schemas.ts"

const strict = { onExcessProperty: "error" } as const

const accepts = (schema: AnyCodec, input: unknown): boolean =>
  Exit.isSuccess(Schema.decodeUnknownExit(schema)(input, strict))

/** Decodes `input`; a thrown exception fails the test, and a failure must be a SchemaError, not a defect. */
const assertDecodesCleanly = (schema: AnyCodec, input: unknown): void => {
  const exit = Schema.decodeUnknownExit(schema)(input, strict)
  if (Exit.isFailure(exit)) {
    assert.isFalse(Cause.hasDies(exit.cause), `a defect, not a rejection: ${String(Cause.squash(exit.cause))}`)
    assert.isTrue(Schema.isSchemaError(Cause.squash(exit.cause)))
  }
}

/** `leaf` wrapped `depth` times, alternating arrays and objects. */
const nest = (leaf: unknown, depth: number): unknown => {
  let value = leaf
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { type: value }
  return value
}

const deepJson = fc
  .tuple(fc.jsonValue({ maxDepth: 3 }), fc.integer({ min: 20, max: 2_000 }))
  .map(([leaf, depth]) => nest(leaf, depth))

describe("arbitrary JSON never throws and is rejected as input", () => {
  it.each(SCHEMAS)("$name", ({ schema }) => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.jsonValue({ maxDepth: 12, depthSize: "large" }), deepJson), (input) =>
        assertDecodesCleanly(schema, input)
      ),
      { numRuns: 60 }
    )
  })

  it("a 100,000-deep value is rejected or accepted without throwing", () => {
    const deep = nest(1, 100_000)
    for (const { schema } of SCHEMAS) assertDecodesCleanly(schema, deep)
  })

  // Schema decoding is recursive, so every link refuses messages nested deeper than MAX_JSON_DEPTH before decoding
  // (jsonDepthExceeded). These two tests pin both halves: the guard finds what is too deep, and everything within the
  // bound, even the recursive argsSchema inside create_session, decodes without exhausting the stack.
  const createSessionWith = (levels: number) => {
    let node: unknown = { type: "string" }
    for (let level = 0; level < levels; level++) node = { type: "array", items: node }
    const tools = [{ name: "deep", description: "Deep.", argsSchema: { type: "object", properties: { x: node } } }]
    return { skills: { guidance: "", tools } }
  }

  it("the depth guard flags a deeply nested argsSchema inside create_session, without recursion", () => {
    const pointer = jsonDepthExceeded(createSessionWith(100_000))
    assert.isString(pointer)
    assert.isTrue(pointer!.startsWith("/skills/tools/0/argsSchema/properties/x/items/items"))
  })

  it("every create_session within the depth guard decodes without a defect", () => {
    let levels = 0
    while (jsonDepthExceeded(createSessionWith(levels + 1)) === undefined) levels++
    assert.isAbove(levels, 40)
    assertDecodesCleanly(CreateSessionInput, createSessionWith(levels))
    assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(CreateSessionInput)(createSessionWith(levels))))
  })
})

/** Schemas that accept every value (`Schema.Void` of rpcs without payload or success): nothing to corrupt. */
const ACCEPTS_ANYTHING = new Set([
  "HostRpcs.settings.get.payload",
  "HostRpcs.session.end.success",
  "HostRpcs.tool.progress.success",
  "HostRpcs.tool.awaiting_user.success",
  "AgentRpcs.tool.waits_on_user.success",
  "DesktopRpcs.desktop.status.payload",
  "DesktopRpcs.desktop.settings.get.payload",
  "DesktopRpcs.desktop.effort.describe.payload",
  "DesktopRpcs.desktop.session.list.payload",
  "DesktopRpcs.desktop.events.watch.payload",
  "DesktopRpcs.desktop.origin.policies.payload",
  "DesktopRpcs.desktop.session.end.success"
])

const assertCorruptionsRejected = (name: string, schema: AnyCodec, value: unknown): void => {
  const encoded = Schema.encodeUnknownSync(schema)(value)
  const corruptions = corruptionsOf(schema.ast, encoded)
  if (!ACCEPTS_ANYTHING.has(name)) assert.isNotEmpty(corruptions, "no corruption found")
  for (const { at, what, value: corrupted } of corruptions) {
    assert.isFalse(accepts(schema, corrupted), `accepted ${what} at "${at}": ${JSON.stringify(corrupted)}`)
  }
}

describe("never accepts an invalid value: corrupted valid values are rejected", () => {
  for (const { name, schema, examples, derived } of SCHEMAS) {
    if (derived) {
      it.prop(name, [schema], ([value]) => assertCorruptionsRejected(name, schema, value), { arbitrary: { runs: 25 } })
    }
    if (examples.length > 0) {
      it(`${name} (hand-written values)`, () => {
        for (const example of examples) assertCorruptionsRejected(name, schema, example)
      })
    }
  }

  it("corrupts at depth: deletes a nested required key, retypes a nested field", () => {
    const paths = corruptionsOf(CreateSessionInput.ast, {
      workspace: { path: "/tmp/x" },
      skills: { guidance: "", tools: [{ name: "t", description: "d", argsSchema: { type: "object" } }] }
    }).map(({ at, what }) => `${what} at ${at}`)
    assert.includeMembers(paths, [
      "a required key deleted at /workspace/path",
      "a number instead of a string at /workspace/path",
      "a required key deleted at /skills/tools/0/argsSchema/type",
      "a string outside the literals at /skills/tools/0/argsSchema/type",
      "an unknown key added at /skills/tools/0/pedelecUnknownKey"
    ])
  })
})

const BASE64URL = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"]
const urlSafe = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...BASE64URL), minLength, maxLength })
const notBase64url = fc
  .string({ unit: "binary", minLength: 1, maxLength: 1 })
  .filter((char) => !BASE64URL.includes(char))

const IDS: ReadonlyArray<readonly [string, AnyCodec, number, number]> = [
  ["SessionId", SessionId, 22, 64],
  ["TurnId", TurnId, 8, 64],
  ["ToolCallId", ToolCallId, 8, 64],
  ["RequestId", RequestId, 1, 64],
  ["SessionCapability", SessionCapability, 43, 128],
  ["LaunchSecret", LaunchSecret, 43, 128]
]

describe.each(IDS)("%s: base64url, %i to %i characters", (_, schema, min, max) => {
  it("accepts every base64url string within the bounds", () => {
    fc.assert(fc.property(urlSafe(min, max), (id) => accepts(schema, id)))
  })

  it("rejects one character too short or too long", () => {
    fc.assert(fc.property(urlSafe(max + 1, max + 64), (id) => !accepts(schema, id)))
    fc.assert(fc.property(urlSafe(0, min - 1), (id) => !accepts(schema, id)))
  })

  it("rejects any character outside base64url, anywhere", () => {
    fc.assert(
      fc.property(urlSafe(min, max - 1), notBase64url, fc.nat(), (id, char, at) => {
        const position = at % (id.length + 1)
        return !accepts(schema, `${id.slice(0, position)}${char}${id.slice(position)}`)
      })
    )
  })

  it.each(["=", "+", "/", " ", ".", "é", "\n", "\u0000"])(
    "rejects %j (padding, base64, whitespace, control)",
    (char) => {
      const valid = "A".repeat(Math.max(min, 2))
      assert.isTrue(accepts(schema, valid))
      assert.isFalse(accepts(schema, `${valid.slice(1)}${char}`))
    }
  )

  it("rejects non-strings", () => {
    for (const input of [null, 12345, ["A".repeat(min)], { id: "A".repeat(min) }]) {
      assert.isFalse(accepts(schema, input))
    }
  })
})

describe("Origin: scheme, host and port only", () => {
  const table: ReadonlyArray<readonly [string, boolean]> = [
    ["https://example.com", true],
    ["http://localhost:3000", true],
    ["http://127.0.0.1:8080", true],
    ["https://[::1]:8443", true],
    ["https://shop.example.co.uk", true],
    ["https://example.com/", false],
    ["https://example.com/path", false],
    ["https://example.com?query=1", false],
    ["https://example.com#fragment", false],
    ["javascript:alert(1)", false],
    ["file:///etc/passwd", false],
    ["chrome-extension://abcdefghijklmnop", false],
    ["ftp://example.com", false],
    ["data:text/html,x", false],
    ["https://user:pass@example.com", false],
    ["https://example.com:123456", false],
    ["https://", false],
    ["null", false],
    ["", false],
    [" https://example.com", false],
    ["https://example.com\n", false],
    ["HTTPS://EXAMPLE.COM", false]
  ]
  it.each(table)("%j → %s", (origin, valid) => assert.strictEqual(accepts(Origin, origin), valid))

  it("rejects a valid origin followed by any path, query or fragment", () => {
    fc.assert(
      fc.property(fc.constantFrom("/", "?", "#"), fc.string(), (separator, rest) => {
        return !accepts(Origin, `https://example.com${separator}${rest}`)
      })
    )
  })
})

describe("AssetPath: relative, no `.`/`..`/empty segment, no backslash or control character", () => {
  const table: ReadonlyArray<readonly [string, boolean]> = [
    ["a", true],
    ["a/b", true],
    ["images/cat.png", true],
    ["a..b/c", true],
    [".hidden", true],
    ["a/.b", true],
    ["...", true],
    ["a b/c d.txt", true],
    ["日本/ファイル.png", true],
    ["x".repeat(1024), true],
    ["", false],
    [".", false],
    ["..", false],
    ["../x", false],
    ["a/..", false],
    ["a/../b", false],
    ["./x", false],
    ["a/./b", false],
    ["a/.", false],
    ["/abs", false],
    ["/", false],
    ["a//b", false],
    ["a/", false],
    ["a\\b", false],
    ["..\\x", false],
    ["a\u0000b", false],
    ["a\nb", false],
    ["a\tb", false],
    ["\u007f", false],
    ["a\u0085b", false],
    ["x".repeat(1025), false]
  ]
  it.each(table)("%j → %s", (path, valid) => assert.strictEqual(accepts(AssetPath, path), valid))

  const segment = fc.string({ unit: fc.constantFrom(..."abc.-_ 1é"), minLength: 1, maxLength: 6 })
  it("rejects any path with a `..` segment", () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 3 }), fc.array(segment, { maxLength: 3 }), (before, after) => {
        return !accepts(AssetPath, [...before, "..", ...after].join("/"))
      })
    )
  })

  it("rejects any path with a control character or backslash", () => {
    const bad = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }), fc.constant(0x5c))
    fc.assert(
      fc.property(segment, bad, segment, (before, code, after) => {
        return !accepts(AssetPath, `${before}${String.fromCharCode(code)}${after}`)
      })
    )
  })
})

describe("ToolName: SPEC §3 `^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$`", () => {
  const SPEC_TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/

  it("accepts exactly the strings the SPEC regex matches", () => {
    const candidates = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.string({ unit: fc.constantFrom(..."aZ09_.-/ é"), maxLength: 70 }),
      fc.stringMatching(SPEC_TOOL_NAME)
    )
    fc.assert(
      fc.property(candidates, (name) => accepts(ToolName, name) === SPEC_TOOL_NAME.test(name)),
      { numRuns: 500 }
    )
  })

  const table: ReadonlyArray<readonly [string, boolean]> = [
    ["a", true],
    ["Z9", true],
    ["cart.add-item_2", true],
    [`a${"b".repeat(63)}`, true],
    [`a${"b".repeat(64)}`, false],
    ["", false],
    ["1tool", false],
    ["_tool", false],
    [".tool", false],
    ["-tool", false],
    ["my tool", false],
    ["a/b", false],
    ["a:b", false],
    ["outil_é", false],
    ["tool\n", false]
  ]
  it.each(table)("%j → %s", (name, valid) => assert.strictEqual(accepts(ToolName, name), valid))
})
