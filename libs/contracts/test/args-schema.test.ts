/**
 * The argsSchema conformance table (SPEC §3): `decodeArgsSchema` accepts exactly the subset and rejects anything
 * else with the JSON pointer of the offending keyword.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { ARGS_SCHEMA_LIMITS, decodeArgsSchema } from "../src/ArgsSchema.ts"
import { RICH_ARGS } from "./schemas.ts"

/** `pointer` is exact, except where the offending location is arbitrary (which object was one too many). */
type Expected = "accept" | { readonly pointer: string | RegExp; readonly reasonIncludes?: string }

/** An object root with one property `x`. */
const withX = (x: unknown) => ({ type: "object", properties: { x } })
const str = { type: "string" }
const meta = { description: "Documented.", default: null, examples: [1, "two", { three: [3] }] }

/** `node` wrapped in `levels` objects, each adding two JSON levels (`properties`, then the name). */
const nested = (levels: number, node: unknown = str): unknown => {
  let value = node
  for (let level = 0; level < levels; level++) value = { type: "object", properties: { a: value } }
  return value
}

const TABLE: ReadonlyArray<readonly [string, unknown, Expected]> = [
  // Accepted
  ["the smallest schema", { type: "object" }, "accept"],
  ["every node type and keyword at once", RICH_ARGS, "accept"],
  ["empty properties and required", { type: "object", properties: {}, required: [] }, "accept"],
  ["additionalProperties: false", { type: "object", additionalProperties: false }, "accept"],
  ["metadata on the root", { type: "object", ...meta }, "accept"],
  ["metadata on a string", withX({ type: "string", ...meta }), "accept"],
  ["metadata on a number", withX({ type: "number", ...meta }), "accept"],
  ["metadata on an integer", withX({ type: "integer", ...meta }), "accept"],
  ["metadata on a boolean", withX({ type: "boolean", ...meta }), "accept"],
  ["metadata on an array", withX({ type: "array", items: str, ...meta }), "accept"],
  ["metadata on an object", withX({ type: "object", ...meta }), "accept"],
  ["metadata on a oneOf", withX({ oneOf: [str], ...meta }), "accept"],
  [
    "nested arrays of objects",
    withX({
      type: "array",
      items: { type: "array", items: { type: "object", properties: { id: { type: "integer" } } } }
    }),
    "accept"
  ],
  ["minLength equal to maxLength", withX({ type: "string", minLength: 2, maxLength: 2 }), "accept"],
  ["negative and fractional number bounds", withX({ type: "number", minimum: -1.5, maximum: 2.25 }), "accept"],
  ["an integer enum", withX({ type: "integer", enum: [-1, 0, 7] }), "accept"],
  ["a pattern of exactly 512 characters", withX({ type: "string", pattern: "a".repeat(512) }), "accept"],
  ["a property named with `/` and `~`", { type: "object", properties: { "a/b": str, "c~d": str } }, "accept"],
  ["23 levels of nesting (46 JSON levels)", nested(23), "accept"],
  // Rejected: keywords outside the subset
  ["`$ref` at the root", { type: "object", $ref: "#/definitions/x" }, { pointer: "/$ref" }],
  ["`$schema`", { type: "object", $schema: "https://json-schema.org/draft/2020-12/schema" }, { pointer: "/$schema" }],
  [
    "`format`",
    withX({ type: "string", format: "email" }),
    { pointer: "/properties/x/format", reasonIncludes: "format" }
  ],
  // JSON text: a `then` property in an object literal would make it a thenable.
  ["`if`/`then`", JSON.parse('{"type":"object","if":{"type":"object"},"then":{"type":"object"}}'), { pointer: "/if" }],
  ["`allOf`", withX({ allOf: [str] }), { pointer: "/properties/x/allOf" }],
  ["`anyOf`", withX({ anyOf: [str] }), { pointer: "/properties/x/anyOf" }],
  ["`not`", withX({ type: "string", not: { enum: ["a"] } }), { pointer: "/properties/x/not" }],
  ["`const`", withX({ type: "string", const: "a" }), { pointer: "/properties/x/const" }],
  ["`patternProperties`", { type: "object", patternProperties: { "^a": str } }, { pointer: "/patternProperties" }],
  ["`exclusiveMinimum`", withX({ type: "number", exclusiveMinimum: 0 }), { pointer: "/properties/x/exclusiveMinimum" }],
  ["`enum` on a boolean", withX({ type: "boolean", enum: [true] }), { pointer: "/properties/x/enum" }],
  ["`pattern` on a number", withX({ type: "number", pattern: "1" }), { pointer: "/properties/x/pattern" }],
  ["`items` on an object", withX({ type: "object", items: str }), { pointer: "/properties/x/items" }],
  ["`type` beside `oneOf`", withX({ type: "string", oneOf: [str] }), { pointer: "/properties/x/oneOf" }],
  [
    "an unknown keyword at depth 3",
    nested(3, { type: "string", minLenght: 1 }),
    { pointer: "/properties/a/properties/a/properties/a/minLenght" }
  ],
  [
    "`additionalProperties: true`",
    { type: "object", additionalProperties: true },
    { pointer: "/additionalProperties", reasonIncludes: "additionalProperties: false" }
  ],
  ["`additionalProperties: {…}`", { type: "object", additionalProperties: str }, { pointer: "/additionalProperties" }],
  // Rejected: types
  ['`type: ["string", "null"]`', withX({ type: ["string", "null"] }), { pointer: "/properties/x/type" }],
  ['`type: "null"`', withX({ type: "null" }), { pointer: "/properties/x/type", reasonIncludes: "oneOf" }],
  [
    "a node without `type` or `oneOf`",
    withX({ description: "x" }),
    { pointer: "/properties/x/type", reasonIncludes: "type must be one of" }
  ],
  ["an empty node", withX({}), { pointer: "/properties/x/type", reasonIncludes: "or use oneOf" }],
  ['root `type: "string"`', { type: "string" }, { pointer: "/type", reasonIncludes: "root" }],
  ['root `type: "array"`', { type: "array", items: str }, { pointer: "/type" }],
  ["root without `type`", { properties: {} }, { pointer: "/type" }],
  ["root `oneOf`", { oneOf: [{ type: "object" }] }, { pointer: "/oneOf", reasonIncludes: "not supported" }],
  // Rejected: arrays
  ["`items` missing", withX({ type: "array" }), { pointer: "/properties/x/items", reasonIncludes: "required" }],
  ["`items` as an array (tuple form)", withX({ type: "array", items: [str] }), { pointer: "/properties/x/items" }],
  ["`$ref` inside `items`", withX({ type: "array", items: { $ref: "#" } }), { pointer: "/properties/x/items/$ref" }],
  [
    "`uniqueItems` not a boolean",
    withX({ type: "array", items: str, uniqueItems: 1 }),
    { pointer: "/properties/x/uniqueItems" }
  ],
  [
    "non-integer `minItems`",
    withX({ type: "array", items: str, minItems: 1.5 }),
    { pointer: "/properties/x/minItems" }
  ],
  [
    "`minItems` > `maxItems`",
    withX({ type: "array", items: str, minItems: 3, maxItems: 2 }),
    { pointer: "/properties/x/minItems", reasonIncludes: "greater than maxItems" }
  ],
  // Rejected: objects
  [
    "`required` naming an unknown property",
    { type: "object", properties: { a: str }, required: ["a", "b"] },
    { pointer: "/required/1", reasonIncludes: '"b"' }
  ],
  ["`required` without `properties`", { type: "object", required: ["a"] }, { pointer: "/required/0" }],
  [
    "`required` naming an inherited name",
    { type: "object", properties: { a: str }, required: ["toString"] },
    { pointer: "/required/0" }
  ],
  [
    "duplicate `required`",
    { type: "object", properties: { a: str }, required: ["a", "a"] },
    { pointer: "/required/1", reasonIncludes: "twice" }
  ],
  ["`properties` as an array", { type: "object", properties: [str] }, { pointer: "/properties" }],
  ["an empty property name", { type: "object", properties: { "": str } }, { pointer: "/properties/" }],
  [
    "a property name containing `/` (escaped `~1`)",
    { type: "object", properties: { "a/b": { type: "string", format: "uri" } } },
    { pointer: "/properties/a~1b/format" }
  ],
  [
    "a property name containing `~` (escaped `~0`)",
    { type: "object", properties: { "a~b": { type: "string", format: "uri" } } },
    { pointer: "/properties/a~0b/format" }
  ],
  [
    "a property name containing `~1` (escaped `~01`)",
    { type: "object", properties: { "~1": { type: "string", format: "uri" } } },
    { pointer: "/properties/~01/format" }
  ],
  // Rejected: strings
  [
    "`minLength` > `maxLength`",
    withX({ type: "string", minLength: 3, maxLength: 2 }),
    { pointer: "/properties/x/minLength", reasonIncludes: "greater than maxLength" }
  ],
  ["negative `minLength`", withX({ type: "string", minLength: -1 }), { pointer: "/properties/x/minLength" }],
  ["`maxLength` as a string", withX({ type: "string", maxLength: "5" }), { pointer: "/properties/x/maxLength" }],
  ["an empty pattern", withX({ type: "string", pattern: "" }), { pointer: "/properties/x/pattern" }],
  [
    "a pattern longer than 512",
    withX({ type: "string", pattern: "a".repeat(513) }),
    { pointer: "/properties/x/pattern" }
  ],
  // Rejected: numbers
  [
    "`minimum` > `maximum`",
    withX({ type: "integer", minimum: 5, maximum: 4 }),
    { pointer: "/properties/x/minimum", reasonIncludes: "greater than maximum" }
  ],
  ["`minimum` as a string", withX({ type: "number", minimum: "0" }), { pointer: "/properties/x/minimum" }],
  // Rejected: enums
  ["an empty enum", withX({ type: "string", enum: [] }), { pointer: "/properties/x/enum" }],
  ["duplicate enum values", withX({ type: "string", enum: ["a", "b", "a"] }), { pointer: "/properties/x/enum" }],
  ["an enum of the wrong type", withX({ type: "string", enum: ["a", 1] }), { pointer: "/properties/x/enum/1" }],
  ["an integer enum with 1.5", withX({ type: "integer", enum: [1, 1.5] }), { pointer: "/properties/x/enum/1" }],
  ["a number enum with a string", withX({ type: "number", enum: ["1"] }), { pointer: "/properties/x/enum/0" }],
  [
    "an enum over 256 values",
    withX({ type: "integer", enum: Array.from({ length: 257 }, (_, index) => index) }),
    { pointer: "/properties/x/enum" }
  ],
  // Rejected: oneOf
  ["an empty oneOf", withX({ oneOf: [] }), { pointer: "/properties/x/oneOf" }],
  ["a oneOf member with `$ref`", withX({ oneOf: [str, { $ref: "#" }] }), { pointer: "/properties/x/oneOf/1/$ref" }],
  [
    "a oneOf member with `format`",
    withX({ oneOf: [str, { type: "string", format: "date" }] }),
    { pointer: "/properties/x/oneOf/1/format" }
  ],
  ["oneOf not an array", withX({ oneOf: str }), { pointer: "/properties/x/oneOf" }],
  // Rejected: metadata of the wrong shape
  ["a description that is not a string", { type: "object", description: 1 }, { pointer: "/description" }],
  ["17 examples", { type: "object", examples: Array.from({ length: 17 }, () => 1) }, { pointer: "/examples" }],
  ["examples not an array", withX({ type: "string", examples: "a" }), { pointer: "/properties/x/examples" }],
  // Rejected: size and depth, before any recursive decoding
  [
    "too-deep nesting (24 levels, 48 JSON levels)",
    nested(24),
    { pointer: "/properties/a".repeat(24), reasonIncludes: "nested too deeply" }
  ],
  ["10,000 levels of nesting", nested(10_000), { pointer: "/properties/a".repeat(24) }],
  [
    "more than 4096 objects",
    { type: "object", properties: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, str])) },
    { pointer: "", reasonIncludes: "too large" }
  ],
  // Rejected: not an object at all
  ["null", null, { pointer: "" }],
  ["an array", [{ type: "object" }], { pointer: "" }],
  ["a string", "object", { pointer: "" }],
  ["a number", 1, { pointer: "" }],
  ["true", true, { pointer: "" }]
]

