/**
 * ToolRouter — routes each agent call to the page: arguments checked, queued FIFO per session (bound 16), offered one
 * at a time as a `tool_call` event (again to a page that claims the tools anew), answered by `submit` (idempotent by
 * id), stopped by timeout, cancellation, the caller leaving or the page leaving. Compiling manifests and shaping
 * the agent's line are ToolCatalog's; the status machine and turns are Sessions' (it hears when a call is pending).
 */
import type { SessionId, ToolCallId, TurnId } from "@pedelec/contracts/Ids"
import type { ToolSpec, ToolSummary } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { type Skills, TOOL_LIMITS, type ToolOutcome } from "@pedelec/contracts/Tool"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { mintToolCallId } from "./Mint.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { agentLine, compileTools, jsonBytes, summaryOf, type Tool, writeSpecFiles } from "./ToolCatalog.ts"

/** How long a pending call waits for a page to claim the tools again before the agent hears `TOOL_OWNER_GONE`. */
export const OWNER_GRACE_MS = 10_000

/** What the router needs from the session that owns it. */
export interface ToolHost {
  readonly workspace: string
  readonly currentTurn: Effect.Effect<TurnId | undefined>
  /** A call is with the page (true) or none is (false): the status machine and the stall timer follow this. */
  readonly onPendingChange: (pending: boolean) => Effect.Effect<void>
}

interface Call {
  readonly toolCallId: ToolCallId
  readonly turnId: TurnId
  readonly tool: Tool
  readonly args: Schema.Json
  readonly reply: Deferred.Deferred<ToolOutcome, PedelecError>
  offeredAt: number | undefined
  timer: Fiber.Fiber<void> | undefined
}

interface SessionTools {
  readonly sessionId: SessionId
  readonly host: ToolHost
  readonly tools: ReadonlyMap<string, Tool>
  /** FIFO; the head is the call the page has (or will get). */
  readonly queue: Array<Call>
  owners: number
  ownerTimer: Fiber.Fiber<void> | undefined
}

const fail = (code: Parameters<typeof PedelecError.fromCode>[0], details: Record<string, Schema.Json>) =>
  Effect.fail(PedelecError.fromCode(code, "core", { details }))

export class ToolRouter extends Context.Service<
  ToolRouter,
  {
    /** Takes a session's tools; fails `TOOLS_MANIFEST_INVALID` with the pointer of the bad keyword. */
    readonly register: (
      sessionId: SessionId,
      skills: Skills | undefined,
      host: ToolHost
    ) => Effect.Effect<void, PedelecError>
    readonly list: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<ToolSummary>, PedelecError>
    readonly spec: (sessionId: SessionId, name: string) => Effect.Effect<ToolSpec, PedelecError>
    /** The agent's call; interrupting it (the caller left) cancels it. */
    readonly call: (sessionId: SessionId, name: string, args: Schema.Json) => Effect.Effect<CliOutput, PedelecError>
    readonly submit: (sessionId: SessionId, toolCallId: ToolCallId, outcome: ToolOutcome) => Effect.Effect<boolean>
    readonly progress: (sessionId: SessionId, toolCallId: ToolCallId) => Effect.Effect<void>
    /** A page claims the tools for as long as the scope lives; a pending call is offered to it again. */
    readonly claim: (sessionId: SessionId) => Effect.Effect<void, PedelecError, Scope.Scope>
    /** Every queued call ends with this code (cancel, end). */
    readonly cancelAll: (sessionId: SessionId, code: "TOOL_CANCELLED" | "SESSION_ENDED") => Effect.Effect<void>
    readonly unregister: (sessionId: SessionId) => Effect.Effect<void>
  }
