/**
 * WarmProcess — the session process of a CLI that takes many turns over one process (claude's stream-json input):
 * started by the first turn and kept, each turn written to its stdin as one line, its output read by one reader and
 * decoded by the turn's own decoder until the turn's completion or error. A new process, resuming the provider
 * session the turn names, replaces it when it died (the turn it was running fails with PROVIDER_FAILED and its
 * stderr), when a turn names another provider session, and after it sat idle. A turn stopped before its end (Core's
 * cancel or stall) is interrupted the CLI's way, then the process and every descendant are killed: nothing is left
 * running. Adapters own the command line, what their CLI's stdin takes and the decoder; TurnProcess is the
 * process-per-turn counterpart, and how a turn ends is shared with it.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { type AgentHandle, AgentProcess, type AgentSpawnOptions } from "./AgentProcess.ts"
import type { OutputLine } from "./OutputLines.ts"
import type { SessionProcess, TurnInput } from "./Provider.ts"
import { isTerminal, reportTurn, type TurnDecoder, type TurnEndingSpec, unfinishedTurn } from "./TurnProcess.ts"

export interface WarmProcessSpec<D extends TurnDecoder> extends TurnEndingSpec<D> {
  /** The process that continues `providerSessionId` (undefined: a new conversation); its stdin stays open. */
  readonly spawn: (providerSessionId: string | undefined) => Omit<AgentSpawnOptions, "provider" | "stdin">
  /** One turn as one line of stdin (without the newline). */
  readonly message: (turn: TurnInput) => string
  /** The line that asks the running turn to stop; without one, SIGINT goes to the process group. */
  readonly interruptMessage?: () => string
  /** How long a process without a turn is kept for the next one. */
  readonly idleTimeoutMs: number
  /** After a stopped turn's interrupt, how long the CLI gets to end the turn before the process is killed. */
  readonly interruptGraceMs: number
}

/** After stdin closes between turns, how long the CLI gets to exit on its own before the kill sequence runs. */
const CLOSE_WAIT_MS = 1_000

interface Turn<D> {
  readonly decoder: D
  readonly events: Queue.Queue<ProviderEvent, PedelecError | Cause.Done>
  /** Done as soon as the CLI is through with the turn (its last event, or its death), before the consumer hears. */
  readonly ended: Deferred.Deferred<void>
  /** Asked to stop: the CLI's report of the interruption is not passed on as an error. */
  interrupted: boolean
}

interface Warm<D> {
  readonly handle: AgentHandle
  readonly scope: Scope.Closeable
  readonly input: Queue.Queue<Uint8Array, Cause.Done>
  /** The conversation it holds: the one it resumed, then the one its CLI reported. */
  providerSessionId: string | undefined
  turn: Turn<D> | undefined
  /** Its output ended or it is being closed: it takes no more turns. */
  gone: boolean
}

const encoder = new TextEncoder()
const lineOf = (text: string) => encoder.encode(`${text}\n`)

