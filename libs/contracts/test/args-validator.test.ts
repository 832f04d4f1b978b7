/**
 * The arguments-validation table of `makeArgsValidator`: for several argsSchemas, which arguments pass and, for the
 * rest, the JSON pointer of the failing location. Schemas go through `decodeArgsSchema` first, as in Core.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { type ArgsSchema, decodeArgsSchema } from "../src/ArgsSchema.ts"
import { type ArgsIssue, type ArgsValidator, makeArgsValidator } from "../src/node/ArgsValidator.ts"

/** A failure names one path, or (a oneOf no member matches) the paths each member complained about. */
type Expected = "ok" | { readonly path: string | ReadonlyArray<string>; readonly reasonIncludes?: string }
type Case = readonly [description: string, args: unknown, expected: Expected]

const argsSchema = (input: unknown): ArgsSchema => {
  const decoded = decodeArgsSchema(input)
  if (Result.isFailure(decoded)) return assert.fail(`invalid argsSchema: ${JSON.stringify(decoded.failure)}`)
  return decoded.success
}

const validatorFor = (input: unknown): ArgsValidator => {
  const built = makeArgsValidator(argsSchema(input))
  if (Result.isFailure(built)) return assert.fail(`no validator: ${JSON.stringify(built.failure)}`)
  return built.success
}

const issuesOf = (validator: ArgsValidator, args: unknown): ReadonlyArray<ArgsIssue> => {
  const result = validator.validate(args)
  return Result.isSuccess(result) ? [] : result.failure
}

/** One describe per schema: each case passes, or fails with issues at exactly the expected paths. */
const table = (name: string, schema: unknown, cases: ReadonlyArray<Case>) =>
  describe(name, () => {
    const validator = validatorFor(schema)
    it.each(cases)("%s", (_, args, expected) => {
      const result = validator.validate(args)
      if (expected === "ok") {
        assert.deepStrictEqual(issuesOf(validator, args), [])
        if (Result.isSuccess(result)) assert.strictEqual(result.success, args, "arguments come back unchanged")
        return
      }
      const issues = issuesOf(validator, args)
      assert.sameMembers([...new Set(issues.map((issue) => issue.path))], [expected.path].flat())
      if (expected.reasonIncludes !== undefined) assert.include(issues[0]?.reason, expected.reasonIncludes)
    })
  })

const str = { type: "string" }
const json = (text: string): unknown => JSON.parse(text)

