// Outbox: lines handed over in one pass of the event loop leave in one write, in order; each caller waits until its
// line was written; a batch made while the socket drains waits for the one before it (a fake Writer: what reaches a
// real socket, and its syscalls, the MCP chain bench and strace showed).
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
      const write = yield* makeOutbox(writer)
      yield* Effect.all([write("a\n"), write("b\n"), write("c\n")], { concurrency: "unbounded" })
      assert.deepStrictEqual(writes, [["a\n", "b\n", "c\n"]])
      yield* write("d\n")
      assert.deepStrictEqual(writes, [["a\n", "b\n", "c\n"], ["d\n"]])
    })
  )

  it.live("holds a caller until its line is written, and a later batch behind a draining one", () =>
    Effect.gen(function* () {
      const { writer, writes, gate } = recordingWriter()
      const write = yield* makeOutbox(writer)
      gate.drained = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(write("first\n"))
      yield* Effect.sleep(5)
      const second = yield* Effect.forkChild(write("second\n"))
      yield* Effect.sleep(5)
      // The first batch is written and waits for the drain; the second is not written until it came.
      assert.deepStrictEqual(writes, [["first\n"]])
      assert.isUndefined(first.pollUnsafe())
      assert.isUndefined(second.pollUnsafe())
      const drained = gate.drained
      gate.drained = undefined
      yield* Deferred.succeed(drained, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      assert.deepStrictEqual(writes, [["first\n"], ["second\n"]])
    })
  )
})
