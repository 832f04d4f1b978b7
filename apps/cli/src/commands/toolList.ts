/**
 * `pedelec-cli tool-list`: the session's tools as the agent's tool index shows them (name, description, timeout,
 * annotations; never the argument schemas), as one `{"ok":true,"result":[…]}` line. Core decides which tools the
 * capability may see; this command only asks.
 */
import * as Effect from "effect/Effect"
import { succeeded } from "../Output.ts"
import { AgentCore } from "../ToCore.ts"

export const toolList = Effect.fn("toolList")(function* () {
  const core = yield* AgentCore
  const tools = yield* core.list
  return succeeded(tools)
})
