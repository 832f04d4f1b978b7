/**
 * FromAgent — Core's side of the agent role (pedelec-cli or pedelec-deno run by an agent): the session's tools and
 * the policy of its script runs, nothing else. The capability check already ran (CoreAuth), so the session here is
 * the caller's own; its workspace comes from the session record, never from the agent.
 */
import { realpath } from "node:fs/promises"
import { AgentCaller, AgentRpcs, type DenoRunPolicy } from "@pedelec/contracts/node/AgentLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import { CoreConfig } from "./CoreConfig.ts"
import { Sessions } from "./Sessions.ts"
import { ToolRouter } from "./ToolRouter.ts"

/** What each of a script's stdout and stderr may print before pedelec-deno cuts it. */
export const DENO_OUTPUT_BYTES = 1024 * 1024

export const AgentHandlers = AgentRpcs.toLayer(
  Effect.gen(function* () {
    const tools = yield* ToolRouter
    const sessions = yield* Sessions
    const config = yield* CoreConfig
    const callerSession = Effect.flatMap(AgentCaller, ({ sessionId }) => sessions.live(sessionId))

    /** The live session's workspace, by its real path (what pedelec-deno confines the script to). */
    const denoPrepare = Effect.fn("FromAgent.denoPrepare")(function* () {
      const session = yield* callerSession
      const workspace = yield* Effect.tryPromise({
        try: () => realpath(session.workspace),
        catch: (cause) =>
          PedelecError.fromCode("WORKSPACE_PATH_INVALID", "core", {
            details: { path: session.workspace, reason: `it cannot be resolved (${String(cause)})` }
          })
      })
      return { workspace, timeoutMs: config.denoTimeoutMs, outputBytes: DENO_OUTPUT_BYTES } satisfies DenoRunPolicy
    })

    return AgentRpcs.of({
      "tool.list": () => Effect.map(callerSession, (session) => tools.list(session)),
      "tool.spec": ({ name }) => Effect.flatMap(callerSession, (session) => tools.spec(session, name)),
      "tool.call": ({ name, args, tag }) =>
        Effect.flatMap(callerSession, (session) => tools.call(session, name, args, tag)),
      "tool.waits_on_user": ({ tag }) => Effect.flatMap(callerSession, (session) => tools.waitsOnUser(session, tag)),
      "deno.prepare": () => denoPrepare()
    })
  })
)
