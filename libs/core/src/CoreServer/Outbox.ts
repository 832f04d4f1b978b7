/**
 * CoreServer/Outbox — one connection's outgoing lines: those Core's fibers hand it in one pass of the event loop go
 * out in one socket write, at the end of that pass. A page tool's answer and the events after it were three writes
 * to the native host (and three reads there, three wake-ups); on 2 vCPUs a write that wakes its reader cost Core
 * 0.1–0.3 ms of CPU each, a third of Core's CPU per MCP call (tools/bench chain, strace and --cpu-prof). Each caller
 * still waits until its line is written and the socket has drained, so a client that does not read holds Core's
 * streams back as before. It does not encode (Ndjson) nor decide what is sent (HelloGate, effect/rpc).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Socket from "effect/socket/Socket"

export type Write = (line: string | Uint8Array) => Effect.Effect<void>

interface Batch {
  readonly lines: Array<string | Uint8Array>
  readonly written: Deferred.Deferred<void>
}

/**
 * A `write` for `writer`: lines written while a batch is open join it; the batch is written when the current
 * JavaScript task and its microtasks are done (every fiber the scheduler ran in this pass has added its line), and
 * one write at a time (the next batch waits for the socket to drain).
 */
export const makeOutbox = Effect.fnUntraced(function* (writer: Socket.Writer) {
  const run = Effect.runForkWith(yield* Effect.context<never>())
  let open: Batch | undefined
  let previous: Deferred.Deferred<void> | undefined
  const flush = (batch: Batch) => {
    open = undefined
    const before = previous
    previous = batch.written
    // writeAll corks the socket around the lines: one writev, no copy of a large line.
    const lines = writer.writeAll(batch.lines as [string | Uint8Array, ...Array<string | Uint8Array>])
    run(
      (before === undefined ? lines : Effect.andThen(Deferred.await(before), lines)).pipe(
        Effect.ignore,
        Effect.ensuring(Deferred.done(batch.written, Exit.void))
      )
    )
  }
  const write: Write = (line) =>
    Effect.suspend(() => {
      let batch = open
      if (batch === undefined) {
        batch = { lines: [], written: Deferred.makeUnsafe<void>() }
        open = batch
        const opened = batch
        queueMicrotask(() => flush(opened))
      }
      batch.lines.push(line)
      return Deferred.await(batch.written)
    })
  return write
})
