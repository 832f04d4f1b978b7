/**
 * JSON pointers (RFC 6901) for reporting where in a document something is wrong, a conversion from Effect Schema
 * issues to `{pointer, reason}` pairs, so every decoder in contracts reports locations the same way, and the depth
 * bound every link applies before decoding.
 */
import * as Cause from "effect/Cause"
import type * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { MAX_JSON_DEPTH } from "./Wire.ts"

export const toPointer = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("")

export interface PointedIssue {
  readonly pointer: string
  readonly reason: string
}

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

/** Every issue of a failed decode, each with the pointer of the offending location. */
export const pointedIssues = (issue: SchemaIssue.Issue): ReadonlyArray<PointedIssue> =>
  standard(issue).issues.map((i) => ({
    pointer: toPointer((i.path ?? []).map((p) => (typeof p === "object" ? p.key : p))),
    reason: i.message
  }))

/** Issues of a failed decode Exit; a defect (a bug, not bad input) is rethrown rather than reported as input. */
export const issuesOfExit = (exit: Exit.Failure<unknown, Schema.SchemaError>): ReadonlyArray<PointedIssue> => {
  const error = Cause.squash(exit.cause)
  if (Schema.isSchemaError(error)) return pointedIssues(error.issue)
  throw error
}

// The depth bound is defined with the other effect-free wire constants; the links that check it import it from here.
export { MAX_JSON_DEPTH } from "./Wire.ts"

/** The pointer of the first place nested deeper than `maxDepth`, or undefined. Never recursive. */
export const jsonDepthExceeded = (value: unknown, maxDepth: number = MAX_JSON_DEPTH): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<PropertyKey> }> = [{ value, path: [] }]
  while (stack.length > 0) {
    const next = stack.pop()!
    if (typeof next.value !== "object" || next.value === null) continue
    if (next.path.length >= maxDepth) return toPointer(next.path)
    for (const [key, child] of Object.entries(next.value)) stack.push({ value: child, path: [...next.path, key] })
  }
  return undefined
}
