/**
 * JSON pointers (RFC 6901) for reporting where in a document something is wrong, and a conversion from Effect
 * Schema issues to `{pointer, reason}` pairs, so every decoder in contracts reports locations the same way.
 */
import * as Cause from "effect/Cause"
import type * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

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
