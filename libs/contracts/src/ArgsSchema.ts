/**
 * The argsSchema subset (SPEC §3): the JSON Schema dialect a page may use for its tools' arguments, as recursive
 * Effect Schemas, and `decodeArgsSchema`, which accepts exactly the subset and rejects anything else with the JSON
 * pointer of the offending keyword. Browser-safe: checking arguments against a schema is the node-only
 * ArgsValidator, which compiles `pattern` with a linear-time engine.
 */
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { issuesOfExit, jsonDepthExceeded, type PointedIssue } from "./JsonPointer.ts"

export const ARGS_SCHEMA_LIMITS = {
  /**
   * JSON nesting of the whole document (each schema level takes two: `properties`, then the name); below
   * MAX_JSON_DEPTH, so a schema accepted alone still fits inside a link message.
   */
  maxJsonDepth: 48,
  maxJsonObjects: 4096,
  maxPatternLength: 512,
  maxProperties: 128,
  maxEnum: 256,
  maxOneOf: 32,
  maxStringLength: 4096
} as const

/** What every node may carry beside its type: guidance for the agent, never applied to the arguments. */
export interface ArgsSchemaMeta {
  readonly description?: string
  readonly default?: Schema.Json
  readonly examples?: ReadonlyArray<Schema.Json>
}
export interface ArgsStringSchema extends ArgsSchemaMeta {
  readonly type: "string"
  readonly enum?: ReadonlyArray<string>
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
}
export interface ArgsNumberSchema extends ArgsSchemaMeta {
  readonly type: "number"
  readonly enum?: ReadonlyArray<number>
  readonly minimum?: number
  readonly maximum?: number
}
export interface ArgsIntegerSchema extends ArgsSchemaMeta {
  readonly type: "integer"
  readonly enum?: ReadonlyArray<number>
  readonly minimum?: number
  readonly maximum?: number
}
export interface ArgsBooleanSchema extends ArgsSchemaMeta {
  readonly type: "boolean"
}
export interface ArgsArraySchema extends ArgsSchemaMeta {
  readonly type: "array"
  readonly items: ArgsSchemaNode
  readonly minItems?: number
  readonly maxItems?: number
  readonly uniqueItems?: boolean
}
export interface ArgsObjectSchema extends ArgsSchemaMeta {
  readonly type: "object"
  readonly properties?: { readonly [name: string]: ArgsSchemaNode }
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: false
}
export interface ArgsOneOfSchema extends ArgsSchemaMeta {
  readonly oneOf: ReadonlyArray<ArgsSchemaNode>
}
export type ArgsSchemaNode =
  | ArgsStringSchema
  | ArgsNumberSchema
  | ArgsIntegerSchema
  | ArgsBooleanSchema
  | ArgsArraySchema
  | ArgsObjectSchema
  | ArgsOneOfSchema
/** A tool's `argsSchema`: the root is always an object. */
export type ArgsSchema = ArgsObjectSchema

const L = ARGS_SCHEMA_LIMITS
const Text = Schema.String.check(Schema.isMaxLength(L.maxStringLength))
const Count = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 }))
const Bound = Schema.Finite

const meta = {
  description: Schema.optionalKey(Text),
  default: Schema.optionalKey(Schema.Json),
  examples: Schema.optionalKey(Schema.Array(Schema.Json).check(Schema.isMaxLength(16)))
}

const ordered = (low: string, high: string) =>
  Schema.makeFilter<Record<string, unknown>>((node) => {
    const lo = node[low]
    const hi = node[high]
    return typeof lo === "number" && typeof hi === "number" && lo > hi
      ? { path: [low], issue: `${low} (${lo}) is greater than ${high} (${hi})` }
      : undefined
  })

const uniqueEnum = Schema.makeFilter<{ readonly enum?: ReadonlyArray<unknown> }>((node) =>
  node.enum === undefined || new Set(node.enum).size === node.enum.length
    ? undefined
    : { path: ["enum"], issue: "enum values must be unique" }
)

const enumOf = <S extends Schema.Top>(item: S) =>
  Schema.optionalKey(Schema.Array(item).check(Schema.isBetweenLength(1, L.maxEnum)))

const StringNode = Schema.Struct({
  type: Schema.Literal("string"),
  enum: enumOf(Text),
  minLength: Schema.optionalKey(Count),
  maxLength: Schema.optionalKey(Count),
  pattern: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, L.maxPatternLength))),
  ...meta
}).check(ordered("minLength", "maxLength"), uniqueEnum)

const numeric = <T extends "number" | "integer">(type: T, value: Schema.Codec<number>) =>
  Schema.Struct({
    type: Schema.Literal(type),
    enum: enumOf(value),
    minimum: Schema.optionalKey(Bound),
    maximum: Schema.optionalKey(Bound),
    ...meta
  }).check(ordered("minimum", "maximum"), uniqueEnum)

const NumberNode = numeric("number", Schema.Finite)
const IntegerNode = numeric("integer", Schema.Int)

const BooleanNode = Schema.Struct({ type: Schema.Literal("boolean"), ...meta })

