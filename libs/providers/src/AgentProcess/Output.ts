/**
 * AgentProcess/Output — what an agent CLI prints, as AgentProcess hands it out: stdout as strict lines that end
 * once stdout closes, or once it has been quiet a while after the CLI exited (a descendant may hold the pipe), and
 * the tail of stderr. It does not start or stop processes (AgentProcess) nor interpret lines (adapters).
 */
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { LineTooLong, type OutputLine, Utf8LineSplitter } from "../OutputLines.ts"

/** After the CLI exits, how long a still-open stdout may stay silent before the lines end anyway. */
const STDOUT_LINGER_MS = 1_000
const STDERR_TAIL_BYTES = 8 * 1024
const STDERR_WAIT_MS = 500

/** Keeps the last `limit` bytes of a byte stream without ever holding more than ~2× that. */
export const tailKeeper = (limit: number) => {
  let chunks: Array<Uint8Array> = []
  let size = 0
  return {
    push: (chunk: Uint8Array) => {
      chunks.push(chunk)
      size += chunk.length
      if (size > 2 * limit) {
        const joined = Buffer.concat(chunks)
        chunks = [joined.subarray(joined.length - limit)]
        size = limit
      }
    },
    text: () => {
      const joined = Buffer.concat(chunks)
      return new TextDecoder().decode(joined.subarray(Math.max(0, joined.length - limit))).trim()
    }
  }
}

/**
 * Reads stderr in the scope from now on; the effect returned answers its last 8 KiB once it has closed, or after a
 * short wait when a descendant holds it open.
 */
export const stderrTail = Effect.fnUntraced(function* (
  stderr: Stream.Stream<Uint8Array, unknown>
): Effect.fn.Return<Effect.Effect<string>, never, Scope.Scope> {
  const closed = yield* Deferred.make<void>()
  const tail = tailKeeper(STDERR_TAIL_BYTES)
  yield* stderr.pipe(
    Stream.runForEach((chunk) => Effect.sync(() => tail.push(chunk))),
    Effect.ignore,
    Effect.ensuring(Deferred.succeed(closed, undefined)),
    Effect.forkScoped
  )
  return Deferred.await(closed).pipe(
    Effect.timeoutOption(STDERR_WAIT_MS),
    Effect.map(() => tail.text())
  )
})

/**
 * With none of the CLI's tree alive, nobody can still write to stdout: its end comes once the consumer has read
 * what is in the pipe, however long a burst takes it. This bound is only for a holder the tree scan never saw.
 */
const ORPHANED_PIPE_LINGER_MS = 30_000

/**
 * When stdout counts as abandoned: the CLI exited and nothing came for the linger since, counted from the exit. A
 * consumer behind on a burst reads nothing new meanwhile, so the short linger applies only while a descendant that
 * may hold the pipe is alive (under load, a 5,000-message turn lost 800–2,400 of its 10,003 events to it).
 */
const abandoned = Effect.fnUntraced(function* (
  exit: Effect.Effect<unknown>,
  treeAlive: Effect.Effect<boolean>,
  lastOutputAt: { ms: number }
) {
  yield* exit
  lastOutputAt.ms = Math.max(lastOutputAt.ms, yield* Clock.currentTimeMillis)
  while (true) {
    const linger = (yield* treeAlive) ? STDOUT_LINGER_MS : ORPHANED_PIPE_LINGER_MS
    const quiet = (yield* Clock.currentTimeMillis) - lastOutputAt.ms
    if (quiet >= linger) return
    yield* Effect.sleep(Math.min(STDOUT_LINGER_MS, linger - quiet))
  }
})

export interface LinesOptions {
  readonly provider: ProviderCode
  readonly limit: number
  /** The CLI's own exit: after it, a quiet stdout ends the lines. */
  readonly exit: Effect.Effect<unknown>
  /** Whether any process of the CLI's tree (the CLI or a descendant seen) is still alive. */
  readonly treeAlive: Effect.Effect<boolean>
}

/** stdout as strict lines: PROVIDER_FAILED when reading fails, PROVIDER_OUTPUT_INVALID for a line over the limit. */
export const outputLines = (
  stdout: Stream.Stream<Uint8Array, { readonly message: string }>,
  options: LinesOptions
): Stream.Stream<OutputLine, PedelecError> =>
  Stream.suspend(() => {
    const splitter = new Utf8LineSplitter(options.limit)
    const lastOutputAt = { ms: 0 }
    const split = (chunk: Uint8Array) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        lastOutputAt.ms = now
        const result = splitter.push(chunk)
        return result instanceof LineTooLong ? Effect.fail(tooLong(options)) : Effect.succeed(result)
      })
    return stdout.pipe(
      Stream.mapError((error) => readFailed(options.provider, error.message)),
      Stream.mapEffect(split),
      Stream.flattenIterable,
      Stream.concat(Stream.suspend(() => Stream.fromIterable(splitter.end()))),
      Stream.interruptWhen(abandoned(options.exit, options.treeAlive, lastOutputAt))
    )
  })

const readFailed = (provider: ProviderCode, message: string) =>
  PedelecError.fromCode("PROVIDER_FAILED", "provider", {
    details: { provider, reason: `reading its output failed: ${message}` }
  })

const tooLong = ({ provider, limit }: LinesOptions) =>
  PedelecError.fromCode("PROVIDER_OUTPUT_INVALID", "provider", {
    details: { provider, reason: `a line exceeded ${limit} bytes`, limit }
  })
