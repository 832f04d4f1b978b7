/**
 * `toPointer` escapes per RFC 6901 (`~` as `~0` first, then `/` as `~1`), and the issue helpers report decode
 * failures by pointer while rethrowing defects.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { issuesOfExit, toPointer } from "../src/JsonPointer.ts"

/** RFC 6901 §4: split on `/`, then `~1` → `/` and `~0` → `~`, in that order. */
const parsePointer = (pointer: string): ReadonlyArray<string> =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))

describe("toPointer", () => {
  const table: ReadonlyArray<readonly [ReadonlyArray<PropertyKey>, string]> = [
    [[], ""],
    [["foo"], "/foo"],
    [["foo", 0], "/foo/0"],
    [[""], "/"],
    [["", ""], "//"],
    [["a/b"], "/a~1b"],
    [["m~n"], "/m~0n"],
    [["~1"], "/~01"],
    [["~0"], "/~00"],
    [["/~"], "/~1~0"],
    [["~/"], "/~0~1"],
    [["c%d"], "/c%d"],
    [["e^f"], "/e^f"],
    [["g|h"], "/g|h"],
    [["i\\j"], "/i\\j"],
    [['k"l'], '/k"l'],
    [[" "], "/ "],
    [["properties", "a/b", "oneOf", 1, "$ref"], "/properties/a~1b/oneOf/1/$ref"],
    [["日本", "😀"], "/日本/😀"]
  ]
  it.each(table)("%j → %j", (path, pointer) => assert.strictEqual(toPointer(path), pointer))

  it("parses back to the same path for any strings", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom("a", "/", "~", "0", "1", "é") })), (path) => {
        assert.deepStrictEqual(parsePointer(toPointer(path)), path)
      })
    )
    fc.assert(fc.property(fc.array(fc.string()), (path) => assert.deepStrictEqual(parsePointer(toPointer(path)), path)))
  })

  it("writes array indices as decimal tokens", () => {
    fc.assert(fc.property(fc.nat(), (index) => toPointer([index]) === `/${index}`))
  })
})

describe("issuesOfExit", () => {
  const Doc = Schema.Struct({ "a/b": Schema.Struct({ c: Schema.Number }), list: Schema.Array(Schema.String) })

  it("reports each issue at its pointer", () => {
    const exit = Schema.decodeUnknownExit(Doc)({ "a/b": { c: "x" }, list: ["ok", 2] }, { errors: "all" })
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit)) {
      assert.deepStrictEqual(
        issuesOfExit(exit).map((issue) => issue.pointer),
        ["/a~1b/c", "/list/1"]
      )
    }
  })

  it("rethrows a defect instead of reporting it as input", () => {
    const exit = Exit.die(new RangeError("Maximum call stack size exceeded"))
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit)) assert.throws(() => issuesOfExit(exit), RangeError)
  })
})
