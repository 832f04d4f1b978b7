/**
 * Core (the `ollama` adapter) → `pedelec-agent`, Pedelec's own agent loop: each turn's request, written as one JSON
 * line on the warm agent's stdin, so the API key never sits in argv or the environment its child processes inherit.
 * The agent answers with `ProviderEvent` lines on stdout; effort tokens (`--think=<level>`) come as argv. A `warmUp`
 * request, written when the session opens, is no turn: the agent answers `session` (a new conversation's id) and
 * `completed` at once and reads ahead what the first turn needs, which then continues that conversation.
 */
import * as Schema from "effect/Schema"
import { ModelName } from "../Provider.ts"
import { HttpUrl } from "../Settings.ts"
import { ProviderSessionId } from "./ProviderEvent.ts"

export const AgentLoopRequest = Schema.Struct({
  /** The turn's text; on a fresh conversation Core has already prepended its rules and the tool index. */
  prompt: Schema.String,
  /** Continue this conversation; absent starts a new one. */
  providerSessionId: Schema.optionalKey(ProviderSessionId),
  model: ModelName,
  baseUrl: HttpUrl,
  apiKey: Schema.String.check(Schema.isBetweenLength(1, 4096)),
  /** How long Ollama may stay silent (connecting, or between two streamed lines). */
  timeoutMs: Schema.Int.check(Schema.isBetween({ minimum: 1_000, maximum: 3_600_000 })),
  /** Not a turn (its prompt is empty): get ready for the first one, so that one starts its model request at once. */
  warmUp: Schema.optionalKey(Schema.Literal(true))
})
export type AgentLoopRequest = typeof AgentLoopRequest.Type

/** The tools pedelec-agent offers beside the page's: names a page tool cannot take from them. */
export const AGENT_LOOP_TOOLS = {
  list: "pedelec_list_files",
  read: "pedelec_read_file",
  write: "pedelec_write_file",
  deno: "pedelec_run_script"
} as const
