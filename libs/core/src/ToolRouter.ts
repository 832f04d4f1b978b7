/**
 * ToolRouter — routes each agent call to the page: arguments checked, queued FIFO per session (bound 16), offered one
 * at a time as a `tool_call` event (again to a page that claims the tools anew), answered by `submit` (idempotent by
 * id), stopped by timeout, cancellation, the caller leaving or the page leaving. The queue is the session's own
 * (`SessionTools`, in the session's scope; ToolRouter/Queue offers and ends calls); whether a call is pending is
 * written to the session (Session), which the status and the stall clock follow. Compiling manifests and shaping the
 * agent's line are ToolCatalog's.
 */
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
import type { Session } from "./Session.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { agentLine, compileTools, jsonBytes, summaryOf, type Tool, writeSpecFiles } from "./ToolCatalog.ts"
import {
  armTimeout,
  type Call,
  type CancelCode,
  cancelled,
  finish,
  offer,
  type SessionTools
} from "./ToolRouter/Queue.ts"

export type { SessionTools } from "./ToolRouter/Queue.ts"

const fail = (code: Parameters<typeof PedelecError.fromCode>[0], details: Record<string, Schema.Json>) =>
  Effect.fail(PedelecError.fromCode(code, "core", { details }))

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

const open = Effect.fnUntraced(function* (skills: Skills | undefined, workspace: string) {
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
const enqueue = (session: Session, call: Omit<Call, "reply" | "timer" | "offeredAt">) =>
  Effect.scoped(
    Effect.gen(function* () {
      const entry: Call = {
        ...call,
        reply: yield* Deferred.make<ToolOutcome, PedelecError>(),
        timer: yield* FiberHandle.make<void>(),
        offeredAt: undefined
      }
      const queue = session.tools.queue
      queue.push(entry)
      if (queue.length === 1) yield* offer(session, entry)
      if ((yield* Ref.get(session.tools.owners)) === 0) yield* armOwnerTimer(session)
      return yield* Deferred.await(entry.reply).pipe(
        Effect.onInterrupt(() => finish(session, entry, cancelled(entry, "TOOL_CANCELLED")))
      )
    })
  )

const call = Effect.fnUntraced(function* (session: Session, name: string, args: Schema.Json) {
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
  const outcome = yield* enqueue(session, { toolCallId, turnId: turn.turnId, tool, args })
  return yield* agentLine(session.workspace, toolCallId, outcome)
})

const submit = Effect.fnUntraced(function* (session: Session, toolCallId: ToolCallId, outcome: ToolOutcome) {
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

const progress = Effect.fnUntraced(function* (session: Session, toolCallId: ToolCallId) {
  const entry = offeredCall(session, toolCallId)
  if (entry?.offeredAt === undefined) return
  const timeoutMs = entry.tool.spec.timeoutMs
  // Progress resets the timeout, but never past 10 timeouts from the offer.
  const ceiling = entry.offeredAt + timeoutMs * TOOL_LIMITS.maxProgressFactor
  const now = yield* Clock.currentTimeMillis
  yield* armTimeout(session, entry, Math.max(0, Math.min(timeoutMs, ceiling - now)))
})

const claim = (session: Session) => {
  const { owners, ownerTimer, queue } = session.tools
  return Effect.acquireRelease(
    Effect.gen(function* () {
      yield* Ref.update(owners, (n) => n + 1)
      yield* FiberHandle.clear(ownerTimer)
      const head = queue[0]
      if (head?.offeredAt !== undefined) yield* offer(session, head)
    }),
    () =>
      Effect.gen(function* () {
        const left = yield* Ref.updateAndGet(owners, (n) => n - 1)
        if (left === 0 && queue.length > 0) yield* armOwnerTimer(session)
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
      // Only these two: the layer's own context (its Scope above all) must not leak into a session's effects.
      const context = Context.pick(SessionEvents, CoreConfig)(yield* Effect.context<SessionEvents | CoreConfig>())
      const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, context)
      return ToolRouter.of({
        open: Effect.fn("ToolRouter.open")(open),
        list: (session) => [...session.tools.catalog.values()].map(summaryOf),
        spec: (session, name) => Effect.map(toolOf(session, name), (tool) => tool.spec),
        call: Effect.fn("ToolRouter.call")((session, name, args) => provided(call(session, name, args))),
        submit: Effect.fn("ToolRouter.submit")((session, id, outcome) => provided(submit(session, id, outcome))),
        progress: Effect.fn("ToolRouter.progress")((session, id) => provided(progress(session, id))),
        claim: (session) => provided(claim(session)),
        cancelAll: Effect.fn("ToolRouter.cancelAll")((session, code) => provided(cancelAll(session, code)))
      })
    })
  )
}
