/**
 * TurnProcess — the session process of a CLI run as one process per turn (a CLI that keeps one warm process uses
 * WarmProcess): spawn the turn through AgentProcess, decode its lines, end the turn's stream at its first completion
 * or error, let the CLI exit in the background (the turn is over for Core), and say why a turn ended without
 * either. `interrupt` and `processes` cover every running turn; closing the session's scope stops them, so no
 * process outlives its session. Adapters own the command line, the decoder and what an unfinished exit means for
 * their CLI; Core owns stall timeouts and what the events mean. How a turn ends (its terminal events, an unfinished
 * exit explained, the decoding report) is shared with WarmProcess.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type AgentExit, type AgentHandle, AgentProcess, type AgentSpawnOptions } from "./AgentProcess.ts"
import type { OutputLine } from "./OutputLines.ts"
import type { SessionProcess, TurnInput } from "./Provider.ts"

/** What one turn's decoding could not use: unreadable lines (`skipped`) and well-formed unknown events (`ignored`). */
export interface LineCounts {
  skipped: number
  ignored: number
}

/** One turn's decoder: fresh per turn, so a CLI's per-turn state (open tool calls, a pending error) stays in it. */
export interface TurnDecoder {
  readonly decode: (line: OutputLine) => ReadonlyArray<ProviderEvent>
  readonly counts: LineCounts
}

/** The bookkeeping every CLI's decoder shares: lines it could not read (`skip`) and events it did not know. */
export abstract class CountingDecoder implements TurnDecoder {
  readonly counts: LineCounts = { skipped: 0, ignored: 0 }

  abstract decode(line: OutputLine): ReadonlyArray<ProviderEvent>

  protected skip(): ReadonlyArray<ProviderEvent> {
    this.counts.skipped++
    return []
  }

  /** A line of a known type, decoded with its schema: mapped when it fits, skipped when it does not. */
  protected mapped<A>(decoded: Option.Option<A>, f: (a: A) => ReadonlyArray<ProviderEvent>) {
    return Option.isNone(decoded) ? this.skip() : f(decoded.value)
  }
}

/** What every session process needs to know about a CLI to end a turn: its name, decoder and exit explanations. */
export interface TurnEndingSpec<D extends TurnDecoder> {
  readonly provider: ProviderCode
  /** How messages name the CLI ("claude", "the agent"). */
  readonly label: string
  readonly decoder: () => D
  /** Events that say better than stderr why a failed exit happened (an error line cut short, an auth exit code). */
  readonly explainExit?: (exit: AgentExit, stderr: string, decoder: D) => ReadonlyArray<ProviderEvent> | undefined
  /** Logged once per turn beside the unused-line counts (warnings a CLI printed). */
  readonly report?: (decoder: D) => Effect.Effect<void>
}

export interface TurnProcessSpec<D extends TurnDecoder> extends TurnEndingSpec<D> {
  readonly spawn: (turn: TurnInput) => Omit<AgentSpawnOptions, "provider">
  /** After the turn's last event, how long the CLI may take to exit on its own before the scope kills it. */
  readonly exitWaitMs: number
  /** Whether exit 0 without a completion event still finished the turn (the CLI has no final event of its own). */
  readonly cleanExitCompletes: boolean
}

/** How much of stderr a failure's message quotes; `details.stderr` keeps the whole tail. */
const STDERR_IN_MESSAGE = 2_000

export const isTerminal = (event: ProviderEvent) => event.type === "completed" || event.type === "error"

/**
 * Why the CLI exited (not cleanly) before its turn's completion or error: the adapter's own events when it can say
 * better, otherwise PROVIDER_FAILED quoting stderr.
 */
export const unfinishedTurn = <D extends TurnDecoder>(
  spec: TurnEndingSpec<D>,
  exit: AgentExit,
  stderr: string,
  decoder: D
): ReadonlyArray<ProviderEvent> | PedelecError => {
  const explained = spec.explainExit?.(exit, stderr, decoder)
  if (explained !== undefined) return explained
  const shown = stderr === "" ? "it printed nothing on stderr" : `stderr: ${stderr.slice(-STDERR_IN_MESSAGE)}`
  return PedelecError.fromCode("PROVIDER_FAILED", "provider", {
    details: {
      provider: spec.provider,
      reason: `${spec.label} ended without finishing the turn (${exit.description}; ${shown})`,
      exitCode: exit.code ?? null,
      stderr,
      skippedLines: decoder.counts.skipped
    }
  })
}

