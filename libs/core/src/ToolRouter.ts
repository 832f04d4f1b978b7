/**
 * ToolRouter — routes each agent call to the page: arguments checked, queued FIFO per session (bound 16), offered one
 * at a time as a `tool_call` event to the one claim (the newest subscription to claim the tools; offered again when
 * the claim moves), answered by `submit` from the claim's connection alone (idempotent by id), stopped by timeout,
 * cancellation, the caller leaving or the page leaving; paused while the page says a person is answering (a ceiling
 * still holds; ToolRouter/UserWaits). The queue is the session's own
 * (`SessionTools`, in the session's scope; ToolRouter/Queue offers and ends calls); whether a call is pending is
 * written to the session (Session), which the status and the stall clock follow. Compiling manifests and shaping the
 * agent's line are ToolCatalog's.
 */

import { randomBytes } from "node:crypto"
import type { ToolCallId } from "@pedelec/contracts/Ids"
import type { ToolSpec, ToolSummary } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { type Skills, TOOL_LIMITS, type ToolOutcome } from "@pedelec/contracts/Tool"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberHandle from "effect/FiberHandle"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { CoreConfig } from "./CoreConfig.ts"
import { mintToolCallId } from "./Mint.ts"
import { providing } from "./Provided.ts"
import type { Session } from "./Session.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { agentLine, compileTools, jsonBytes, summaryOf, type Tool, writeSpecFiles } from "./ToolCatalog.ts"
import {
  armTimeout,
  type Call,
  type CancelCode,
  type Claim,
  cancelled,
  finish,
  offer,
  offeredCall,
  type SessionTools
} from "./ToolRouter/Queue.ts"
import { awaitingUser, claimedCall, waitsOnUser } from "./ToolRouter/UserWaits.ts"
import { ArgsValidation } from "./ToolRouter/Validation.ts"

export type { SessionTools } from "./ToolRouter/Queue.ts"

const fail = (code: Parameters<typeof PedelecError.fromCode>[0], details: Record<string, Schema.Json>) =>
  Effect.fail(PedelecError.fromCode(code, "core", { details }))

const toolOf = (session: Session, name: string) => {
  const tool = session.tools.catalog.get(name)
  return tool ? Effect.succeed(tool) : fail("TOOL_NOT_FOUND", { tool: name })
}

/** Within a budget and off Core's event loop: one page's schema must not stall every session (ToolRouter/Validation). */
const checkArgs = (tool: Tool, args: Schema.Json) =>
  Effect.flatMap(ArgsValidation, (validation) => validation.check(tool, args))

const open = Effect.fnUntraced(function* (skills: Skills | undefined, workspace: string) {
  const compiled = compileTools(skills)
  if (Result.isFailure(compiled)) return yield* Effect.fail(compiled.failure)
  yield* writeSpecFiles(workspace, compiled.success)
  return {
    catalog: compiled.success,
    queue: [],
    claims: [],
    answerer: yield* Ref.make<Claim | undefined>(undefined),
    ownerTimer: yield* FiberHandle.make<void>(),
    userWaits: new Map()
  } satisfies SessionTools
})

/** While calls wait and no page claims the tools, the grace runs; at its end they fail `TOOL_OWNER_GONE`. */
const armOwnerTimer = Effect.fnUntraced(function* (session: Session) {
  const { ownerGraceMs } = yield* CoreConfig
  const expire = Effect.forEach(
    [...session.tools.queue],
    (call) => finish(session, call, cancelled(call, "TOOL_OWNER_GONE")),
    { discard: true }
  )
  yield* FiberHandle.run(session.tools.ownerTimer, Effect.sleep(ownerGraceMs).pipe(Effect.andThen(expire)), {
    onlyIfMissing: true
  })
})

/** Queues the call, offers it when it is the head, and waits for its end (interrupting the wait cancels it). */
const enqueue = (session: Session, call: Pick<Call, "toolCallId" | "turnId" | "tool" | "args" | "tag">) =>
  Effect.scoped(
    Effect.gen(function* () {
      const entry: Call = {
        ...call,
        reply: yield* Deferred.make<ToolOutcome, PedelecError>(),
        timer: yield* FiberHandle.make<void>(),
        offeredAt: undefined,
        deadline: 0,
        awaitingUser: false
      }
      const queue = session.tools.queue
      queue.push(entry)
      if (queue.length === 1) yield* offer(session, entry)
      if (session.tools.claims.length === 0) yield* armOwnerTimer(session)
      return yield* Deferred.await(entry.reply).pipe(
        Effect.onInterrupt(() => finish(session, entry, cancelled(entry, "TOOL_CANCELLED")))
      )
    })
  )

