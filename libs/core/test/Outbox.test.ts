// Outbox: lines handed over in one pass of the event loop leave in one write, in order; a writer goes on at once
// while the socket takes its lines and waits while it drains, and a batch made meanwhile waits for the one before it
// (a fake Writer: what reaches a real socket, and its syscalls, the MCP chain bench and strace showed).
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Socket from "effect/socket/Socket"
import { makeOutbox } from "../src/CoreServer/Outbox.ts"

/** A Writer that records each writeAll; a write waits on `drained` when it is set (a full socket). */
const recordingWriter = () => {
  const writes: Array<ReadonlyArray<string>> = []
  const gate: { drained: Deferred.Deferred<void> | undefined } = { drained: undefined }
  const writer: Socket.Writer = {
    write: (chunk) => Effect.sync(() => void writes.push([String(chunk)])),
    writeAll: (chunks) =>
      Effect.suspend(() => {
        writes.push(chunks.map(String))
        return gate.drained === undefined ? Effect.void : Deferred.await(gate.drained)
      })
  }
  return { writer, writes, gate }
}

describe("Outbox", () => {
  it.live("writes the lines of one pass together, in the order they were handed over", () =>
    Effect.gen(function* () {
      const { writer, writes } = recordingWriter()
      const { write, writeLast } = yield* makeOutbox(writer)
      yield* Effect.all([write("a\n"), write("b\n"), writeLast("c\n")], { concurrency: "unbounded" })
      assert.deepStrictEqual(writes, [["a\n", "b\n", "c\n"]])
      yield* writeLast("d\n")
      assert.deepStrictEqual(writes, [["a\n", "b\n", "c\n"], ["d\n"]])
    })
  )

  it.live("lets writers on while the socket takes the lines, holds them while it drains, in order", () =>
    Effect.gen(function* () {
      const { writer, writes, gate } = recordingWriter()
      const { write, writeLast } = yield* makeOutbox(writer)
      gate.drained = yield* Deferred.make<void>()
      // Nothing drains yet: the first writer goes on before its line is even written.
      yield* write("first\n")
      assert.deepStrictEqual(writes, [])
      yield* Effect.sleep(5)
      assert.deepStrictEqual(writes, [["first\n"]])
      // The socket did not take it all: the next writers wait, and their batch waits for the drain.
      const second = yield* Effect.forkChild(write("second\n"))
      const last = yield* Effect.forkChild(writeLast("last\n"))
      yield* Effect.sleep(5)
      assert.deepStrictEqual(writes, [["first\n"]])
      assert.isUndefined(second.pollUnsafe())
      assert.isUndefined(last.pollUnsafe())
      const drained = gate.drained
      gate.drained = undefined
      yield* Deferred.succeed(drained, undefined)
      yield* Fiber.join(second)
      yield* Fiber.join(last)
      assert.deepStrictEqual(writes, [["first\n"], ["second\n", "last\n"]])
      // Drained: writers go on at once again.
      yield* write("again\n")
      assert.deepStrictEqual(writes.length, 2)
    })
  )
})
