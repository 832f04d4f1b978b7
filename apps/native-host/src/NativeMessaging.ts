/**
 * NativeMessaging — the extension's port as the host sees it: whole frames read from stdin (one longer than Core's
 * IPC line cap reported, not buffered; a length Chrome never sends reported as a broken stream) and a writer that puts
 * one logical message at a time on stdout, chunked to Chrome's 1 MiB frame limit; the frames of every message sent in
 * one turn of the event loop leave in one write. Stdout carries frames and nothing else. It does not interpret
 * messages (Relay does) nor decide the framing (Framing).
 */
import type { Readable, Writable } from "node:stream"
import { NodeStream } from "@effect/platform-node"
import type { HostToExtension } from "@pedelec/contracts/link/HostLink"
import { PedelecError, type PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
    /** Writes messages in order, as `send` each; the first over the cap fails, after those before it are written. */
    readonly sendAll: (messages: ReadonlyArray<HostToExtension>) => Effect.Effect<void, MessageTooLarge>
  }
>()("pedelec/native-host/NativePort") {
  static readonly layerWith = (input: Readable, output: Writable) =>
    Layer.effect(
      NativePort,
      Effect.gen(function* () {
        let nextMessage = 0
        let broken = false
        // A closed stdout (Chrome went away) is an 'error' event; unhandled it would crash the host mid-cleanup.
        output.on("error", (error) => {
          if (!broken) log(`stdout closed: ${error.message}`)
          broken = true
        })

        // Every write wakes Chrome's reader (and a pipe's write is a system call here): the frames queued until the
        // current callbacks are done (a tool call's answer and the events Core sent with it) leave as one writev.
        let corked = false
        const uncork = () => {
          corked = false
          output.uncork()
        }
        // A message's frames are queued on stdout in one synchronous step, so the chunk frames of two messages never
        // interleave (no lock needed); the send completes when the last has been written.
        const writeAll = (frames: ReadonlyArray<Buffer>) =>
          Effect.callback<void>((resume) => {
            if (broken || frames.length === 0) return resume(Effect.void)
            if (!corked) {
              corked = true
              output.cork()
              queueMicrotask(uncork)
            }
            const last = frames.length - 1
            for (let index = 0; index < last; index++) output.write(frames[index]!)
            output.write(frames[last]!, () => resume(Effect.void))
          })

        // No span and no lock: it runs for every message to the extension, five per page tool call.
        const sendAll = (messages: ReadonlyArray<HostToExtension>) =>
          Effect.suspend(() => {
            const frames: Array<Buffer> = []
            for (const message of messages) {
              const messageId = `m${(nextMessage++).toString(36)}`
              const framed = frameMessage(JSON.stringify(message), messageId)
              if (framed._tag === "TooLarge") {
                return Effect.andThen(writeAll(frames), Effect.fail(messageTooLarge(framed.bytes, framed.limit)))
              }
              frames.push(...framed.frames)
            }
            return writeAll(frames)
          })
        const send = (message: HostToExtension) => sendAll([message])

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

        return NativePort.of({ inbound, send, sendAll })
      })
    )

  /** The process's own stdio, as Chrome connects it. */
  static readonly layer = Layer.suspend(() => NativePort.layerWith(process.stdin, process.stdout))
}