const call = Effect.fnUntraced(function* (session: Session, name: string, args: Schema.Json, tag?: string) {
  const tool = yield* toolOf(session, name)
  yield* checkArgs(tool, args)
  const turn = yield* Ref.get(session.turn)
  if (turn === undefined) {
    return yield* fail("TOOL_CANCELLED", { tool: name, reason: "no turn is running in this session" })
  }
  if (session.tools.queue.length >= TOOL_LIMITS.queueBound) {
    return yield* fail("TOOL_QUEUE_FULL", { tool: name, limit: TOOL_LIMITS.queueBound })
  }
  const toolCallId = mintToolCallId()
  const outcome = yield* enqueue(session, { toolCallId, turnId: turn.turnId, tool, args, tag })
  return yield* agentLine(session.workspace, toolCallId, outcome)
})

/** Only the newest claim's connection answers: a tab that never claimed, or lost the claim, is refused. */
const checkClaim = Effect.fnUntraced(function* (session: Session, connection: number | undefined) {
  const claim = yield* Ref.get(session.tools.answerer)
  if (claim !== undefined && claim.connection === connection) return
  return yield* fail("TOOL_NOT_CLAIMED", { sessionId: session.sessionId })
})

const submit = Effect.fnUntraced(function* (
  session: Session,
  toolCallId: ToolCallId,
  outcome: ToolOutcome,
  connection: number | undefined
) {
  yield* checkClaim(session, connection)
  const entry = offeredCall(session, toolCallId)
  if (!entry) return false
  const bytes = jsonBytes(outcome)
  const checked: ToolOutcome =
    bytes > TOOL_LIMITS.maxResultBytes
      ? {
          ok: false,
          error: PedelecError.fromCode("TOOL_RESULT_TOO_LARGE", "core", {
            details: { tool: entry.tool.spec.name, bytes, limit: TOOL_LIMITS.maxResultBytes }
          }).toWire()
        }
      : outcome
  yield* finish(session, entry, { kind: "answered", outcome: checked })
  return true
})

const progress = Effect.fnUntraced(function* (
  session: Session,
  toolCallId: ToolCallId,
  connection: number | undefined
) {
  const entry = yield* claimedCall(session, toolCallId, connection)
  // Progress from a tab without the claim would keep alive a call nobody there is running; a paused call stays so.
  if (entry?.offeredAt === undefined || entry.awaitingUser) return
  const timeoutMs = entry.tool.spec.timeoutMs
  // Progress resets the timeout, but never past 10 timeouts from the offer.
  const ceiling = entry.offeredAt + timeoutMs * TOOL_LIMITS.maxProgressFactor
  const now = yield* Clock.currentTimeMillis
  yield* armTimeout(session, entry, Math.max(0, Math.min(timeoutMs, ceiling - now)))
})

/** What claims the tools: the subscriber's connection, and the page's token (minted when it gave none). */
export interface Claimer {
  readonly connection?: number | undefined
  readonly claimant?: string | undefined
}

/**
 * The claim moves to the newest claimer at once; the pending call is offered again, naming it, which is how the
 * previous tab learns it lost the claim (its SDK aborts the handler). When the holder's subscription ends, the claim
 * goes back to the newest one still open (the call offered to it again), or, with none, the owner grace runs.
 */
const claim = (session: Session, claimer: Claimer) => {
  const { claims, answerer, ownerTimer, queue } = session.tools
  const mine: Claim = {
    connection: claimer.connection,
    claimant: claimer.claimant ?? randomBytes(12).toString("base64url")
  }
  const hold = (holder: Claim) =>
    Effect.gen(function* () {
      yield* Ref.set(answerer, holder)
      const head = queue[0]
      if (head?.offeredAt !== undefined) yield* offer(session, head)
    })
  return Effect.acquireRelease(
    Effect.gen(function* () {
      claims.push(mine)
      yield* FiberHandle.clear(ownerTimer)
      yield* hold(mine)
    }),
    () =>
      Effect.gen(function* () {
        const wasHolder = claims.at(-1) === mine
        claims.splice(claims.indexOf(mine), 1)
        if (!wasHolder) return
        const previous = claims.at(-1)
        if (previous !== undefined) yield* hold(previous)
        else if (queue.length > 0) yield* armOwnerTimer(session)
      })
  )
}

