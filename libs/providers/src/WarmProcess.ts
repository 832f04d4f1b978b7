/**
 * WarmProcess — the session process of a CLI that takes many turns over one process (claude, codex app-server):
 * started by the first turn and kept, each turn written to its stdin as lines, its output read by one reader and
 * decoded by the turn's own decoder until the turn's completion or error. A new process, resuming the provider
 * session the turn names, replaces it when it died (the turn it was running fails with PROVIDER_FAILED and its
 * stderr), when a turn names another provider session, and after it sat idle. A turn stopped before its end (Core's
 * cancel or stall) is interrupted the CLI's way, then the process and every descendant are killed: nothing is left
 * running. A CLI speaking a request/response protocol (codex's JSON-RPC) is served too: a new process's first turn
 * may write a handshake before it, and the turn's decoder may owe the CLI lines after one of its lines (a request that
 * waited for an answer, a reply to the CLI's own request). Adapters own the command line, what their CLI's stdin takes
 * and the decoder; TurnProcess is the process-per-turn counterpart, and how a turn ends is shared with it.
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
  /** One turn as lines of stdin (without newlines); `fresh` when the process is new and has had no turn yet. */
  readonly message: (turn: TurnInput, process: WarmTurn<D>) => string | ReadonlyArray<string>
  /** The line that asks the running turn to stop; without one (or when it gives none), SIGINT goes to the group. */
  readonly interruptMessage?: (decoder: D) => string | undefined
  /** The lines the running turn owes the CLI after the line just decoded, written at once; none by default. */
  readonly replies?: (decoder: D) => ReadonlyArray<string>
  /** How long a process without a turn is kept for the next one. */
  readonly idleTimeoutMs: number
  /** After a stopped turn's interrupt, how long the CLI gets to end the turn before the process is killed. */
  readonly interruptGraceMs: number
}

