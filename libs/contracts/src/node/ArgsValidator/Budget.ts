/**
 * ArgsValidator/Budget — what checking one tool call may cost, and the cheap walks that refuse a call before it
 * costs that much: the arguments' size and nesting (one pass over them, no recursion), and the schema's work for
 * these arguments (every schema node each value is checked against, oneOf members included, plus the characters a
 * `pattern` scans), counted only up to the cap. Owns the limits and the walks; checking the arguments is
 * ArgsValidator's, running it off Core's event loop and the time budget are Core's (libs/core ToolRouter/Validation).
 *
 * Why a work cap as well as a size cap: a 48 KB call whose items are each tried against a 32×32 nested oneOf is
 * 12 million member checks (measured: 2,000 items took Core 9.3 s and 1.1 GB); its size alone says nothing.
 */
import * as Result from "effect/Result"
import type { ArgsSchema, ArgsSchemaNode } from "../../ArgsSchema.ts"
import { ARGS_SCHEMA_LIMITS } from "../../ArgsSchema.ts"
import { toPointer } from "../../JsonPointer.ts"
import type { ArgsIssue } from "../ArgsValidator.ts"

export const ARGS_BUDGET = {
  /** JSON bytes of one call's arguments (pedelec-cli passes them as one argv string: Linux caps that at 128 KiB). */
  maxBytes: 1024 * 1024,
  /** The same bound as an argsSchema document. */
  maxDepth: ARGS_SCHEMA_LIMITS.maxJsonDepth,
  /**
   * Schema-node visits plus pattern-scanned characters (`workOf`). Measured 2–15 µs a unit (oneOf members cheapest,
   * open objects dearest) on a loaded 2-core machine: a few hundred ms at the cap; Core's time budget covers the rest.
   */
  maxWork: 100_000,
  /** Wall time one check may take in its worker before the worker is terminated. */
  timeMs: 1_000
} as const

const overBytes = (max: number): ArgsIssue => ({
  path: "",
  limit: "bytes",
  reason: `the arguments are larger than ${max} bytes of JSON; send less per call (fewer items, or a file path instead of its content)`
})

const tooDeep = (path: ReadonlyArray<PropertyKey>, max: number): ArgsIssue => ({
  path: toPointer(path),
  limit: "depth",
  reason: `arguments are nested too deeply (more than ${max} levels); flatten them`
})

/** Bytes a scalar or a key adds to the JSON text, near enough for a cap (no string escapes counted). */
const scalarBytes = (value: unknown): number =>
  typeof value === "string" ? value.length + 3 : typeof value === "number" ? 12 : 6

/**
 * Refuses arguments over `maxBytes` of JSON or nested deeper than `maxDepth`, in one iterative pass that stops at
 * the first excess: it runs on Core's event loop, before the arguments are copied to a worker. Succeeds with the
 * approximate JSON size.
 */
export const checkArgsShape = (
  args: unknown,
  limits: { readonly maxBytes: number; readonly maxDepth: number } = ARGS_BUDGET
): Result.Result<number, ArgsIssue> => {
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<PropertyKey> }> = [
    { value: args, path: [] }
  ]
  let bytes = 0
  while (stack.length > 0) {
    const { value, path } = stack.pop()!
    if (typeof value !== "object" || value === null) {
      bytes += scalarBytes(value)
    } else {
      if (path.length >= limits.maxDepth) return Result.fail(tooDeep(path, limits.maxDepth))
      bytes += 2
      for (const [key, child] of Object.entries(value)) {
        bytes += Array.isArray(value) ? 1 : key.length + 4
        stack.push({ value: child, path: [...path, key] })
      }
    }
    if (bytes > limits.maxBytes) return Result.fail(overBytes(limits.maxBytes))
  }
  return Result.succeed(bytes)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface Tally {
  spent: number
  readonly cap: number
}

/** Adds the work of checking `value` against `node`; stops descending once the cap is passed. */
const tally = (node: ArgsSchemaNode, value: unknown, t: Tally): void => {
  if (++t.spent > t.cap) return
  if ("oneOf" in node) {
    for (const member of node.oneOf) tally(member, value, t)
    return
  }
  if (node.type === "string" && node.pattern !== undefined && typeof value === "string") {
    t.spent += value.length
  } else if (node.type === "array" && Array.isArray(value)) {
    for (const item of value) {
      if (t.spent > t.cap) return
      tally(node.items, item, t)
    }
  } else if (node.type === "object" && isRecord(value)) {
    const properties = node.properties ?? {}
    for (const [key, child] of Object.entries(value)) {
      if (t.spent > t.cap) return
      if (Object.hasOwn(properties, key)) tally(properties[key]!, child, t)
      else t.spent += 1
    }
  }
}

/** The work of checking `args` against `schema`, counted up to `cap` (more than `cap` means over budget). */
export const workOf = (schema: ArgsSchema, args: unknown, cap: number = ARGS_BUDGET.maxWork): number => {
  const t: Tally = { spent: 0, cap }
  tally(schema, args, t)
  return t.spent
}

export const overWork = (max: number): ArgsIssue => ({
  path: "",
  limit: "work",
  reason: `checking these arguments against the tool's schema would take more than ${max} steps (every item is tried against every oneOf member); split the call into smaller ones with fewer items`
})

export const overTime = (ms: number): ArgsIssue => ({
  path: "",
  limit: "time",
  reason: `checking these arguments took longer than ${ms} ms, Core's budget for one call (long strings against the tool's patterns); send shorter strings or fewer items per call`
})

export const overMemory: ArgsIssue = {
  path: "",
  limit: "memory",
  reason: "checking these arguments ran out of the memory Core allows one check; send fewer or smaller items per call"
}

/** No `pattern` and no `oneOf` anywhere: its checking cost is linear in the arguments' size with a small constant. */
export const isSimpleSchema = (node: ArgsSchemaNode): boolean => {
  if ("oneOf" in node) return false
  switch (node.type) {
    case "string":
      return node.pattern === undefined
    case "array":
      return isSimpleSchema(node.items)
    case "object":
      return Object.values(node.properties ?? {}).every(isSimpleSchema)
    default:
      return true
  }
}
