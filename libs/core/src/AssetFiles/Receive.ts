/**
 * AssetFiles/Receive — an upload's body streamed to a new file (0600, `wx`) with its size enforced as it arrives:
 * ASSET_TOO_LARGE the moment more than the ticket's bytes came, INVALID_INPUT when fewer did, and nothing left at
 * the temp name whatever happened (interruption included). Where the file goes and the checks before the rename
 * are AssetFiles'.
 */
import { createWriteStream } from "node:fs"
import { rm } from "node:fs/promises"
import type { Readable } from "node:stream"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import { internal } from "./Paths.ts"

const FILE_MODE = 0o600

const tooLarge = (limit: number) =>
  PedelecError.fromCode("ASSET_TOO_LARGE", "core", {
    details: { limit },
    message: `The upload sent more than the ${limit} bytes its ticket was issued for. Ask for a ticket with the file's exact size.`
  })

/**
 * Writes `body` to a new file; fails with ASSET_TOO_LARGE the moment more than `limit` bytes arrived. Settles only
 * once the file is closed, whatever happened, so the caller can remove it (interruption included).
 */
const receive = (body: Readable, file: string, limit: number) =>
  Effect.callback<number, PedelecError>((resume) => {
    let received = 0
    let ended = false
    let failure: PedelecError | undefined
    // `wx`: refuses to follow or replace anything already at the (random) temp name.
    const sink = createWriteStream(file, { flags: "wx", mode: FILE_MODE })
    const detach = () => {
      body.off("data", onData)
      body.off("end", onEnd)
      body.off("error", onAbort)
      body.off("close", onClose)
    }
    const fail = (error: PedelecError) => {
      failure ??= error
      detach()
      sink.destroy()
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > limit) return fail(tooLarge(limit))
      if (!sink.write(chunk)) {
        body.pause()
        sink.once("drain", () => {
          if (failure === undefined) body.resume()
        })
      }
    }
    const onEnd = () => {
      ended = true
      detach()
      sink.end()
    }
    const onAbort = () => fail(internal("the upload was interrupted"))
    const onClose = () => {
      if (!ended) onAbort()
    }
    sink.once("error", (error: NodeJS.ErrnoException) => fail(internal(`writing failed (${error.code ?? "error"})`)))
    sink.once("close", () =>
      resume(failure === undefined && ended ? Effect.succeed(received) : Effect.fail(failure ?? internal("closed")))
    )
    body.on("data", onData)
    body.once("end", onEnd)
    body.once("error", onAbort)
    body.once("close", onClose)
    if (body.destroyed) onAbort()
    return Effect.callback<void>((closed) => {
      if (sink.closed) return closed(Effect.void)
      sink.once("close", () => closed(Effect.void))
      fail(internal("the upload was stopped"))
    })
  })

/** A failure mid-way leaves nothing at the temp name; the caller decides what to tell the uploader. */
export const writeVia = Effect.fnUntraced(function* (
  tmp: string,
  body: Readable,
  bytes: number,
  commit: (tmp: string) => Effect.Effect<void, PedelecError>
) {
  return yield* Effect.acquireUseRelease(
    Effect.succeed(tmp),
    () =>
      Effect.gen(function* () {
        const received = yield* receive(body, tmp, bytes)
        if (received !== bytes)
          return yield* Effect.fail(
            PedelecError.fromCode("INVALID_INPUT", "core", {
              details: { reason: `the upload ended after ${received} of the ${bytes} bytes its ticket was issued for` }
            })
          )
        yield* commit(tmp)
      }),
    () => Effect.promise(() => rm(tmp, { force: true }))
  )
})
