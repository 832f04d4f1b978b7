/**
 * InboundBounds — what one inbound frame may cost the host before it is relayed, and the cheap checks that hold it
 * there: a frame longer than Core's IPC line cap is skipped unread (Core would close the host's whole connection on
 * such a line, ending every subscription on it); a frame's JSON is counted and measured in one pass over its text,
 * before JSON.parse or any Schema runs; and a decoded request whose Core line would still exceed the cap is refused.
 * Pure, no I/O: Framing skips, Requests refuses, Relay answers.
 *
 * Measured on a loaded 2-core machine, a frame of 1e6 keys (12 MB) cost 6.6 s and +107 MB in JSON.parse, 19.8 s and
 * +312 MB in the depth walk and 3.9 s in the params' Schema decode (host VmHWM 620–670 MB); a 2e6-element array
 * (4 MB) 932 MB. The scan below reads the same 12 MB in well under a second and allocates nothing.
 */
import { MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import { MAX_LINE_LENGTH } from "@pedelec/core-client/Ndjson"

/** Core's line cap: a frame longer than this cannot become a request Core reads, so it is never buffered. */
export const MAX_INBOUND_FRAME = MAX_LINE_LENGTH

/**
 * JSON values (containers, elements and members) one message may hold. Parsing and decoding cost per value, not
 * per byte: at this cap a message costs the host tens of MB at most, whatever its size.
 */
export const MAX_JSON_VALUES = 200_000

/** Room for the RPC envelope around a payload on Core's line: tag, id, the proof header, trace ids. */
const ENVELOPE_RESERVE = 64 * 1024

/** JSON re-encodes a number in at most ~6× its spelling (`1e20` is 21 digits): smaller frames always fit. */
const MAX_EXPANSION = 6

export interface JsonShape {
  /** Values counted, stopping at the first one over `MAX_JSON_VALUES`. */
  readonly values: number
  /** Deepest nesting of objects and arrays seen. */
  readonly depth: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c

/**
 * Counts values (every `{`, `[` and `,` outside strings, plus the root) and the nesting depth of `text`, stopping once
 * the count passes the cap. Malformed JSON gets some count: JSON.parse refuses it later, bounded by the same cap.
 */
export const scanJson = (text: string): JsonShape => {
  let values = 1
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === BACKSLASH) index++
      else if (code === QUOTE) inString = false
      continue
    }
    if (code === QUOTE) inString = true
    else if (code === 0x7b || code === 0x5b) {
      values++
      if (++depth > deepest) deepest = depth
    } else if (code === 0x7d || code === 0x5d) depth--
    else if (code === COMMA) values++
    else continue
    if (values > MAX_JSON_VALUES) break
  }
  return { values, depth: deepest }
}

/** Whether the scan saw nesting deeper than every link accepts (the root container is level 1 here, 0 there). */
export const tooDeep = (shape: JsonShape): boolean => shape.depth > MAX_JSON_DEPTH

/**
 * The length Core's line for `payload` would have, when it may exceed the cap; undefined when it surely fits. Only a
 * frame near the cap is encoded again, so the common request pays nothing.
 */
export const relayedLengthOver = (frameLength: number, payload: unknown): number | undefined => {
  const limit = MAX_LINE_LENGTH - ENVELOPE_RESERVE
  if (frameLength * MAX_EXPANSION <= limit) return undefined
  const length = JSON.stringify(payload).length + ENVELOPE_RESERVE
  return length > MAX_LINE_LENGTH ? length : undefined
}