const cancelAll = Effect.fnUntraced(function* (
  session: Session,
  code: Extract<CancelCode, "TOOL_CANCELLED" | "SESSION_ENDED">
) {
  const details = { sessionId: session.sessionId }
  for (const entry of [...session.tools.queue].reverse()) {
    yield* finish(session, entry, cancelled(entry, code, details))
  }
})

export class ToolRouter extends Context.Service<
  ToolRouter,
  {
    /** A session's tools, in the caller's scope; fails `TOOLS_MANIFEST_INVALID` with the pointer of the bad keyword. */
    readonly open: (
      skills: Skills | undefined,
      workspace: string
    ) => Effect.Effect<SessionTools, PedelecError, Scope.Scope>
    readonly list: (session: Session) => ReadonlyArray<ToolSummary>
    readonly spec: (session: Session, name: string) => Effect.Effect<ToolSpec, PedelecError>
    /** The agent's call (`tag`: its own name for it, see waitsOnUser); interrupting it (the caller left) cancels it. */
    readonly call: (
      session: Session,
      name: string,
      args: Schema.Json,
      tag?: string
    ) => Effect.Effect<CliOutput, PedelecError>
    /** Completes when the agent's call tagged `tag` waits on the user (`pedelec-cli mcp` tells its client so). */
    readonly waitsOnUser: (session: Session, tag: string) => Effect.Effect<void>
    /** From the claim's connection only (else `TOOL_NOT_CLAIMED`); false for a call no longer waiting. */
    readonly submit: (
      session: Session,
      toolCallId: ToolCallId,
      outcome: ToolOutcome,
      connection?: number
    ) => Effect.Effect<boolean, PedelecError>
    /** Ignored unless it comes from the claim's connection, or while the call waits on the user. */
    readonly progress: (session: Session, toolCallId: ToolCallId, connection?: number) => Effect.Effect<void>
    /** The call waits on a person: its timeout pauses until it ends (ceiling 30 min). Claim's connection only. */
    readonly awaitingUser: (session: Session, toolCallId: ToolCallId, connection?: number) => Effect.Effect<void>
    /** The claim moves to this page for as long as the scope lives (or until a newer claim); a pending call follows. */
    readonly claim: (session: Session, claimer?: Claimer) => Effect.Effect<void, never, Scope.Scope>
    /** Every queued call ends with this code (cancel, end), the newest first. */
    readonly cancelAll: (
      session: Session,
      code: Extract<CancelCode, "TOOL_CANCELLED" | "SESSION_ENDED">
    ) => Effect.Effect<void>
  }
>()("pedelec/core/ToolRouter") {
  static readonly layer = Layer.effect(
    ToolRouter,
    Effect.gen(function* () {
      // Only these: the layer's own context (its Scope above all) must not leak into a session's effects.
      const context = Context.pick(
        SessionEvents,
        CoreConfig,
        ArgsValidation
      )(yield* Effect.context<SessionEvents | CoreConfig | ArgsValidation>())
      const provided = providing(context)
      return ToolRouter.of({
        open: Effect.fn("ToolRouter.open")(open),
        list: (session) => [...session.tools.catalog.values()].map(summaryOf),
        spec: (session, name) => Effect.map(toolOf(session, name), (tool) => tool.spec),
        call: Effect.fn("ToolRouter.call")((session, name, args, tag) => provided(call(session, name, args, tag))),
        waitsOnUser: (session, tag) => waitsOnUser(session, tag),
        submit: Effect.fn("ToolRouter.submit")((session, id, outcome, connection) =>
          provided(submit(session, id, outcome, connection))
        ),
        progress: Effect.fn("ToolRouter.progress")((session, id, connection) =>
          provided(progress(session, id, connection))
        ),
        awaitingUser: Effect.fn("ToolRouter.awaitingUser")((session, id, connection) =>
          provided(awaitingUser(session, id, connection))
        ),
        claim: (session, claimer = {}) => provided(claim(session, claimer)),
        cancelAll: Effect.fn("ToolRouter.cancelAll")((session, code) => provided(cancelAll(session, code)))
      })
    })
  ).pipe(Layer.provide(ArgsValidation.layer))
}
