// NativePort's writer on real streams: the messages sent in one turn of the event loop leave stdout in one write (each
// write wakes Chrome's reader), in order and framed; a message over the cap fails after the ones before it went out.

import { PassThrough, Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import type { RequestId } from "@pedelec/contracts/Ids"
import { HOST_LIMITS, type HostToExtension } from "@pedelec/contracts/link/HostLink"
import * as Effect from "effect/Effect"
import { FrameDecoder } from "../src/Framing.ts"
import { NativePort } from "../src/NativeMessaging.ts"

/** A stdout that keeps what each underlying write carried, as the frames in it. */
const recordingOutput = () => {
  const writes: Array<ReadonlyArray<string>> = []
  const decoder = new FrameDecoder(HOST_LIMITS.maxFrameToHost)
  const framesOf = (buffers: ReadonlyArray<Buffer>) =>
    buffers.flatMap((buffer) => decoder.push(buffer)).map((inbound) => (inbound._tag === "Frame" ? inbound.text : ""))
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(framesOf([chunk]))
      callback()
    },
    writev(chunks, callback) {
      writes.push(framesOf(chunks.map(({ chunk }) => chunk as Buffer)))
      callback()
    }
  })
  return { output, writes }
}

const response = (id: string, result: unknown = {}): HostToExtension => ({
  kind: "response",
  id: id as RequestId,
  ok: true,
  result
})
const ids = (frames: ReadonlyArray<string>) => frames.map((text) => (JSON.parse(text) as { id: string }).id)

const withPort = <A, E>(output: Writable, use: (port: NativePort["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(NativePort, use).pipe(Effect.provide(NativePort.layerWith(new PassThrough(), output)))

describe("NativePort writer", () => {
  it.effect("sends what one turn queued in one write, in order, and a later turn in another", () =>
    Effect.gen(function* () {
      const { output, writes } = recordingOutput()
      yield* withPort(output, (port) =>
        Effect.gen(function* () {
          yield* Effect.all([port.sendAll([response("a"), response("b")]), port.send(response("c"))], {
            concurrency: "unbounded"
          })
          yield* port.send(response("d"))
        })
      )
      assert.deepStrictEqual(writes.map(ids), [["a", "b", "c"], ["d"]])
    })
  )

  it.effect("fails a message over the cap with MESSAGE_TOO_LARGE after writing the ones before it", () =>
    Effect.gen(function* () {
      const { output, writes } = recordingOutput()
      const huge = response("big", "x".repeat(HOST_LIMITS.maxLogicalMessage + 1))
      const error = yield* withPort(output, (port) => port.sendAll([response("a"), huge, response("b")])).pipe(
        Effect.flip
      )
      assert.strictEqual(error.code, "MESSAGE_TOO_LARGE")
      assert.deepStrictEqual(writes.map(ids), [["a"]])
    })
  )
})
