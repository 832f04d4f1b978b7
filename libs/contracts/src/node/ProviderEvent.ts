/**
 * What a provider adapter reports to Core while a turn runs, whatever the CLI printed: the provider's own session
 * id, streamed text, complete messages, tool activity, usage, the end of the turn, or an error with a contract code.
 * Core turns these into session events; adapters never emit session events themselves.
 */
import * as Schema from "effect/Schema"
import { ErrorCode } from "../ErrorCode.ts"
import { ErrorDetails } from "../PedelecError.ts"

/** The CLI's id for its conversation, used to resume it in the next turn. */
export const ProviderSessionId = Schema.String.check(Schema.isBetweenLength(1, 512))

export const ProviderEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("session"), providerSessionId: ProviderSessionId }),
  Schema.Struct({ type: Schema.Literal("delta"), text: Schema.String }),
  /** A complete assistant message; for a CLI that does not stream, also the only delta. */
  Schema.Struct({ type: Schema.Literal("message"), text: Schema.String }),
  /** The agent used a tool of its own (shell, file edit); shown in monitors, never as chat. */
  Schema.Struct({
    type: Schema.Literal("tool_activity"),
    name: Schema.String.check(Schema.isMaxLength(256)),
    detail: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4096)))
  }),
  Schema.Struct({
    type: Schema.Literal("usage"),
    inputTokens: Schema.optionalKey(Schema.Int),
    outputTokens: Schema.optionalKey(Schema.Int)
  }),
  /** The turn ended; `text` is the final message when the CLI reports one apart from its messages. */
  Schema.Struct({ type: Schema.Literal("completed"), text: Schema.optionalKey(Schema.String) }),
  Schema.Struct({
    type: Schema.Literal("error"),
    code: ErrorCode,
    message: Schema.String.check(Schema.isMaxLength(8192)),
    details: Schema.optionalKey(ErrorDetails)
  })
])
export type ProviderEvent = typeof ProviderEvent.Type
