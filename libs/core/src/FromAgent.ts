/**
 * FromAgent — Core's side of the agent role (pedelec-cli run by an agent): the session's tools, nothing else. The
 * capability check already ran (CoreAuth), so the session here is the caller's own.
 */
import { AgentCaller, AgentRpcs } from "@pedelec/contracts/node/AgentLink"
import * as Effect from "effect/Effect"
import { ToolRouter } from "./ToolRouter.ts"

export const AgentHandlers = AgentRpcs.toLayer(
  Effect.gen(function* () {
    const tools = yield* ToolRouter
    return AgentRpcs.of({
      "tool.list": () => Effect.flatMap(AgentCaller, ({ sessionId }) => tools.list(sessionId)),
      "tool.spec": ({ name }) => Effect.flatMap(AgentCaller, ({ sessionId }) => tools.spec(sessionId, name)),
      "tool.call": ({ name, args }) => Effect.flatMap(AgentCaller, ({ sessionId }) => tools.call(sessionId, name, args))
    })
  })
)