table(
  "types, bounds, enums, required, additionalProperties: false",
  {
    type: "object",
    properties: {
      s: { type: "string", minLength: 2, maxLength: 5 },
      n: { type: "number", minimum: -1, maximum: 1 },
      i: { type: "integer", minimum: 0, maximum: 10 },
      b: { type: "boolean" },
      tags: { type: "array", items: str, minItems: 1, maxItems: 3 },
      color: { type: "string", enum: ["red", "green"] },
      level: { type: "number", enum: [1, 2.5] },
      meta: { type: "object", properties: { note: str } }
    },
    required: ["s"],
    additionalProperties: false
  },
  [
    ["the required field alone", { s: "ab" }, "ok"],
    [
      "every field",
      { s: "abc", n: 0.5, i: 3, b: false, tags: ["a"], color: "red", level: 2.5, meta: { note: "x" } },
      "ok"
    ],
    ["missing required key", { n: 0 }, { path: "/s", reasonIncludes: "required" }],
    ["empty object", {}, { path: "/s", reasonIncludes: "required" }],
    ["an extra key", { s: "ab", extra: 1 }, { path: "/extra", reasonIncludes: "additionalProperties" }],
    ["an extra key named like a prototype member", json('{"s":"ab","constructor":1}'), { path: "/constructor" }],
    ["a number for a string", { s: 12 }, { path: "/s", reasonIncludes: "string" }],
    ["a string for a number", { s: "ab", n: "0.5" }, { path: "/n" }],
    ["a string for an integer", { s: "ab", i: "3" }, { path: "/i" }],
    ["1.5 for an integer", { s: "ab", i: 1.5 }, { path: "/i", reasonIncludes: "integer" }],
    ["3.0 is an integer", json('{"s":"ab","i":3.0}'), "ok"],
    ["a string for a boolean", { s: "ab", b: "true" }, { path: "/b" }],
    ["0 for a boolean", { s: "ab", b: 0 }, { path: "/b" }],
    ["null for a string", { s: null }, { path: "/s" }],
    ["Infinity (not JSON) for a number", { s: "ab", n: Number.POSITIVE_INFINITY }, { path: "/n" }],
    ["a string for an array", { s: "ab", tags: "a" }, { path: "/tags" }],
    ["an array for an object", { s: "ab", meta: [] }, { path: "/meta" }],
    ["minLength edge", { s: "ab" }, "ok"],
    ["below minLength", { s: "a" }, { path: "/s" }],
    ["maxLength edge", { s: "abcde" }, "ok"],
    ["above maxLength", { s: "abcdef" }, { path: "/s" }],
    ["minimum edge (inclusive)", { s: "ab", n: -1, i: 0 }, "ok"],
    ["maximum edge (inclusive)", { s: "ab", n: 1, i: 10 }, "ok"],
    ["below minimum", { s: "ab", i: -1 }, { path: "/i" }],
    ["above maximum", { s: "ab", n: 1.0001 }, { path: "/n" }],
    ["minItems edge", { s: "ab", tags: ["a"] }, "ok"],
    ["below minItems", { s: "ab", tags: [] }, { path: "/tags" }],
    ["maxItems edge", { s: "ab", tags: ["a", "b", "c"] }, "ok"],
    ["above maxItems", { s: "ab", tags: ["a", "b", "c", "d"] }, { path: "/tags" }],
    ["a wrong item", { s: "ab", tags: ["a", 1] }, { path: "/tags/1" }],
    ["a string enum member", { s: "ab", color: "green" }, "ok"],
    ["outside the string enum", { s: "ab", color: "blue" }, { path: "/color" }],
    ["enum is case-sensitive", { s: "ab", color: "Red" }, { path: "/color" }],
    ["a number enum member", { s: "ab", level: 1 }, "ok"],
    ["outside the number enum", { s: "ab", level: 2 }, { path: "/level" }],
    ["a string for a number enum", { s: "ab", level: "1" }, { path: "/level" }],
    ["a nested object is open", { s: "ab", meta: { note: "x", other: [1] } }, "ok"],
    ["a wrong field in a nested object", { s: "ab", meta: { note: 1 } }, { path: "/meta/note" }],
    ["null arguments", null, { path: "" }],
    ["array arguments", [], { path: "" }],
    ["string arguments", "s", { path: "" }]
  ]
)

table("an open object (no additionalProperties)", { type: "object", properties: { s: str }, required: ["s"] }, [
  ["an extra key is accepted", { s: "a", extra: 1 }, "ok"],
  ["any extra JSON is accepted", { s: "a", x: { y: [1, null, { z: true }] } }, "ok"],
  ["declared fields are still checked", { s: 1, extra: 1 }, { path: "/s" }],
  ["required is still checked", { extra: 1 }, { path: "/s" }]
])

table(
  "pattern: unanchored by default, anchored on request, unicode-aware",
  {
    type: "object",
    properties: {
      contains: { type: "string", pattern: "b" },
      anchored: { type: "string", pattern: "^ab$" },
      letters: { type: "string", pattern: "^\\p{L}+$" },
      one: { type: "string", pattern: "^.$" },
      digits: { type: "string", pattern: "\\d{3}" }
    }
  },
  [
    ["a match in the middle", { contains: "abc" }, "ok"],
    ["a match at the end", { contains: "ab" }, "ok"],
    ["no match", { contains: "xyz" }, { path: "/contains", reasonIncludes: "pattern" }],
    ["an exact anchored match", { anchored: "ab" }, "ok"],
    ["anchored: trailing text", { anchored: "abc" }, { path: "/anchored" }],
    ["anchored: leading text", { anchored: "xab" }, { path: "/anchored" }],
    ["anchored: a trailing newline", { anchored: "ab\n" }, { path: "/anchored" }],
    ["\\p{L}: accented letters", { letters: "héllo" }, "ok"],
    ["\\p{L}: CJK", { letters: "日本語" }, "ok"],
    ["\\p{L}: a digit", { letters: "h1" }, { path: "/letters" }],
    ["`.` matches one code point (an astral emoji)", { one: "😀" }, "ok"],
    ["`.` does not match two", { one: "ab" }, { path: "/one" }],
    ["\\d{3} anywhere", { digits: "id-123-x" }, "ok"],
    ["\\d{3} missing", { digits: "id-12-x" }, { path: "/digits" }]
  ]
)