describe("decodeArgsSchema conformance", () => {
  it("has at least 40 cases", () => assert.isAtLeast(TABLE.length, 40))

  it.each(TABLE)("%s", (_, input, expected) => {
    const result = decodeArgsSchema(input)
    if (expected === "accept") {
      assert.isTrue(Result.isSuccess(result), JSON.stringify(Result.isFailure(result) ? result.failure : undefined))
      if (Result.isSuccess(result)) assert.deepStrictEqual(result.success, input)
      return
    }
    if (Result.isSuccess(result)) return assert.fail(`accepted: ${JSON.stringify(input).slice(0, 200)}`)
    if (typeof expected.pointer === "string") assert.strictEqual(result.failure.pointer, expected.pointer)
    else assert.match(result.failure.pointer, expected.pointer)
    assert.isNotEmpty(result.failure.reason)
    if (expected.reasonIncludes !== undefined) assert.include(result.failure.reason, expected.reasonIncludes)
  })

  it("names an unsupported keyword in words a schema author knows", () => {
    const result = decodeArgsSchema(withX({ type: "string", format: "email" }))
    assert.deepStrictEqual(Result.isFailure(result) ? result.failure : undefined, {
      pointer: "/properties/x/format",
      reason: 'keyword "format" is not supported by the argsSchema subset'
    })
  })

  it("keeps a property named `__proto__` as an own property", () => {
    const input: unknown = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"integer"}},"required":["__proto__"]}'
    )
    const result = decodeArgsSchema(input)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) assert.isTrue(Object.hasOwn(result.success.properties ?? {}, "__proto__"))
  })

  it("states the limits the table exercises", () => {
    assert.deepStrictEqual(
      [ARGS_SCHEMA_LIMITS.maxJsonDepth, ARGS_SCHEMA_LIMITS.maxJsonObjects, ARGS_SCHEMA_LIMITS.maxPatternLength],
      [48, 4096, 512]
    )
  })
})