/** Where a turn's lines go: a process that takes its first turn, and the decoder that will hear the answers. */
export interface WarmTurn<D> {
  readonly fresh: boolean
  readonly decoder: D
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

/** One session's warm processes: the one taking turns, every one not yet closed, and the idle timer. */
interface Session<D extends TurnDecoder> {
  readonly spec: WarmProcessSpec<D>
  readonly agent: AgentProcess["Service"]
  readonly scope: Scope.Scope
  /** One turn at a time; a process is started, replaced or closed only while holding it. */
  readonly lock: Semaphore.Semaphore
  readonly open: Set<Warm<D>>
  current: Warm<D> | undefined
  idle: Fiber.Fiber<void> | undefined
}

const encoder = new TextEncoder()
const lineOf = (text: string) => encoder.encode(`${text}\n`)
const linesOf = (lines: string | ReadonlyArray<string>) =>
  typeof lines === "string" ? [lineOf(lines)] : lines.map(lineOf)

const endTurn = <D>(turn: Turn<D>, last: Effect.Effect<unknown>) =>
  Effect.andThen(Deferred.succeed(turn.ended, undefined), last)

const endWith = <D>(turn: Turn<D>, events: ReadonlyArray<ProviderEvent>) =>
  endTurn(turn, Queue.offerAll(turn.events, events).pipe(Effect.andThen(Queue.end(turn.events))))

/**
 * Decodes one read's lines for the running turn and hands its events on at once: one queue offer and one reply write
 * per read, not per line (2,000 lines in one write: 14.5–15.2 ms a turn at the consumer, against 16–18.8 line by line).
 * What the CLI prints between turns, or after the turn's last event, answers nothing and is dropped.
 */
const routeRead = Effect.fnUntraced(function* <D extends TurnDecoder>(
  spec: WarmProcessSpec<D>,
  warm: Warm<D>,
  lines: ReadonlyArray<OutputLine>
) {
  const turn = warm.turn
  if (turn === undefined) return
  const events: Array<ProviderEvent> = []
  const replies: Array<string> = []
  let last: ProviderEvent | undefined
  for (const line of lines) {
    for (const event of turn.decoder.decode(line)) {
      if (event.type === "session") warm.providerSessionId = event.providerSessionId
      if (isTerminal(event)) {
        last = event
        break
      }
      events.push(event)
    }
    replies.push(...(spec.replies?.(turn.decoder) ?? []))
    if (last !== undefined) break
  }
  yield* Queue.offerAll(warm.input, linesOf(replies))
  if (last === undefined) {
    yield* Queue.offerAll(turn.events, events)
    return
  }
  warm.turn = undefined
  // An interrupted turn ends quietly: whoever interrupted it reports the cancellation.
  yield* endWith(turn, turn.interrupted && last.type === "error" ? events : [...events, last])
})

/** The output is over, so the CLI died: whatever it left is killed, and its running turn fails with the reason. */
const outputEnded = Effect.fnUntraced(function* <D extends TurnDecoder>(
  spec: WarmProcessSpec<D>,
  warm: Warm<D>,
  lines: Exit.Exit<void, PedelecError>
) {
  warm.gone = true
  yield* warm.handle.terminate
  const turn = warm.turn
  if (turn === undefined) return
  warm.turn = undefined
  if (Exit.isFailure(lines)) return yield* endTurn(turn, Queue.failCause(turn.events, lines.cause))
  if (turn.interrupted) return yield* endTurn(turn, Queue.end(turn.events))
  const outcome = unfinishedTurn(spec, yield* warm.handle.exit, yield* warm.handle.stderrTail, turn.decoder)
  return yield* outcome instanceof PedelecError
    ? endTurn(turn, Queue.fail(turn.events, outcome))
    : endWith(turn, outcome)
}, Effect.uninterruptible)

/** A process for `turn`, which it holds before its first line can be read (a CLI may die before reading). */
const start = Effect.fnUntraced(function* <D extends TurnDecoder>(
  session: Session<D>,
  providerSessionId: string | undefined,
  turn: Turn<D>
) {
  const { spec } = session
  const scope = yield* Scope.make()
  const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
  const handle = yield* session.agent
    .spawn({ provider: spec.provider, ...spec.spawn(providerSessionId), stdin: Stream.fromQueue(input) })
    .pipe(
      Scope.provide(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
  const warm: Warm<D> = { handle, scope, input, providerSessionId, turn, gone: false }
  session.open.add(warm)
  yield* handle.lines.pipe(
    Stream.runForEachArray((lines) => routeRead(spec, warm, lines)),
    Effect.exit,
    Effect.flatMap((exit) => outputEnded(spec, warm, exit)),
    Effect.forkIn(scope)
  )
  return warm
})

/** Stdin closes so a CLI between turns exits on its own; then the kill sequence for whatever is left. */
const close = Effect.fnUntraced(function* <D extends TurnDecoder>(session: Session<D>, warm: Warm<D>) {
  if (session.current === warm) session.current = undefined
  warm.gone = true
  const turn = warm.turn
  warm.turn = undefined
  if (turn !== undefined) {
    const stopped = PedelecError.fromCode("PROVIDER_FAILED", "provider", {
      details: {
        provider: session.spec.provider,
        reason: `${session.spec.label} was stopped before it finished the turn`
      }
    })
    yield* endTurn(turn, turn.interrupted ? Queue.end(turn.events) : Queue.fail(turn.events, stopped))
  }
  yield* Queue.end(warm.input)
  if (turn === undefined) yield* Effect.timeoutOption(warm.handle.exit, CLOSE_WAIT_MS)
  yield* Scope.close(warm.scope, Exit.void)
  session.open.delete(warm)
}, Effect.uninterruptible)

const interruptTurn = <D extends TurnDecoder>(spec: WarmProcessSpec<D>, warm: Warm<D>, turn: Turn<D>) =>
  Effect.suspend(() => {
    turn.interrupted = true
    const message = spec.interruptMessage?.(turn.decoder)
    return message === undefined ? warm.handle.interrupt : Queue.offer(warm.input, lineOf(message))
  })

const closeWhenIdle = <D extends TurnDecoder>(session: Session<D>, warm: Warm<D>) =>
  Effect.sleep(session.spec.idleTimeoutMs).pipe(
    Effect.andThen(
      session.lock.withPermits(1)(Effect.suspend(() => (warm.turn === undefined ? close(session, warm) : Effect.void)))
    ),
    Effect.forkIn(session.scope)
  )

const afterTurn = Effect.fnUntraced(function* <D extends TurnDecoder>(
  session: Session<D>,
  warm: Warm<D>,
  turn: Turn<D>
) {
  if (!(yield* Deferred.isDone(turn.ended))) {
    // Stopped mid-turn. The CLI's own interrupt lets it record the interruption in the conversation the next
    // process resumes; the process goes anyway, since a stopped turn must leave no process behind.
    yield* interruptTurn(session.spec, warm, turn)
    yield* Effect.timeoutOption(Deferred.await(turn.ended), session.spec.interruptGraceMs)
    return yield* close(session, warm)
  }
  if (warm.gone) return yield* close(session, warm)
  session.idle = yield* closeWhenIdle(session, warm)
})

/** Whether the process holds the conversation the turn continues; a new conversation never reuses one. */
const reusable = <D>(warm: Warm<D>, turn: TurnInput) =>
  !warm.gone && warm.providerSessionId !== undefined && warm.providerSessionId === turn.providerSessionId

/** The turn's events, from the process that holds its conversation (or a new one); holds the lock until it ends. */
const send = Effect.fnUntraced(function* <D extends TurnDecoder>(session: Session<D>, turn: TurnInput) {
  yield* Semaphore.takeScoped(session.lock, 1)
  if (session.idle !== undefined) yield* Fiber.interrupt(session.idle)
  session.idle = undefined
  const running: Turn<D> = {
    decoder: session.spec.decoder(),
    events: yield* Queue.unbounded<ProviderEvent, PedelecError | Cause.Done>(),
    ended: yield* Deferred.make<void>(),
    interrupted: false
  }
  let warm = session.current
  const fresh = warm === undefined || !reusable(warm, turn)
  // Checked and taken in one step: a death noticed later still finds the turn and fails it.
  if (warm !== undefined && !fresh) warm.turn = running
  else {
    if (warm !== undefined) yield* close(session, warm)
    warm = session.current = yield* start(session, turn.providerSessionId, running)
  }
  const taken = warm
  yield* Effect.addFinalizer(() =>
    Effect.andThen(afterTurn(session, taken, running), reportTurn(session.spec, running.decoder))
  )
  yield* Queue.offerAll(taken.input, linesOf(session.spec.message(turn, { fresh, decoder: running.decoder })))
  return Stream.fromQueue(running.events)
})

export const makeWarmProcess = <D extends TurnDecoder>(
  spec: WarmProcessSpec<D>
): Effect.Effect<SessionProcess, never, AgentProcess | Scope.Scope> =>
  Effect.gen(function* () {
    const session: Session<D> = {
      spec,
      agent: yield* AgentProcess,
      scope: yield* Effect.scope,
      lock: yield* Semaphore.make(1),
      open: new Set(),
      current: undefined,
      idle: undefined
    }
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...session.open], (warm) => close(session, warm), { discard: true })
    )
    const interrupt = Effect.suspend(() => {
      const { current } = session
      const turn = current?.turn
      return current === undefined || turn === undefined ? Effect.void : interruptTurn(spec, current, turn)
    })
    const processes = Effect.suspend(() =>
      Effect.map(
        Effect.forEach([...session.open], (warm) => warm.handle.processes),
        (lists) => lists.flat()
      )
    )
    return {
      send: (turn: TurnInput) => Stream.unwrap(send(session, turn)),
      interrupt,
      processes
    } satisfies SessionProcess
  })
