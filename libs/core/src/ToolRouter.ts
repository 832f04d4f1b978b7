/**
 * ToolRouter — routes each agent call to the page: arguments checked, queued FIFO per session (bound 16), offered one
 * at a time as a `tool_call` event (again to a page that claims the tools anew), answered by `submit` (idempotent by
 * id), stopped by timeout, cancellation, the caller leaving or the page leaving. The queue is the session's own
 * (`SessionTools`, in the session's scope); whether a call is pending is written to the session (Session), which the
 * status and the stall clock follow. Compiling manifests and shaping the agent's line are ToolCatalog's.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { ToolCallId, TurnId } from "@pedelec/contracts/Ids"
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
import { type Session, setToolPending } from "./Session.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { agentLine, compileTools, jsonBytes, summaryOf, type Tool, writeSpecFiles } from "./ToolCatalog.ts"

interface Call {
  readonly toolCallId: ToolCallId
  readonly turnId: TurnId
  readonly tool: Tool
  readonly args: Schema.Json
  readonly reply: Deferred.Deferred<ToolOutcome, PedelecError>
  /** The call's timeout; progress restarts it. Lives as long as the agent's call. */
  readonly timer: FiberHandle.FiberHandle<void>
  offeredAt: number | undefined
}

/** One session's tools and call queue. Mutated one event at a time, only by this module. */
export interface SessionTools {
  readonly catalog: ReadonlyMap<string, Tool>
  /** FIFO; the head is the call the page has (or will get). */
  readonly queue: Array<Call>
  readonly owners: Ref.Ref<number>
  /** Runs while calls wait and no page claims the tools: at the end of the grace they fail `TOOL_OWNER_GONE`. */
  readonly ownerTimer: FiberHandle.FiberHandle<void>
}

/** Why a call ended without an answer: the reasons a `tool_call_cancelled` event may carry. */
type CancelCode = Extract<SessionEvent, { type: "tool_call_cancelled" }>["reason"]

type Ending =
  | { readonly kind: "answered"; readonly outcome: ToolOutcome }
  | { readonly kind: "cancelled"; readonly code: CancelCode; readonly error: PedelecError }

const fail = (code: Parameters<typeof PedelecError.fromCode>[0], details: Record<string, Schema.Json>) =>
  Effect.fail(PedelecError.fromCode(code, "core", { details }))

const cancelled = (call: Call, code: CancelCode, details: Record<string, Schema.Json> = {}): Ending => ({
  kind: "cancelled",
  code,
  error: PedelecError.fromCode(code, "core", { details: { tool: call.tool.spec.name, ...details } })
})

/**
 * Gives the head of the queue to the page: the status, the event, the timer. The status comes first so that a
 * handler, which runs when the event arrives, already sees `waiting_tool_result`.
 */
const offer = Effect.fnUntraced(function* (session: Session, call: Call) {
  const firstOffer = call.offeredAt === undefined
  call.offeredAt ??= yield* Clock.currentTimeMillis
  if (firstOffer) yield* setToolPending(session, true)
  const events = yield* SessionEvents
  yield* events
    .publish(session.sessionId, {
      type: "tool_call",
      turnId: call.turnId,
      toolCallId: call.toolCallId,
      tool: call.tool.spec.name,
      args: call.args,
      timeoutMs: call.tool.spec.timeoutMs
    })
    .pipe(Effect.orDie)
  if (firstOffer) yield* armTimeout(session, call, call.tool.spec.timeoutMs)
})

const armTimeout = (session: Session, call: Call, delayMs: number) => {
  const timeoutMs = call.tool.spec.timeoutMs
  return FiberHandle.run(
    call.timer,
    Effect.sleep(delayMs).pipe(Effect.andThen(finish(session, call, cancelled(call, "TOOL_TIMEOUT", { timeoutMs }))))
  )
}

