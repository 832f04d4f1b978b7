/**
 * Tools the page defines: the manifest that travels (name, description, argsSchema, timeout, annotations), the
 * skills bundle of `createSession`, and the outcome of a call as it goes back to the agent. Inline handlers stay
 * in the page and never appear here.
 */
import * as Schema from "effect/Schema"
import { ArgsSchema } from "./ArgsSchema.ts"
import { ErrorCode } from "./ErrorCode.ts"
import { ErrorDetails } from "./PedelecError.ts"
import { WIRE_PATTERNS } from "./Wire.ts"

export const TOOL_LIMITS = {
  minTimeoutMs: 1_000,
  maxTimeoutMs: 30 * 60_000,
  defaultTimeoutMs: 60_000,
  /** `progress` resets the timeout, but a call never lives longer than this many timeouts. */
  maxProgressFactor: 10,
  /** A call waiting on a person (`tool.awaiting_user`) has no timeout, but ends this long after its offer. */
  awaitingUserCeilingMs: 30 * 60_000,
  maxTools: 128,
  maxDescription: 4096,
  maxGuidance: 65_536,
  /** Calls waiting for the page, per session. */
  queueBound: 16,
  /** A page result larger than this is `TOOL_RESULT_TOO_LARGE`. */
  maxResultBytes: 4 * 1024 * 1024,
  /** Larger results reach the agent as a file: agent shells truncate long output. */
  inlineResultBytes: 32 * 1024
} as const

export const ToolName = Schema.String.check(Schema.isPattern(WIRE_PATTERNS.toolName)).annotate({
  description: "Starts with a letter; letters, digits, `_`, `.`, `-`; at most 64 characters."
})
export type ToolName = typeof ToolName.Type

/**
 * Hints shown to the agent in the tool index. `destructive` and `requiresConfirmation` are also the user's: the
 * extension asks the user before the page's handler runs such a call; the others are never enforced.
 */
export const ToolAnnotations = Schema.Struct({
  readOnly: Schema.optionalKey(Schema.Boolean),
  destructive: Schema.optionalKey(Schema.Boolean),
  requiresConfirmation: Schema.optionalKey(Schema.Boolean),
  idempotent: Schema.optionalKey(Schema.Boolean),
  title: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 128)))
})
export type ToolAnnotations = typeof ToolAnnotations.Type

export const ToolTimeoutMs = Schema.Int.check(
  Schema.isBetween({ minimum: TOOL_LIMITS.minTimeoutMs, maximum: TOOL_LIMITS.maxTimeoutMs })
)

/** One tool as it travels from the page to Core. */
export const ToolManifest = Schema.Struct({
  name: ToolName,
  description: Schema.String.check(Schema.isBetweenLength(1, TOOL_LIMITS.maxDescription)),
  argsSchema: ArgsSchema,
  timeoutMs: Schema.optionalKey(ToolTimeoutMs),
  annotations: Schema.optionalKey(ToolAnnotations)
})
export type ToolManifest = typeof ToolManifest.Type

const uniqueNames = Schema.makeFilter<ReadonlyArray<ToolManifest>>((tools) =>
  tools.flatMap((tool, index) =>
    tools.findIndex((other) => other.name === tool.name) === index
      ? []
      : [{ path: [index, "name"], issue: `tool name "${tool.name}" is used twice` }]
  )
)

export const ToolsManifest = Schema.Array(ToolManifest).check(Schema.isMaxLength(TOOL_LIMITS.maxTools), uniqueNames)
export type ToolsManifest = typeof ToolsManifest.Type

/** Guidance for the agent, injected verbatim, and the page's tools. */
export const Skills = Schema.Struct({
  guidance: Schema.String.check(Schema.isMaxLength(TOOL_LIMITS.maxGuidance)),
  tools: ToolsManifest
})
export type Skills = typeof Skills.Type

/** The error half of a tool outcome, as the agent reads it. */
export const ToolError = Schema.Struct({
  code: ErrorCode,
  message: Schema.String.check(Schema.isMaxLength(8192)),
  details: Schema.optionalKey(ErrorDetails)
})
export type ToolError = typeof ToolError.Type

/** What a handler produced: a JSON result, or an error the agent can act on. Never a page-side exception. */
export const ToolOutcome = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), result: Schema.Json }),
  Schema.Struct({ ok: Schema.Literal(false), error: ToolError })
])
export type ToolOutcome = typeof ToolOutcome.Type