table(
  "oneOf: exactly one member must match",
  {
    type: "object",
    properties: {
      x: { oneOf: [str, { type: "integer" }, { type: "number" }] },
      shape: {
        oneOf: [
          { type: "object", properties: { a: str }, required: ["a"], additionalProperties: false },
          { type: "object", properties: { b: str }, required: ["b"], additionalProperties: false }
        ]
      }
    }
  },
  [
    ["a string matches one member", { x: "a" }, "ok"],
    ["1.5 matches only number", { x: 1.5 }, "ok"],
    ["1 matches integer and number: rejected", { x: 1 }, { path: "/x", reasonIncludes: "exactly one" }],
    ["a boolean matches none", { x: true }, { path: "/x" }],
    ["null matches none", { x: null }, { path: "/x" }],
    ["the first object member", { shape: { a: "1" } }, "ok"],
    ["the second object member", { shape: { b: "1" } }, "ok"],
    ["both keys match neither closed member", { shape: { a: "1", b: "1" } }, { path: ["/shape/a", "/shape/b"] }],
    ["an empty object matches neither", { shape: {} }, { path: ["/shape/a", "/shape/b"], reasonIncludes: "required" }],
    ["a string matches neither", { shape: "a" }, { path: "/shape" }]
  ]
)

table(
  "nested arrays of objects",
  {
    type: "object",
    properties: {
      items: {
        type: "array",
        items: { type: "object", properties: { tags: { type: "array", items: str } }, additionalProperties: false }
      },
      matrix: { type: "array", items: { type: "array", items: { type: "integer" } } }
    }
  },
  [
    ["valid rows", { items: [{}, { tags: [] }, { tags: ["a", "b"] }] }, "ok"],
    ["a wrong tag deep inside", { items: [{}, {}, { tags: ["a", 1] }] }, { path: "/items/2/tags/1" }],
    ["the first tag of the third item", { items: [{}, {}, { tags: [1] }] }, { path: "/items/2/tags/0" }],
    ["an extra key in an item", { items: [{ tag: "a" }] }, { path: "/items/0/tag" }],
    ["a matrix", { matrix: [[1, 2], [], [3]] }, "ok"],
    [
      "a wrong cell",
      {
        matrix: [
          [1, 2],
          [3, 4.5]
        ]
      },
      { path: "/matrix/1/1" }
    ]
  ]
)

table(
  "uniqueItems compares JSON values, ignoring key order",
  {
    type: "object",
    properties: {
      objects: { type: "array", uniqueItems: true, items: { type: "object" } },
      values: {
        type: "array",
        uniqueItems: true,
        items: { oneOf: [str, { type: "number" }, { type: "array", items: str }] }
      }
    }
  },
  [
    ["distinct objects", { objects: [{ a: 1 }, { a: 2 }, { b: 1 }] }, "ok"],
    [
      "objects differing only in key order",
      {
        objects: [
          { a: 1, b: 2 },
          { b: 2, a: 1 }
        ]
      },
      { path: "/objects/1", reasonIncludes: "duplicate" }
    ],
    [
      "nested objects differing only in key order",
      { objects: [{ a: { x: 1, y: 2 } }, {}, { a: { y: 2, x: 1 } }] },
      { path: "/objects/2" }
    ],
    ['"1" and 1 differ', { values: ["1", 1] }, "ok"],
    ["equal arrays", { values: [["a"], ["a"]] }, { path: "/values/1" }],
    [
      "arrays in another order differ",
      {
        values: [
          ["a", "b"],
          ["b", "a"]
        ]
      },
      "ok"
    ]
  ]
)