/** Ends one call exactly once: records it, answers the agent, and offers the next call. Never cut half way. */
const finish = (session: Session, call: Call, ending: Ending): Effect.Effect<void, never, SessionEvents> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const queue = session.tools.queue
      const index = queue.indexOf(call)
      if (index === -1) return
      queue.splice(index, 1)
      const wasOffered = call.offeredAt !== undefined
      if (wasOffered) yield* publishEnding(session, call, ending)
      if (ending.kind === "answered") yield* Deferred.succeed(call.reply, ending.outcome)
      else yield* Deferred.fail(call.reply, ending.error)
      const next = queue[0]
      if (next && next.offeredAt === undefined) yield* offer(session, next)
      else if (wasOffered && queue.length === 0) yield* setToolPending(session, false)
    })
  )

const publishEnding = Effect.fnUntraced(function* (session: Session, call: Call, ending: Ending) {
  const events = yield* SessionEvents
  const common = { turnId: call.turnId, toolCallId: call.toolCallId }
  yield* (
    ending.kind === "answered"
      ? events.publish(session.sessionId, {
          type: "tool_result",
          ...common,
          tool: call.tool.spec.name,
          outcome: ending.outcome
        })
      : events.publish(session.sessionId, { type: "tool_call_cancelled", ...common, reason: ending.code })
  ).pipe(Effect.ignore)
})

const toolOf = (session: Session, name: string) => {
  const tool = session.tools.catalog.get(name)
  return tool ? Effect.succeed(tool) : fail("TOOL_NOT_FOUND", { tool: name })
}

const checkArgs = (tool: Tool, args: Schema.Json) => {
  const checked = tool.validator.validate(args)
  if (Result.isSuccess(checked)) return Effect.void
  const [first] = checked.failure
  const issues = checked.failure.slice(0, 8).map((issue) => ({ path: issue.path, reason: issue.reason }))
  return fail("TOOL_ARGS_INVALID", {
    tool: tool.spec.name,
    path: first?.path ?? "",
    reason: first?.reason ?? "",
    issues
  })
}

/** The offered call `toolCallId` names, if it is still waiting for the page. */
const offeredCall = (session: Session, toolCallId: ToolCallId) =>
  session.tools.queue.find((c) => c.toolCallId === toolCallId && c.offeredAt !== undefined)