>()("pedelec/core/ToolRouter") {
  static readonly layer = Layer.effect(
    ToolRouter,
    Effect.gen(function* () {
      const events = yield* SessionEvents
      const scope = yield* Effect.scope
      const sessions = new Map<SessionId, SessionTools>()

      const sessionOf = (sessionId: SessionId) =>
        Effect.suspend(() => {
          const found = sessions.get(sessionId)
          return found ? Effect.succeed(found) : fail("SESSION_NOT_FOUND", { sessionId })
        })

      const register = Effect.fn("ToolRouter.register")(function* (
        sessionId: SessionId,
        skills: Skills | undefined,
        host: ToolHost
      ) {
        const compiled = compileTools(skills)
        if (Result.isFailure(compiled)) return yield* Effect.fail(compiled.failure)
        yield* writeSpecFiles(host.workspace, compiled.success)
        sessions.set(sessionId, {
          sessionId,
          host,
          tools: compiled.success,
          queue: [],
          owners: 0,
          ownerTimer: undefined
        })
      })

      const toolOf = (state: SessionTools, name: string) => {
        const tool = state.tools.get(name)
        return tool ? Effect.succeed(tool) : fail("TOOL_NOT_FOUND", { tool: name })
      }

      const list = Effect.fn("ToolRouter.list")(function* (sessionId: SessionId) {
        return [...(yield* sessionOf(sessionId)).tools.values()].map(summaryOf)
      })

      const spec = Effect.fn("ToolRouter.spec")(function* (sessionId: SessionId, name: string) {
        return (yield* toolOf(yield* sessionOf(sessionId), name)).spec
      })

      const stopTimer = (call: Call) =>
        Effect.suspend(() => {
          const timer = call.timer
          call.timer = undefined
          return timer ? Fiber.interrupt(timer) : Effect.void
        })

      const startTimer = (state: SessionTools, call: Call, delayMs: number) =>
        Effect.gen(function* () {
          yield* stopTimer(call)
          const timeoutMs = call.tool.spec.timeoutMs
          const expire = Effect.suspend(() => {
            // This fiber is the timer: finish must not interrupt it (stopTimer) before it has answered anyone.
            call.timer = undefined
            return finish(state, call, {
              kind: "cancelled",
              code: "TOOL_TIMEOUT",
              error: PedelecError.fromCode("TOOL_TIMEOUT", "core", {
                details: { tool: call.tool.spec.name, timeoutMs }
              })
            })
          })
          call.timer = yield* Effect.sleep(delayMs).pipe(Effect.andThen(expire), Effect.forkIn(scope))
        })

      /**
       * Gives the head of the queue to the page: the status, the event, the timer. The status comes first so that a
       * handler, which runs when the event arrives, already sees `waiting_tool_result`.
       */
      const offer = (sessionId: SessionId, state: SessionTools, call: Call) =>
        Effect.gen(function* () {
          const firstOffer = call.offeredAt === undefined
          call.offeredAt ??= Date.now()
          if (firstOffer) yield* state.host.onPendingChange(true)
          yield* events.publish(sessionId, {
            type: "tool_call",
            turnId: call.turnId,
            toolCallId: call.toolCallId,
            tool: call.tool.spec.name,
            args: call.args,
            timeoutMs: call.tool.spec.timeoutMs
          })
          if (firstOffer) yield* startTimer(state, call, call.tool.spec.timeoutMs)
        }).pipe(Effect.orDie)

      type Ending =
        | { readonly kind: "answered"; readonly outcome: ToolOutcome }
        | {
            readonly kind: "cancelled"
            readonly code: "TOOL_TIMEOUT" | "TOOL_CANCELLED" | "TOOL_OWNER_GONE" | "SESSION_ENDED"
            readonly error: PedelecError
          }

      /** Ends one call exactly once: records it, answers the agent, and offers the next call. */
      const finish = (state: SessionTools, call: Call, ending: Ending): Effect.Effect<void> =>
        Effect.gen(function* () {
          const index = state.queue.indexOf(call)
          if (index === -1) return
          state.queue.splice(index, 1)
          yield* stopTimer(call)
          const { sessionId } = state
          const wasOffered = call.offeredAt !== undefined
          if (wasOffered) {
            const common = { turnId: call.turnId, toolCallId: call.toolCallId }
            yield* (
              ending.kind === "answered"
                ? events.publish(sessionId, {
                    type: "tool_result",
                    ...common,
                    tool: call.tool.spec.name,
                    outcome: ending.outcome
                  })
                : events.publish(sessionId, { type: "tool_call_cancelled", ...common, reason: ending.code })
            ).pipe(Effect.ignore)
          }
          if (ending.kind === "answered") yield* Deferred.succeed(call.reply, ending.outcome)
          else yield* Deferred.fail(call.reply, ending.error)
          const next = state.queue[0]
          if (next && next.offeredAt === undefined) yield* offer(sessionId, state, next)
          else if (wasOffered && state.queue.length === 0) yield* state.host.onPendingChange(false)
        })

      const call = Effect.fn("ToolRouter.call")(function* (sessionId: SessionId, name: string, args: Schema.Json) {
        const state = yield* sessionOf(sessionId)
        const tool = yield* toolOf(state, name)
        const checked = tool.validator.validate(args)
        if (Result.isFailure(checked)) {
          const [first] = checked.failure
          const issues = checked.failure.slice(0, 8).map((issue) => ({ path: issue.path, reason: issue.reason }))
          return yield* fail("TOOL_ARGS_INVALID", {
            tool: name,
            path: first?.path ?? "",
            reason: first?.reason ?? "",
            issues
          })
        }
        const turnId = yield* state.host.currentTurn
        if (turnId === undefined) {
          return yield* fail("TOOL_CANCELLED", { tool: name, reason: "no turn is running in this session" })
        }
        if (state.queue.length >= TOOL_LIMITS.queueBound) {
          return yield* fail("TOOL_QUEUE_FULL", { tool: name, limit: TOOL_LIMITS.queueBound })
        }
        const entry: Call = {
          toolCallId: mintToolCallId(),
          turnId,
          tool,
          args,
          reply: yield* Deferred.make<ToolOutcome, PedelecError>(),
          offeredAt: undefined,
          timer: undefined
        }
        state.queue.push(entry)
        if (state.queue.length === 1) yield* offer(sessionId, state, entry)
        if (state.owners === 0) yield* armOwnerTimer(state)
        const outcome = yield* Deferred.await(entry.reply).pipe(
          Effect.onInterrupt(() =>
            finish(state, entry, {
              kind: "cancelled",
              code: "TOOL_CANCELLED",
              error: PedelecError.fromCode("TOOL_CANCELLED", "core", { details: { tool: name } })
            })
          )
        )
        return yield* agentLine(state.host.workspace, entry.toolCallId, outcome)
      })

      const submit = Effect.fn("ToolRouter.submit")(function* (
        sessionId: SessionId,
        toolCallId: ToolCallId,
        outcome: ToolOutcome
      ) {
        const state = sessions.get(sessionId)
        const entry = state?.queue.find((c) => c.toolCallId === toolCallId && c.offeredAt !== undefined)
        if (!state || !entry) return false
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
        yield* finish(state, entry, { kind: "answered", outcome: checked })
        return true
      })

      const progress = Effect.fn("ToolRouter.progress")(function* (sessionId: SessionId, toolCallId: ToolCallId) {
        const state = sessions.get(sessionId)
        const entry = state?.queue.find((c) => c.toolCallId === toolCallId && c.offeredAt !== undefined)
        if (!state || !entry || entry.offeredAt === undefined) return
        const timeoutMs = entry.tool.spec.timeoutMs
        // Progress resets the timeout, but never past 10 timeouts from the offer.
        const ceiling = entry.offeredAt + timeoutMs * TOOL_LIMITS.maxProgressFactor
        yield* startTimer(state, entry, Math.max(0, Math.min(timeoutMs, ceiling - Date.now())))
      })

      const cancelOwnerTimer = (state: SessionTools) =>
        Effect.suspend(() => {
          const timer = state.ownerTimer
          state.ownerTimer = undefined
          return timer ? Fiber.interrupt(timer) : Effect.void
        })

      const armOwnerTimer = (state: SessionTools) =>
        Effect.gen(function* () {
          if (state.ownerTimer) return
          const expire = Effect.gen(function* () {
            state.ownerTimer = undefined
            for (const entry of [...state.queue]) {
              const error = PedelecError.fromCode("TOOL_OWNER_GONE", "core", {
                details: { tool: entry.tool.spec.name }
              })
              yield* finish(state, entry, { kind: "cancelled", code: "TOOL_OWNER_GONE", error })
            }
          })
          state.ownerTimer = yield* Effect.sleep(OWNER_GRACE_MS).pipe(Effect.andThen(expire), Effect.forkIn(scope))
        })

      const claim = Effect.fn("ToolRouter.claim")(function* (sessionId: SessionId) {
        const state = yield* sessionOf(sessionId)
        yield* Effect.acquireRelease(
          Effect.gen(function* () {
            state.owners++
            yield* cancelOwnerTimer(state)
            const head = state.queue[0]
            if (head?.offeredAt !== undefined) yield* offer(sessionId, state, head)
          }),
          () =>
            Effect.suspend(() => {
              state.owners--
              return state.owners === 0 && state.queue.length > 0 ? armOwnerTimer(state) : Effect.void
            })
        )
      })

      const cancelAll = Effect.fn("ToolRouter.cancelAll")(function* (
        sessionId: SessionId,
        code: "TOOL_CANCELLED" | "SESSION_ENDED"
      ) {
        const state = sessions.get(sessionId)
        if (!state) return
        for (const entry of [...state.queue].reverse()) {
          const error = PedelecError.fromCode(code, "core", { details: { tool: entry.tool.spec.name, sessionId } })
          yield* finish(state, entry, { kind: "cancelled", code, error })
        }
      })

      const unregister = Effect.fn("ToolRouter.unregister")(function* (sessionId: SessionId) {
        yield* cancelAll(sessionId, "SESSION_ENDED")
        const state = sessions.get(sessionId)
        if (state) yield* cancelOwnerTimer(state)
        sessions.delete(sessionId)
      })

      return ToolRouter.of({ register, list, spec, call, submit, progress, claim, cancelAll, unregister })
    })
  )
}