table(
  "a property named `__proto__` is validated like any other",
  json(
    '{"type":"object","properties":{"__proto__":{"type":"integer"}},"required":["__proto__"],"additionalProperties":false}'
  ),
  [
    ["present and valid", json('{"__proto__":1}'), "ok"],
    ["missing", {}, { path: "/__proto__", reasonIncludes: "required" }],
    ["of the wrong type", json('{"__proto__":"x"}'), { path: "/__proto__" }],
    ["beside an extra key", json('{"__proto__":1,"x":1}'), { path: "/x" }]
  ]
)

describe("building a validator", () => {
  const patternAt = (pattern: string) => ({ type: "object", properties: { x: { type: "string", pattern } } })

  it.each([
    ["lookbehind", "(?<=a)b"],
    ["lookahead", "a(?=b)"],
    ["a backreference", "(a)\\1"],
    ["a possessive quantifier", "a++"]
  ])("fails with the pattern's pointer for %s, which re2js cannot compile", (_, pattern) => {
    const built = makeArgsValidator(argsSchema(patternAt(pattern)))
    assert.isTrue(Result.isFailure(built))
    if (Result.isFailure(built)) {
      assert.strictEqual(built.failure.pointer, "/properties/x/pattern")
      assert.include(built.failure.reason, "cannot be compiled")
    }
  })

  it("points into arrays and oneOf members", () => {
    const bad = { type: "string", pattern: "(?<=a)b" }
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ type: "object", properties: { list: { type: "array", items: bad } } }, "/properties/list/items/pattern"],
      [{ type: "object", properties: { x: { oneOf: [str, bad] } } }, "/properties/x/oneOf/1/pattern"],
      [{ type: "object", properties: { "a/b": bad } }, "/properties/a~1b/pattern"]
    ]
    for (const [schema, pointer] of cases) {
      const built = makeArgsValidator(argsSchema(schema))
      assert.deepStrictEqual(Result.isFailure(built) ? built.failure.pointer : undefined, pointer)
    }
  })

  it("rejects a pattern over 512 characters even when handed an unchecked schema", () => {
    const unchecked: ArgsSchema = { type: "object", properties: { x: { type: "string", pattern: "a".repeat(513) } } }
    const built = makeArgsValidator(unchecked)
    assert.deepStrictEqual(Result.isFailure(built) ? built.failure.pointer : undefined, "/properties/x/pattern")
  })
})

describe("hostile arguments", () => {
  it("the catastrophic `^(a+)+$` against 50,000 `a` + `b` completes and fails", () => {
    const validator = validatorFor({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } })
    assert.deepStrictEqual(
      issuesOf(validator, { s: `${"a".repeat(50_000)}b` }).map((issue) => issue.path),
      ["/s"]
    )
    assert.deepStrictEqual(issuesOf(validator, { s: "a".repeat(50_000) }), [])
  })

  it("arguments nested 200 deep are rejected without throwing", () => {
    const validator = validatorFor({ type: "object" })
    let deep: unknown = 1
    for (let level = 0; level < 200; level++) deep = level % 2 === 0 ? [deep] : { a: deep }
    const issues = issuesOf(validator, { x: deep })
    assert.lengthOf(issues, 1)
    assert.include(issues[0]?.reason, "nested too deeply")
    assert.isTrue(issues[0]?.path.startsWith("/x/"))
  })

  it("arguments nested 100,000 deep are rejected without throwing", () => {
    const validator = validatorFor({ type: "object", properties: { x: { type: "array", items: str } } })
    let deep: unknown = "leaf"
    for (let level = 0; level < 100_000; level++) deep = [deep]
    assert.lengthOf(issuesOf(validator, { x: deep }), 1)
  })
})

describe("the first failure only", () => {
  const validator = validatorFor({
    type: "object",
    properties: { s: str, i: { type: "integer" }, tags: { type: "array", items: str } },
    required: ["s", "i"],
    additionalProperties: false
  })

  it("two bad fields produce one issue, the first", () => {
    assert.deepStrictEqual(
      issuesOf(validator, { s: 1, i: "x" }).map((issue) => issue.path),
      ["/s"]
    )
  })

  it("a missing key, bad items and an extra key produce one issue", () => {
    assert.lengthOf(issuesOf(validator, { i: 1, tags: ["a", 2, 3], extra: true }), 1)
  })
})