const expireOwnerless = (session: Session) =>
  Effect.forEach([...session.tools.queue], (call) => finish(session, call, cancelled(call, "TOOL_OWNER_GONE")), {
    discard: true
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
    /** The agent's call; interrupting it (the caller left) cancels it. */
    readonly call: (session: Session, name: string, args: Schema.Json) => Effect.Effect<CliOutput, PedelecError>
    readonly submit: (session: Session, toolCallId: ToolCallId, outcome: ToolOutcome) => Effect.Effect<boolean>
    readonly progress: (session: Session, toolCallId: ToolCallId) => Effect.Effect<void>
    /** A page claims the tools for as long as the scope lives; a pending call is offered to it again. */
    readonly claim: (session: Session) => Effect.Effect<void, never, Scope.Scope>
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
      const context = Context.pick(SessionEvents)(yield* Effect.context<SessionEvents>())
      const config = yield* CoreConfig
      const withContext = <A, E>(effect: Effect.Effect<A, E, SessionEvents>) => Effect.provide(effect, context)

      const open = Effect.fn("ToolRouter.open")(function* (skills: Skills | undefined, workspace: string) {
        const compiled = compileTools(skills)
        if (Result.isFailure(compiled)) return yield* Effect.fail(compiled.failure)
        yield* writeSpecFiles(workspace, compiled.success)
        return {
          catalog: compiled.success,
          queue: [],
          owners: yield* Ref.make(0),
          ownerTimer: yield* FiberHandle.make<void>()
        } satisfies SessionTools
      })

      const armOwnerTimer = (session: Session) =>
        FiberHandle.run(
          session.tools.ownerTimer,
          Effect.sleep(config.ownerGraceMs).pipe(Effect.andThen(expireOwnerless(session)), withContext),
          { onlyIfMissing: true }
        )

      const call = Effect.fn("ToolRouter.call")(function* (session: Session, name: string, args: Schema.Json) {
        const tool = yield* toolOf(session, name)
        yield* checkArgs(tool, args)
        const turn = yield* Ref.get(session.turn)
        if (turn === undefined) {
          return yield* fail("TOOL_CANCELLED", { tool: name, reason: "no turn is running in this session" })
        }
        const queue = session.tools.queue
        if (queue.length >= TOOL_LIMITS.queueBound) {
          return yield* fail("TOOL_QUEUE_FULL", { tool: name, limit: TOOL_LIMITS.queueBound })
        }
        const outcome = yield* Effect.scoped(
          Effect.gen(function* () {
            const entry: Call = {
              toolCallId: mintToolCallId(),
              turnId: turn.turnId,
              tool,
              args,
              reply: yield* Deferred.make<ToolOutcome, PedelecError>(),
              timer: yield* FiberHandle.make<void>(),
              offeredAt: undefined
            }
            queue.push(entry)
            if (queue.length === 1) yield* offer(session, entry)
            if ((yield* Ref.get(session.tools.owners)) === 0) yield* armOwnerTimer(session)
            const outcome = yield* Deferred.await(entry.reply).pipe(
              Effect.onInterrupt(() => finish(session, entry, cancelled(entry, "TOOL_CANCELLED")))
            )
            return { entry, outcome }
          })
        ).pipe(withContext)
        return yield* agentLine(session.workspace, outcome.entry.toolCallId, outcome.outcome)
      })

      const submit = Effect.fn("ToolRouter.submit")(function* (
        session: Session,
        toolCallId: ToolCallId,
        outcome: ToolOutcome
      ) {
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
        yield* finish(session, entry, { kind: "answered", outcome: checked }).pipe(withContext)
        return true
      })

      const progress = Effect.fn("ToolRouter.progress")(function* (session: Session, toolCallId: ToolCallId) {
        const entry = offeredCall(session, toolCallId)
        if (entry?.offeredAt === undefined) return
        const timeoutMs = entry.tool.spec.timeoutMs
        // Progress resets the timeout, but never past 10 timeouts from the offer.
        const ceiling = entry.offeredAt + timeoutMs * TOOL_LIMITS.maxProgressFactor
        const now = yield* Clock.currentTimeMillis
        yield* armTimeout(session, entry, Math.max(0, Math.min(timeoutMs, ceiling - now))).pipe(withContext)
      })

      const claim = Effect.fn("ToolRouter.claim")(function* (session: Session) {
        const { owners, ownerTimer, queue } = session.tools
        yield* Effect.acquireRelease(
          Effect.gen(function* () {
            yield* Ref.update(owners, (n) => n + 1)
            yield* FiberHandle.clear(ownerTimer)
            const head = queue[0]
            if (head?.offeredAt !== undefined) yield* offer(session, head).pipe(withContext)
          }),
          () =>
            Effect.gen(function* () {
              const left = yield* Ref.updateAndGet(owners, (n) => n - 1)
              if (left === 0 && queue.length > 0) yield* armOwnerTimer(session)
            })
        )
      })

      const cancelAll = Effect.fn("ToolRouter.cancelAll")(function* (
        session: Session,
        code: Extract<CancelCode, "TOOL_CANCELLED" | "SESSION_ENDED">
      ) {
        const details = { sessionId: session.sessionId }
        for (const entry of [...session.tools.queue].reverse()) {
          yield* finish(session, entry, cancelled(entry, code, details)).pipe(withContext)
        }
      })

      return ToolRouter.of({
        open,
        list: (session) => [...session.tools.catalog.values()].map(summaryOf),
        spec: (session, name) => Effect.map(toolOf(session, name), (tool) => tool.spec),
        call,
        submit,
        progress,
        claim,
        cancelAll
      })
    })
  )
}
