/**
 * The validator's budget: first failure only, the size and nesting caps, and the 32×32 nested-oneOf bomb answered
 * in bounded time and memory. Before the budget (errors: "all", no work cap), 200 failing items of the bomb took
 * 12.2 s and 2,000 took the process out of memory; valid items cost 3.3 s per 200.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { type ArgsSchema, decodeArgsSchema } from "../src/ArgsSchema.ts"
import { ARGS_BUDGET, checkArgsShape, workOf } from "../src/node/ArgsValidator/Budget.ts"
import { type ArgsIssue, makeArgsValidator } from "../src/node/ArgsValidator.ts"

const schemaOf = (input: unknown): ArgsSchema => {
  const decoded = decodeArgsSchema(input)
  if (Result.isFailure(decoded)) return assert.fail(JSON.stringify(decoded.failure))
  return decoded.success
}

const issuesOf = (schema: ArgsSchema, args: unknown): ReadonlyArray<ArgsIssue> => {
  const built = makeArgsValidator(schema)
  if (Result.isFailure(built)) return assert.fail(JSON.stringify(built.failure))
  const result = built.success.validate(args)
  return Result.isSuccess(result) ? [] : result.failure
}

const bomb = schemaOf({
  type: "object",
  properties: {
    list: {
      type: "array",
      items: {
        oneOf: Array.from({ length: 32 }, (_, i) => ({
          oneOf: Array.from({ length: 32 }, (_, j) => ({ type: "string", pattern: `^x${i}_${j}$` }))
        }))
      }
    }
  }
})

const bombValidator = makeArgsValidator(bomb)

/** Wall time and heap growth of one validation (the validator is built once, as Core does per session). */
const measured = (args: unknown) => {
  if (Result.isFailure(bombValidator)) return assert.fail("no validator")
  const heap = process.memoryUsage().heapUsed
  const started = performance.now()
  const result = bombValidator.success.validate(args)
  const issues = Result.isSuccess(result) ? [] : result.failure
  return { issues, ms: performance.now() - started, heapMb: (process.memoryUsage().heapUsed - heap) / 1e6 }
}

describe("the validation budget", () => {
  it("reports the first failure only, with its pointer", () => {
    const schema = schemaOf({ type: "object", properties: { list: { type: "array", items: { type: "integer" } } } })
    assert.deepStrictEqual(
      issuesOf(schema, { list: [1, "a", "b", "c"] }).map((issue) => issue.path),
      ["/list/1"]
    )
  })

  it("refuses arguments over the byte cap, and nested too deeply, before decoding", () => {
    const big = checkArgsShape({ text: "a".repeat(ARGS_BUDGET.maxBytes) })
    assert.strictEqual(Result.isFailure(big) ? big.failure.limit : undefined, "bytes")
    let deep: unknown = 1
    for (let level = 0; level < 60; level++) deep = [deep]
    const nested = checkArgsShape({ x: deep })
    assert.strictEqual(Result.isFailure(nested) ? nested.failure.limit : undefined, "depth")
    assert.isTrue(Result.isSuccess(checkArgsShape({ text: "a".repeat(1000) })))
  })

  it("the 32×32 oneOf bomb with 12,000 valid items is refused as over the work cap, in bounded time and memory", () => {
    const list = Array.from({ length: 12_000 }, (_, k) => `x${k % 32}_${k % 31}`)
    assert.isAbove(workOf(bomb, { list }, Number.MAX_SAFE_INTEGER), 12_000_000)
    const { issues, ms, heapMb } = measured({ list })
    process.stdout.write(`[args-budget] bomb, 12,000 valid items: ${ms.toFixed(1)} ms, heap +${heapMb.toFixed(1)} MB\n`)
    assert.deepStrictEqual(
      issues.map((issue) => issue.limit),
      ["work"]
    )
    assert.isBelow(ms, 1_000)
    assert.isBelow(heapMb, 100)
  })

  it("the bomb with 12,000 failing items stops at the first item, in bounded time and memory", () => {
    const list = Array.from({ length: 12_000 }, () => "zz")
    const { issues, ms, heapMb } = measured({ list })
    process.stdout.write(
      `[args-budget] bomb, 12,000 failing items: ${ms.toFixed(1)} ms, heap +${heapMb.toFixed(1)} MB\n`
    )
    assert.isAbove(issues.length, 0)
    assert.isTrue(issues.every((issue) => issue.path === "/list/0" || issue.limit === "work"))
    assert.isBelow(ms, 2_000)
    assert.isBelow(heapMb, 200)
  })

  it("within the cap, the bomb still checks valid items", () => {
    assert.deepStrictEqual(issuesOf(bomb, { list: ["x3_4", "x31_0"] }), [])
  })
})
