/**
 * The tool name an agent typed, decoded with the contracts' `ToolName` before anything is sent: a name that cannot
 * exist is `TOOL_NOT_FOUND` at once (exit 1), with the hint to run `tool-list`. Shared by tool-spec and tool-call.
 */
import { ToolName } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliFailure } from "../CliFailure.ts"

const decode = Schema.decodeUnknownResult(ToolName)

export const toolName = (name: string): Effect.Effect<ToolName, CliFailure> => {
  const decoded = decode(name)
  return decoded._tag === "Success"
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        CliFailure.of(
          "TOOL_NOT_FOUND",
          `The session has no tool ${JSON.stringify(name)} (tool names start with a letter and use letters, digits, _ . -). Run \`pedelec-cli tool-list\` to see its tools.`,
          { tool: name }
        )
      )
}
