/**
 * pedelec-cli / pedelec-deno ↔ Core (agent role), as an `effect/rpc` group over Core IPC. An agent proves one
 * session's capability (`PEDELEC_SESSION_CAP`) on every request and can only list, read and call that session's
 * tools, and ask where that session's scripts may run (`deno.prepare`). Knowing a session id is not enough.
 */
import * as Context from "effect/Context"
import { Rpc, RpcGroup, RpcMiddleware } from "effect/rpc"
import * as Schema from "effect/Schema"
import { ArgsSchema } from "../ArgsSchema.ts"
import { SessionId } from "../Ids.ts"
import { PedelecError } from "../PedelecError.ts"
import { AbsolutePath } from "../Session.ts"
import { ToolAnnotations, ToolName, ToolTimeoutMs } from "../Tool.ts"
import { CliOutput } from "./CliOutput.ts"
import { HelloRpcs } from "./CoreLink.ts"

/** Provided to agent-role handlers: the one session the capability opens. */
export class AgentCaller extends Context.Service<AgentCaller, { readonly sessionId: SessionId }>()(
  "pedelec/contracts/AgentCaller"
) {}

export class AgentAuth extends RpcMiddleware.Service<AgentAuth, { provides: AgentCaller }>()(
  "pedelec/contracts/AgentAuth",
  { error: PedelecError, requiredForClient: true }
) {}

/** What the tool index and `tool-list` show: everything but the argument schema. */
export const ToolSummary = Schema.Struct({
  name: ToolName,
  description: Schema.String,
  timeoutMs: ToolTimeoutMs,
  annotations: Schema.optionalKey(ToolAnnotations)
})
export type ToolSummary = typeof ToolSummary.Type

export const ToolSpec = Schema.Struct({ ...ToolSummary.fields, argsSchema: ArgsSchema })
export type ToolSpec = typeof ToolSpec.Type

/**
 * What pedelec-deno may do for the capability's session: Core's word, never the agent's cwd or argv. `workspace` is
 * the real path of the session's workspace (the only place a script may read and write); a run longer than
 * `timeoutMs` is stopped, and each of stdout and stderr is cut after `outputBytes`.
 */
export const DenoRunPolicy = Schema.Struct({
  workspace: AbsolutePath,
  timeoutMs: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 24 * 60 * 60_000 })),
  outputBytes: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1024 * 1024 * 1024 }))
})
export type DenoRunPolicy = typeof DenoRunPolicy.Type

/** An agent's own name for one of its calls, unique among its calls in flight. */
const CallTag = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/))

/** The thread id the agent passed; Core checks it names the capability's session. */
const OnThread = { sessionId: SessionId }

export class AgentRpcs extends RpcGroup.make(
  Rpc.make("tool.list", { payload: OnThread, success: Schema.Array(ToolSummary), error: PedelecError }),
  Rpc.make("tool.spec", { payload: { ...OnThread, name: ToolName }, success: ToolSpec, error: PedelecError }),
  /**
   * Resolves with exactly the line pedelec-cli prints: the page's outcome, or, over 32 KiB, the file Core wrote it
   * to. Interrupting the request (the agent killed pedelec-cli) cancels the call: the page's signal aborts and the
   * queue moves on. Core refusing the call itself (`TOOL_ARGS_INVALID`, `UNAUTHORIZED`, …) is the error channel.
   */
  Rpc.make("tool.call", {
    payload: { ...OnThread, name: ToolName, args: Schema.Json, tag: Schema.optionalKey(CallTag) },
    success: CliOutput,
    error: PedelecError
  }),
  /**
   * Answers once the call this agent tagged `tag` waits on the user (the page said a person is answering), at once
   * if it already does; the agent interrupts it when the call ends. `pedelec-cli mcp` turns it into a progress
   * notification for a client that asked for progress.
   */
  Rpc.make("tool.waits_on_user", { payload: { ...OnThread, tag: CallTag }, error: PedelecError }),
  /** pedelec-deno asks before every run: the session's workspace and the run's limits. */
  Rpc.make("deno.prepare", { payload: OnThread, success: DenoRunPolicy, error: PedelecError })
).middleware(AgentAuth) {}

/** What an agent-role client speaks: the hello, then the agent group (pedelec-cli's and pedelec-deno's effect clients). */
export const AgentClientRpcs = HelloRpcs.merge(AgentRpcs)
