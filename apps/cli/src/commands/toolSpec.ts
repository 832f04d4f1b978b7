/**
 * `pedelec-cli tool-spec <name>`: one tool's description, timeout, annotations and argument schema (the JSON Schema
 * subset Core validates calls against), as one `{"ok":true,"result":{…}}` line.
 */
import * as Effect from "effect/Effect"
import { succeeded } from "../Output.ts"
import { AgentCore } from "../ToCore.ts"
import { toolName } from "./toolName.ts"

export const toolSpec = Effect.fn("toolSpec")(function* (name: string) {
  const tool = yield* toolName(name)
  const core = yield* AgentCore
  const spec = yield* core.spec(tool)
  return succeeded(spec)
})