export const makeWarmProcess = <D extends TurnDecoder>(
  spec: WarmProcessSpec<D>
): Effect.Effect<SessionProcess, never, AgentProcess | Scope.Scope> =>
  Effect.gen(function* () {
    const agent = yield* AgentProcess
    const sessionScope = yield* Effect.scope
    /** One turn at a time; a process is started, replaced or closed only while holding it. */
    const lock = yield* Semaphore.make(1)
    const open = new Set<Warm<D>>()
    let current: Warm<D> | undefined
    let idle: Fiber.Fiber<void> | undefined

    const endTurn = (turn: Turn<D>, last: Effect.Effect<unknown>) =>
      Effect.andThen(Deferred.succeed(turn.ended, undefined), last)

    /** Decodes a line for the running turn; what the CLI prints between turns answers nothing and is dropped. */
    const route = (warm: Warm<D>, line: OutputLine) =>
      Effect.gen(function* () {
        const turn = warm.turn
        if (turn === undefined) return
        for (const event of turn.decoder.decode(line)) {
          if (event.type === "session") warm.providerSessionId = event.providerSessionId
          if (!isTerminal(event)) {
            yield* Queue.offer(turn.events, event)
            continue
          }
          warm.turn = undefined
          // An interrupted turn ends quietly: whoever interrupted it reports the cancellation.
          const last = turn.interrupted && event.type === "error" ? [] : [event]
          yield* endTurn(turn, Queue.offerAll(turn.events, last).pipe(Effect.andThen(Queue.end(turn.events))))
          break
        }
      })

    /** The output is over, so the CLI died: whatever it left is killed, and its running turn fails with the reason. */
    const outputEnded = (warm: Warm<D>, lines: Exit.Exit<void, PedelecError>) =>
      Effect.gen(function* () {
        warm.gone = true
        yield* warm.handle.terminate
        const turn = warm.turn
        if (turn === undefined) return
        warm.turn = undefined
        if (Exit.isFailure(lines)) return yield* endTurn(turn, Queue.failCause(turn.events, lines.cause))
        if (turn.interrupted) return yield* endTurn(turn, Queue.end(turn.events))
        const outcome = unfinishedTurn(spec, yield* warm.handle.exit, yield* warm.handle.stderrTail, turn.decoder)
        return yield* endTurn(
          turn,
          outcome instanceof PedelecError
            ? Queue.fail(turn.events, outcome)
            : Queue.offerAll(turn.events, outcome).pipe(Effect.andThen(Queue.end(turn.events)))
        )
      }).pipe(Effect.uninterruptible)

    /** A process for `turn`, which it holds before its first line can be read (a CLI may die before reading). */
    const start = (providerSessionId: string | undefined, turn: Turn<D>) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
        const handle = yield* agent
          .spawn({ provider: spec.provider, ...spec.spawn(providerSessionId), stdin: Stream.fromQueue(input) })
          .pipe(
            Scope.provide(scope),
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
        const warm: Warm<D> = { handle, scope, input, providerSessionId, turn, gone: false }
        open.add(warm)
        yield* handle.lines.pipe(
          Stream.runForEach((line) => route(warm, line)),
          Effect.exit,
          Effect.flatMap((exit) => outputEnded(warm, exit)),
          Effect.forkIn(scope)
        )
        return warm
      })

    /** Stdin closes so a CLI between turns exits on its own; then the kill sequence for whatever is left. */
    const close = (warm: Warm<D>) =>
      Effect.gen(function* () {
        if (current === warm) current = undefined
        warm.gone = true
        const turn = warm.turn
        warm.turn = undefined
        if (turn !== undefined) {
          const stopped = PedelecError.fromCode("PROVIDER_FAILED", "provider", {
            details: { provider: spec.provider, reason: `${spec.label} was stopped before it finished the turn` }
          })
          yield* endTurn(turn, turn.interrupted ? Queue.end(turn.events) : Queue.fail(turn.events, stopped))
        }
        yield* Queue.end(warm.input)
        if (turn === undefined) yield* Effect.timeoutOption(warm.handle.exit, CLOSE_WAIT_MS)
        yield* Scope.close(warm.scope, Exit.void)
        open.delete(warm)
      }).pipe(Effect.uninterruptible)
    yield* Effect.addFinalizer(() => Effect.forEach([...open], close, { discard: true }))

    const interruptTurn = (warm: Warm<D>, turn: Turn<D>) =>
      Effect.andThen(
        Effect.sync(() => (turn.interrupted = true)),
        spec.interruptMessage === undefined
          ? warm.handle.interrupt
          : Queue.offer(warm.input, lineOf(spec.interruptMessage()))
      )

    const closeWhenIdle = (warm: Warm<D>) =>
      Effect.sleep(spec.idleTimeoutMs).pipe(
        Effect.andThen(
          lock.withPermits(1)(Effect.suspend(() => (warm.turn === undefined ? close(warm) : Effect.void)))
        ),
        Effect.forkIn(sessionScope)
      )

    const afterTurn = (warm: Warm<D>, turn: Turn<D>) =>
      Effect.gen(function* () {
        if (!(yield* Deferred.isDone(turn.ended))) {
          // Stopped mid-turn. The CLI's own interrupt lets it record the interruption in the conversation the next
          // process resumes; the process goes anyway, since a stopped turn must leave no process behind.
          yield* interruptTurn(warm, turn)
          yield* Effect.timeoutOption(Deferred.await(turn.ended), spec.interruptGraceMs)
          return yield* close(warm)
        }
        if (warm.gone) return yield* close(warm)
        idle = yield* closeWhenIdle(warm)
      })

    /** Whether the process holds the conversation the turn continues; a new conversation never reuses one. */
    const reusable = (warm: Warm<D>, turn: TurnInput) =>
      !warm.gone && warm.providerSessionId !== undefined && warm.providerSessionId === turn.providerSessionId

    const send = (turn: TurnInput): Stream.Stream<ProviderEvent, PedelecError> =>
      Stream.unwrap(
        Effect.gen(function* () {
          yield* Semaphore.takeScoped(lock, 1)
          if (idle !== undefined) yield* Fiber.interrupt(idle)
          idle = undefined
          const running: Turn<D> = {
            decoder: spec.decoder(),
            events: yield* Queue.unbounded<ProviderEvent, PedelecError | Cause.Done>(),
            ended: yield* Deferred.make<void>(),
            interrupted: false
          }
          let warm = current
          // Checked and taken in one step: a death noticed later still finds the turn and fails it.
          if (warm !== undefined && reusable(warm, turn)) warm.turn = running
          else {
            if (warm !== undefined) yield* close(warm)
            warm = current = yield* start(turn.providerSessionId, running)
          }
          yield* Effect.addFinalizer(() => Effect.andThen(afterTurn(warm, running), reportTurn(spec, running.decoder)))
          yield* Queue.offer(warm.input, lineOf(spec.message(turn)))
          return Stream.fromQueue(running.events)
        })
      )

    const interrupt = Effect.suspend(() => {
      const turn = current?.turn
      return current === undefined || turn === undefined ? Effect.void : interruptTurn(current, turn)
    })

    const processes = Effect.suspend(() =>
      Effect.map(
        Effect.forEach([...open], (warm) => warm.handle.processes),
        (lists) => lists.flat()
      )
    )

    return { send, interrupt, processes } satisfies SessionProcess
  })