/** The turn's decoding report: the adapter's own, then the lines it could not use (when there were any). */
export const reportTurn = <D extends TurnDecoder>(spec: TurnEndingSpec<D>, decoder: D) =>
  Effect.suspend(() =>
    Effect.andThen(
      spec.report?.(decoder) ?? Effect.void,
      decoder.counts.skipped + decoder.counts.ignored === 0
        ? Effect.void
        : Effect.logDebug(`${spec.label} output lines not used`, { ...decoder.counts })
    )
  )

export const makeTurnProcess = <D extends TurnDecoder>(
  spec: TurnProcessSpec<D>
): Effect.Effect<SessionProcess, never, AgentProcess | Scope.Scope> =>
  Effect.gen(function* () {
    const agent = yield* AgentProcess
    const sessionScope = yield* Effect.scope
    const active = new Map<AgentHandle, { interrupted: boolean }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...active.keys()], (handle) => handle.terminate, { concurrency: "unbounded", discard: true })
    )

    const unfinished = (handle: AgentHandle, decoder: D) =>
      Effect.gen(function* () {
        const exit = yield* handle.exit
        // An interrupted turn ends quietly: Core asked for it and reports the cancellation itself.
        if (active.get(handle)?.interrupted === true) return Stream.empty
        if (exit.code === 0)
          return spec.cleanExitCompletes ? Stream.make<[ProviderEvent]>({ type: "completed" }) : Stream.empty
        const outcome = unfinishedTurn(spec, exit, yield* handle.stderrTail, decoder)
        return outcome instanceof PedelecError ? Stream.fail(outcome) : Stream.fromIterable(outcome)
      })

    const send = (turn: TurnInput): Stream.Stream<ProviderEvent, PedelecError> =>
      Stream.unwrap(
        Effect.gen(function* () {
          // The process lives in the session's scope, not the stream's: a finished turn must not wait for its exit.
          const processScope = yield* Scope.fork(sessionScope)
          const handle = yield* agent.spawn({ provider: spec.provider, ...spec.spawn(turn) }).pipe(
            Scope.provide(processScope),
            Effect.onError(() => Scope.close(processScope, Exit.void))
          )
          active.set(handle, { interrupted: false })
          const decoder = spec.decoder()
          let terminal = false
          const closeProcess = Scope.close(processScope, Exit.void).pipe(
            Effect.ensuring(Effect.sync(() => active.delete(handle)))
          )
          // After its last event the CLI gets exitWaitMs to exit on its own, in the background: Core publishes the
          // turn's end at once (codex takes ~0.8 s to wind down). A turn stopped early is killed before it returns.
          yield* Effect.addFinalizer(() =>
            terminal
              ? Effect.timeoutOption(handle.exit, spec.exitWaitMs).pipe(
                  Effect.andThen(closeProcess),
                  Effect.forkIn(sessionScope),
                  Effect.asVoid
                )
              : closeProcess
          )
          // The lines of one read decode in one step: a stream and a tap per line cost Core ~13 µs a line, most
          // of its time on a burst of 100-B deltas (issue 15). A read with nothing to say emits nothing.
          // Nothing after the terminal event is decoded (a decoder counts what it skips for the turn's report).
          const decodeRead = (lines: ReadonlyArray<OutputLine>): readonly [ReadonlyArray<ProviderEvent>] => {
            const decoded: Array<ProviderEvent> = []
            for (const line of lines) {
              if (terminal) break
              for (const event of decoder.decode(line)) {
                decoded.push(event)
                terminal ||= isTerminal(event)
              }
            }
            return [decoded]
          }
          const events = handle.lines.pipe(
            Stream.mapArray(decodeRead),
            Stream.filter((decoded): decoded is Arr.NonEmptyReadonlyArray<ProviderEvent> => decoded.length > 0),
            Stream.flattenArray,
            Stream.takeUntil(isTerminal)
          )
          const ending = Stream.unwrap(
            Effect.suspend(() => (terminal ? Effect.succeed(Stream.empty) : unfinished(handle, decoder)))
          )
          return Stream.concat(events, ending).pipe(Stream.ensuring(reportTurn(spec, decoder)))
        })
      )

    const interrupt = Effect.suspend(() =>
      Effect.forEach(
        [...active.entries()],
        ([handle, flags]) =>
          Effect.andThen(
            Effect.sync(() => (flags.interrupted = true)),
            handle.interrupt
          ),
        { discard: true }
      )
    )

    const processes = Effect.suspend(() =>
      Effect.map(
        Effect.forEach([...active.keys()], (handle) => handle.processes),
        (lists) => lists.flat()
      )
    )

    return { send, interrupt, processes } satisfies SessionProcess
  })