const ArrayNode = Schema.Struct({
  type: Schema.Literal("array"),
  items: Schema.suspend((): Schema.Codec<ArgsSchemaNode> => ArgsSchemaNode),
  minItems: Schema.optionalKey(Count),
  maxItems: Schema.optionalKey(Count),
  uniqueItems: Schema.optionalKey(Schema.Boolean),
  ...meta
}).check(ordered("minItems", "maxItems"))

const PropertyName = Schema.String.check(Schema.isBetweenLength(1, 128))

const requiredKnown = Schema.makeFilter<{
  readonly properties?: { readonly [name: string]: unknown }
  readonly required?: ReadonlyArray<string>
}>((node) => {
  const required = node.required ?? []
  const issues: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly issue: string }> = []
  required.forEach((name, index) => {
    if (!Object.hasOwn(node.properties ?? {}, name)) {
      issues.push({ path: ["required", index], issue: `required property "${name}" is not in properties` })
    } else if (required.indexOf(name) !== index) {
      issues.push({ path: ["required", index], issue: `required property "${name}" is listed twice` })
    }
  })
  return issues
})

const ObjectNode = Schema.Struct({
  type: Schema.Literal("object"),
  properties: Schema.optionalKey(
    Schema.Record(
      PropertyName,
      Schema.suspend((): Schema.Codec<ArgsSchemaNode> => ArgsSchemaNode)
    ).check(Schema.isMaxProperties(L.maxProperties))
  ),
  required: Schema.optionalKey(Schema.Array(PropertyName).check(Schema.isMaxLength(L.maxProperties))),
  additionalProperties: Schema.optionalKey(
    Schema.Literal(false).annotate({ message: "only `additionalProperties: false` is supported" })
  ),
  ...meta
}).check(requiredKnown)

const OneOfNode = Schema.Struct({
  oneOf: Schema.Array(Schema.suspend((): Schema.Codec<ArgsSchemaNode> => ArgsSchemaNode)).check(
    Schema.isBetweenLength(1, L.maxOneOf)
  ),
  ...meta
})

export const ArgsSchemaNode: Schema.Codec<ArgsSchemaNode> = Schema.Union([
  StringNode,
  NumberNode,
  IntegerNode,
  BooleanNode,
  ArrayNode,
  ObjectNode,
  OneOfNode
]).annotate({ identifier: "ArgsSchemaNode" })

export const ArgsSchema: Schema.Codec<ArgsSchema> = ObjectNode.annotate({
  identifier: "ArgsSchema",
  description: "A tool's argument schema: the JSON Schema subset of SPEC §3 with an object root."
})

/** Bounds the document's depth and size before recursive decoding, so no input can exhaust the stack. */
const exceedsLimits = (input: unknown): PointedIssue | undefined => {
  const tooDeep = jsonDepthExceeded(input, L.maxJsonDepth)
  if (tooDeep !== undefined) return { pointer: tooDeep, reason: "the schema is nested too deeply" }
  let objects = 0
  const stack: Array<unknown> = [input]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value !== "object" || value === null) continue
    if (++objects > L.maxJsonObjects) return { pointer: "", reason: "the schema is too large" }
    stack.push(...Object.values(value))
  }
  return undefined
}

const decodeNode = Schema.decodeUnknownExit(ArgsSchema)

const NODE_TYPES = ["string", "number", "integer", "boolean", "array", "object"]

/** Accepts exactly the subset; the failure names the offending keyword by JSON pointer. */
export const decodeArgsSchema = (input: unknown): Result.Result<ArgsSchema, PointedIssue> => {
  const tooBig = exceedsLimits(input)
  if (tooBig) return Result.fail(tooBig)
  if (typeof input === "object" && input !== null && "type" in input && input.type !== "object") {
    return Result.fail({ pointer: "/type", reason: 'the root of argsSchema must be `type: "object"`' })
  }
  const exit = decodeNode(input, { onExcessProperty: "error" })
  if (Exit.isSuccess(exit)) return Result.succeed(exit.value)
  const first = issuesOfExit(exit)[0] ?? { pointer: "", reason: "invalid schema" }
  return Result.fail(explain(first))
}

/** Rewrites Effect's generic messages in the vocabulary of JSON Schema authors. */
const explain = (issue: PointedIssue): PointedIssue => {
  const keyword = issue.pointer
    .slice(issue.pointer.lastIndexOf("/") + 1)
    .replaceAll("~1", "/")
    .replaceAll("~0", "~")
  if (keyword === "type") {
    return { pointer: issue.pointer, reason: `type must be one of ${NODE_TYPES.join(", ")} (or use oneOf)` }
  }
  switch (issue.reason) {
    case "Expected no excess property":
      return { pointer: issue.pointer, reason: `keyword "${keyword}" is not supported by the argsSchema subset` }
    case "Missing key":
      // A node with neither `type` nor `oneOf` fails every member; Effect names the last one's key, `oneOf`.
      if (keyword === "oneOf") return explain({ pointer: `${issue.pointer.slice(0, -"oneOf".length)}type`, reason: "" })
      return { pointer: issue.pointer, reason: `keyword "${keyword}" is required here` }
    default:
      return issue
  }
}
