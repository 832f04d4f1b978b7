/**
 * Sessions as every hop sees them: statuses, what `createSession` asks for, what a page learns about a session,
 * and how a turn ends. The status machine itself is Core's; these are its observable states.
 */
import * as Schema from "effect/Schema"
import { Origin, SessionId, TurnId } from "./Ids.ts"
import { EffortLevel, ModelName, ProviderCode } from "./Provider.ts"
import { Skills } from "./Tool.ts"

/** `idle → running → (waiting_tool_result ↔ running) → idle`; `ended` from any state; `error` = cannot continue. */
export const SessionStatus = Schema.Literals(["idle", "running", "waiting_tool_result", "ended", "error"])
export type SessionStatus = typeof SessionStatus.Type

export const TurnReason = Schema.Literals(["completed", "cancelled", "failed"])
export type TurnReason = typeof TurnReason.Type

/** Prepare turns warm the provider up; their chat is hidden from the page. */
export const TurnKind = Schema.Literals(["user", "prepare"])
export type TurnKind = typeof TurnKind.Type

export const AbsolutePath = Schema.String.check(
  Schema.isBetweenLength(1, 4096),
  Schema.isPattern(/^(\/|[A-Za-z]:[\\/]|\\\\)/, { message: "Expected an absolute path" })
)

export const CreateSessionInput = Schema.Struct({
  provider: Schema.optionalKey(ProviderCode),
  model: Schema.optionalKey(ModelName),
  effortLevel: Schema.optionalKey(EffortLevel),
  /** An explicit project directory; a separate grant from the user (SPEC §12). Absent: a managed workspace. */
  workspace: Schema.optionalKey(Schema.Struct({ path: AbsolutePath })),
  skills: Schema.optionalKey(Skills),
  autoEndOnDisconnect: Schema.optionalKey(Schema.Boolean)
}).check(
  Schema.makeFilter((input) =>
    input.model !== undefined && input.provider === undefined
      ? { path: ["model"], issue: "`model` needs `provider`: a model name only makes sense for one provider" }
      : undefined
  )
)
export type CreateSessionInput = typeof CreateSessionInput.Type

export const WorkspaceInfo = Schema.Struct({
  path: AbsolutePath,
  /** Managed workspaces are Core's and deleted at end; explicit ones are never touched outside .pedelec-runtime/. */
  managed: Schema.Boolean
})
export type WorkspaceInfo = typeof WorkspaceInfo.Type

/** What a page learns when it creates or resumes a session (metadata is rehydrated on resume). */
export const SessionInfo = Schema.Struct({
  sessionId: SessionId,
  origin: Origin,
  provider: ProviderCode,
  model: Schema.NullOr(ModelName),
  effortLevel: EffortLevel,
  workspace: WorkspaceInfo,
  status: SessionStatus,
  autoEndOnDisconnect: Schema.Boolean,
  /** Last event `seq` at the time of the answer; subscribing after it misses nothing. */
  lastSeq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  createdAt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})
export type SessionInfo = typeof SessionInfo.Type

/** What `sendText` resolves with; a failed turn rejects with its error instead. */
export const TurnResult = Schema.Struct({
  turnId: TurnId,
  reason: Schema.Literals(["completed", "cancelled"]),
  text: Schema.String
})
export type TurnResult = typeof TurnResult.Type

/** User text of one turn: bounded so no page can push an unbounded prompt through every hop. */
export const TurnText = Schema.String.check(Schema.isBetweenLength(1, 1_000_000))
