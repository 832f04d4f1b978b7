/**
 * Ndjson — the serialization of Core IPC, in linear time. effect/rpc's own `layerNdjson` appends each socket read to its buffer and
 * searches that whole buffer for a newline again, so one long line (a 3.9 MiB tool result, a 3.6 MB chat message)
 * costs time quadratic in its length: 160 ms of the native host's CPU for a 900 KB message. This parser splits with
 * TextLineSplitter (linear). Same wire format, same 16 MiB line cap, same errors.
 */

import * as Layer from "effect/Layer"
import { RpcSerialization } from "effect/rpc"
import * as Schema from "effect/Schema"
import { TextLineSplitter } from "./TextLines.ts"

/** effect/rpc's own default, in UTF-16 units as it counts them: a longer line fails with MaxBufferSizeExceeded. */
export const MAX_LINE_LENGTH = 16 * 1024 * 1024

const makeParser = (maxLine: number): RpcSerialization.Parser => {
  const decoder = new TextDecoder()
  const splitter = new TextLineSplitter(maxLine)
  return {
    decode: (data) => {
      const pushed = splitter.push(typeof data === "string" ? data : decoder.decode(data, { stream: true }))
      if (pushed._tag === "TooLong") throw new RpcSerialization.MaxBufferSizeExceeded({ maxBufferSize: maxLine })
      const items: Array<unknown> = []
      for (const line of pushed.lines) {
        if (line.length === 0) continue
        try {
          items.push(JSON.parse(line))
        } catch (cause) {
          throw new RpcSerialization.NdjsonDecodeError({ cause })
        }
      }
      return items
    },
    encode: (response) => {
      if (!Array.isArray(response)) return `${JSON.stringify(response)}\n`
      if (response.length === 0) return undefined
      return response.map((item) => `${JSON.stringify(item)}\n`).join("")
    }
  }
}

/** Drop-in for `RpcSerialization.layerNdjson` on both ends of Core IPC. */
export const layerNdjson = Layer.succeed(RpcSerialization.RpcSerialization)(
  RpcSerialization.RpcSerialization.of({
    contentType: "application/x-ndjson",
    includesFraming: true,
    codecFor: Schema.toCodecJson,
    makeUnsafe: () => makeParser(MAX_LINE_LENGTH)
  })
)
