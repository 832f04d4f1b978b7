/**
 * `pedelec-cli tool-call <name> '<json>'`: calls a page tool and prints exactly the line Core answers — the page's
 * result, its error (`ok: false`, exit 1), or the `resultFile` form for results over 32 KiB. Core validates the
 * arguments (`TOOL_ARGS_INVALID`); Args already made sure they are one JSON object.
 */

import * as Effect from "effect/Effect"
import type { JsonObject } from "effect/Schema"
import { EXIT, printed } from "../Output.ts"
import { AgentCore } from "../ToCore.ts"
import { toolName } from "./toolName.ts"

export const toolCall = Effect.fn("toolCall")(function* (name: string, args: JsonObject) {
  const tool = yield* toolName(name)
  const core = yield* AgentCore
  const output = yield* core.call(tool, args)
  // What the page answered, even a failure, is a finished call: exit 1, never "Pedelec is unavailable".
  return printed(output, output.ok ? EXIT.ok : EXIT.toolFailed)
})
