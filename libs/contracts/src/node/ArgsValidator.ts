/**
 * Checks a tool call's arguments against the tool's argsSchema, with an Effect Schema built from the schema (no
 * hand-written validator). `pattern` is compiled with re2js, a linear-time engine, because patterns come from web
 * pages and a backtracking regex would let any page stall Core. Node-only: re2js is 46 KB gzip and never reaches
 * the SDK. Owns validation only; choosing error codes, routing calls and running checks off Core's event loop (with
 * a time budget) are Core's.
 *
 * Checking stops at the first failure: the agent needs one precise reason with its pointer, and collecting every
 * failing oneOf member of every item (`errors: "all"`) took a 48 KB call to 1.1 GB. Before decoding, the arguments'
 * size, nesting and schema work are held to ARGS_BUDGET (ArgsValidator/Budget), so no call costs more than that.
 */
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import { RE2JS } from "re2js"
import { ARGS_SCHEMA_LIMITS, type ArgsSchema, type ArgsSchemaNode } from "../ArgsSchema.ts"
import { issuesOfExit, type PointedIssue, toPointer } from "../JsonPointer.ts"
import { ARGS_BUDGET, checkArgsShape, overWork, workOf } from "./ArgsValidator/Budget.ts"

/** Which budget a refused call exceeded: what `TOOL_ARGS_INVALID`'s `details.limit` names. */
export type ArgsLimit = "bytes" | "depth" | "work" | "time" | "memory"

/** Where in the arguments a check failed (a JSON pointer, "" for the root), why, and for a budget, which one. */
export interface ArgsIssue {
  readonly path: string
  readonly reason: string
  readonly limit?: ArgsLimit
}

export interface ArgsValidator {
  /**
   * Succeeds with the arguments unchanged; fails with the first issue found (a oneOf no member matches gives each
   * member's first issue). Over budget, it fails with the one issue naming the limit, before decoding anything.
   */
  readonly validate: (args: unknown) => Result.Result<unknown, ReadonlyArray<ArgsIssue>>
}

class PatternRejected {
  readonly issue: PointedIssue
  constructor(issue: PointedIssue) {
    this.issue = issue
  }
}

/** Builds the validator; fails with the pointer of a `pattern` re2js cannot compile. */
export const makeArgsValidator = (
  schema: ArgsSchema,
  budget: { readonly maxBytes: number; readonly maxDepth: number; readonly maxWork: number } = ARGS_BUDGET
): Result.Result<ArgsValidator, PointedIssue> => {
  let codec: Schema.Top
  try {
    codec = build(schema, [])
  } catch (error) {
    if (error instanceof PatternRejected) return Result.fail(error.issue)
    throw error
  }
  const decode = Schema.decodeUnknownExit(codec as Schema.Codec<unknown>)
  const validate = (args: unknown): Result.Result<unknown, ReadonlyArray<ArgsIssue>> => {
    const shape = checkArgsShape(args, budget)
    if (Result.isFailure(shape)) return Result.fail([shape.failure])
    if (workOf(schema, args, budget.maxWork) > budget.maxWork) return Result.fail([overWork(budget.maxWork)])
    const exit = decode(args, { onExcessProperty: "error" })
    if (Exit.isSuccess(exit)) return Result.succeed(args)
    return Result.fail(issuesOfExit(exit).map(({ pointer, reason }) => ({ path: pointer, reason: explain(reason) })))
  }
  return Result.succeed({ validate })
}

const build = (node: ArgsSchemaNode, at: ReadonlyArray<PropertyKey>): Schema.Top => {
  if ("oneOf" in node) {
    return Schema.Union(
      node.oneOf.map((member, index) => build(member, [...at, "oneOf", index])),
      { mode: "oneOf" }
    )
  }
  switch (node.type) {
    case "string": {
      const base = node.enum ? Schema.Literals(node.enum) : Schema.String
      // JSON Schema counts string length in code points, not UTF-16 units: "😀" has length 1.
      return withChecks(base, [
        node.minLength === undefined ? undefined : Schema.isMinCodePoints(node.minLength),
        node.maxLength === undefined ? undefined : Schema.isMaxCodePoints(node.maxLength),
        node.pattern === undefined ? undefined : matches(node.pattern, [...at, "pattern"])
      ])
    }
    case "number":
    case "integer": {
      const base = node.enum ? Schema.Literals(node.enum) : node.type === "integer" ? Schema.Int : Schema.Finite
      return withChecks(base, [
        node.minimum === undefined ? undefined : Schema.isGreaterThanOrEqualTo(node.minimum),
        node.maximum === undefined ? undefined : Schema.isLessThanOrEqualTo(node.maximum)
      ])
    }
    case "boolean":
      return Schema.Boolean
    case "array":
      return withChecks(Schema.Array(build(node.items, [...at, "items"]) as Schema.Codec<unknown>), [
        node.minItems === undefined ? undefined : Schema.isMinLength(node.minItems),
        node.maxItems === undefined ? undefined : Schema.isMaxLength(node.maxItems),
        node.uniqueItems === true ? uniqueItems : undefined
      ])
    case "object": {
      const required = new Set(node.required ?? [])
      // No prototype: a property named `__proto__` must become a field, not replace the object's prototype.
      const fields: Record<string, Schema.Top> = Object.create(null)
      for (const [name, property] of Object.entries(node.properties ?? {})) {
        const codec = build(property, [...at, "properties", name])
        fields[name] = required.has(name) ? codec : Schema.optionalKey(codec)
      }
      const struct = Schema.Struct(fields)
      // JSON Schema objects are open unless they say otherwise; the decoder runs with onExcessProperty "error".
      return node.additionalProperties === false
        ? struct
        : Schema.StructWithRest(struct, [Schema.Record(Schema.String, Schema.Json)])
    }
  }
}

type Check<T> = SchemaAST.Check<T> | undefined

const withChecks = <T>(base: Schema.Codec<T>, checks: ReadonlyArray<Check<T>>): Schema.Top => {
  const [first, ...rest] = checks.filter((check) => check !== undefined)
  return first === undefined ? base : base.pipe(Schema.check(first, ...rest))
}

const matches = (pattern: string, at: ReadonlyArray<PropertyKey>) => {
  if (pattern.length > ARGS_SCHEMA_LIMITS.maxPatternLength) {
    throw new PatternRejected({ pointer: toPointer(at), reason: "pattern is longer than 512 characters" })
  }
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(pattern)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new PatternRejected({ pointer: toPointer(at), reason: `pattern cannot be compiled: ${detail}` })
  }
  // JSON Schema patterns are unanchored: a match anywhere in the string passes.
  return Schema.makeFilter<string>((value) =>
    compiled.test(value) ? undefined : `Expected a string matching the pattern ${pattern}`
  )
}

const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : typeof value === "object" && value !== null
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
          .join(",")}}`
      : JSON.stringify(value)

const uniqueItems = Schema.makeFilter<ReadonlyArray<unknown>>((items) => {
  const seen = new Map<string, number>()
  for (const [index, item] of items.entries()) {
    const key = canonical(item)
    const first = seen.get(key)
    if (first !== undefined) return { path: [index], issue: `duplicate of item ${first}; items must be unique` }
    seen.set(key, index)
  }
  return undefined
})

const explain = (reason: string): string => {
  switch (reason) {
    case "Expected no excess property":
      return "property is not allowed (additionalProperties: false)"
    case "Missing key":
      return "required property is missing"
    default:
      return reason
  }
}
