/**
 * CoreServer/Outbox — one connection's outgoing lines: those Core's fibers hand it in one pass of the event loop go
 * out in one socket write, at the end of that pass. A page tool's answer and the events after it were three writes
 * to the native host (three reads there, three wake-ups); on 2 vCPUs each write that woke its reader also let the
 * reader take Core's CPU there and then (strace and --cpu-prof of the MCP chain bench: a third of Core's samples sat
 * in socket writes). A writer goes on at once while the socket takes what it is given, and waits for the drain once
 * it does not (Node's own `write` → `drain` contract), so a client that does not read still holds Core's streams
 * back, one batch at a time. It does not encode (Ndjson) nor decide what is sent (HelloGate, effect/rpc).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Socket from "effect/socket/Socket"

type Line = string | Uint8Array

export interface Outbox {
  /** Hands a line over; waits only while an earlier batch waits for the socket to drain. */
  readonly write: (line: Line) => Effect.Effect<void>
  /** Hands a line over and waits until it has been written (a connection's last words before it closes). */
  readonly writeLast: (line: Line) => Effect.Effect<void>
}

interface Batch {
  readonly lines: Array<Line>
  readonly written: Deferred.Deferred<void>
}

export const makeOutbox = Effect.fnUntraced(function* (writer: Socket.Writer) {
  const run = Effect.runForkWith(yield* Effect.context<never>())
  let open: Batch | undefined
  /** The written signal of the batch the socket has not taken yet, if any: the next ones wait for it. */
  let draining: Deferred.Deferred<void> | undefined
  const flush = (batch: Batch) => {
    open = undefined
    const before = draining
    // writeAll corks the socket around the lines: one writev, no copy of a large line.
    const lines = writer.writeAll(batch.lines as [Line, ...Array<Line>])
    const fiber = run(
      (before === undefined ? lines : Effect.andThen(Deferred.await(before), lines)).pipe(
        Effect.ignore,
        Effect.ensuring(
          Effect.suspend(() => {
            if (draining === batch.written) draining = undefined
            return Deferred.done(batch.written, Exit.void)
          })
        )
      )
    )
    // Still running: the socket's buffer is full (or an earlier batch still drains).
    if (fiber.pollUnsafe() === undefined) draining = batch.written
  }
  const enqueue = (line: Line): Batch => {
    let batch = open
    if (batch === undefined) {
      const opened: Batch = { lines: [], written: Deferred.makeUnsafe<void>() }
      open = batch = opened
      queueMicrotask(() => flush(opened))
    }
    batch.lines.push(line)
    return batch
  }
  return {
    write: (line) =>
      Effect.suspend(() => {
        const batch = enqueue(line)
        return draining === undefined ? Effect.void : Deferred.await(batch.written)
      }),
    writeLast: (line) => Effect.suspend(() => Deferred.await(enqueue(line).written))
  } satisfies Outbox
})
