/**
 * pedelec-cli → agent: the one JSON line `pedelec-cli` prints and its exit code, which is the whole interface an
 * agent shell sees. A result over 32 KiB is written to `.pedelec-runtime/tmp/<toolCallId>.json` instead, because
 * agent shells truncate long output.
 */
import * as Schema from "effect/Schema"
import { ToolError } from "../Tool.ts"

export const CliOutput = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), result: Schema.Json }),
  Schema.Struct({
    ok: Schema.Literal(true),
    resultFile: Schema.String,
    bytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    preview: Schema.String
  }),
  Schema.Struct({ ok: Schema.Literal(false), error: ToolError })
])
export type CliOutput = typeof CliOutput.Type

export const CLI_EXIT = {
  ok: 0,
  /** The tool call failed; the line says why (`ok: false`). */
  toolFailed: 1,
  usage: 2,
  /** Pedelec cannot be used here: no Core, unknown or ended session, bad capability, a sandbox blocking sockets. */
  unavailable: 3
} as const
