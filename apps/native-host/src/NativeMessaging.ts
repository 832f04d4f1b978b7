/**
 * NativeMessaging — the extension's port as the host sees it: whole frames read from stdin (one longer than Core's
 * IPC line cap reported, not buffered; a length Chrome never sends reported as a broken stream) and a writer that puts one logical message at a time on stdout, chunked to Chrome's 1 MiB frame limit.
 * Stdout carries frames and nothing else. It does not interpret messages (Relay does) nor decide the framing (Framing).
 */
import type { Readable, Writable } from "node:stream"
import { NodeStream } from "@effect/platform-node"
import type { HostToExtension } from "@pedelec/contracts/link/HostLink"
import { PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { FrameDecoder, frameMessage, type Inbound } from "./Framing.ts"
import { MAX_INBOUND_FRAME } from "./InboundBounds.ts"
import { log } from "./Log.ts"

export type MessageTooLarge = PedelecErrorOf<"MESSAGE_TOO_LARGE">

export const messageTooLarge = (bytes: number, limit: number): MessageTooLarge =>
  PedelecError.fromCode("MESSAGE_TOO_LARGE", "native-host", { details: { bytes, limit } })

export class NativePort extends Context.Service<
  NativePort,
  {
    /** Every inbound frame in order; ends when stdin does (Chrome closed the port) or after a Desync. */
    readonly inbound: Stream.Stream<Inbound>
    /** Writes one logical message, whole; MESSAGE_TOO_LARGE, with nothing written, above the 16 MiB cap. */
    readonly send: (message: HostToExtension) => Effect.Effect<void, MessageTooLarge>
  }
>()("pedelec/native-host/NativePort") {
  static readonly layerWith = (input: Readable, output: Writable) =>
    Layer.effect(
      NativePort,
      Effect.gen(function* () {
        // One writer at a time: the chunk frames of two messages must never interleave.
        const writing = yield* Semaphore.make(1)
        let nextMessage = 0
        let broken = false
        // A closed stdout (Chrome went away) is an 'error' event; unhandled it would crash the host mid-cleanup.
        output.on("error", (error) => {
          if (!broken) log(`stdout closed: ${error.message}`)
          broken = true
        })

        const write = (frame: Buffer) =>
          Effect.callback<void>((resume) => {
            if (broken) return resume(Effect.void)
            output.write(frame, () => resume(Effect.void))
          })

        const send = Effect.fn("NativePort.send")(function* (message: HostToExtension) {
          const messageId = `m${(nextMessage++).toString(36)}`
          const framed = frameMessage(JSON.stringify(message), messageId)
          if (framed._tag === "TooLarge") return yield* Effect.fail(messageTooLarge(framed.bytes, framed.limit))
          yield* writing.withPermits(1)(Effect.forEach(framed.frames, write, { discard: true }))
        })

        const inbound = Stream.suspend(() => {
          const decoder = new FrameDecoder(MAX_INBOUND_FRAME)
          return NodeStream.fromReadable<Uint8Array, Error>({
            evaluate: () => input,
            onError: (error) => (error instanceof Error ? error : new Error(String(error))),
            closeOnDone: false
          }).pipe(
            Stream.map((chunk) => decoder.push(chunk)),
            Stream.flattenIterable,
            Stream.takeUntil((inbound) => inbound._tag === "Desync"),
            Stream.onExit(() =>
              Effect.sync(() => {
                if (!decoder.idle) log("stdin ended inside a frame; the partial frame is dropped")
              })
            ),
            Stream.catchCause((cause) => {
              log(`stdin failed: ${String(cause)}`)
              return Stream.empty
            })
          )
        })

        return NativePort.of({ inbound, send })
      })
    )

  /** The process's own stdio, as Chrome connects it. */
  static readonly layer = Layer.suspend(() => NativePort.layerWith(process.stdin, process.stdout))
}
