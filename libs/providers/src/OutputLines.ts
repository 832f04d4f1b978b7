/**
 * OutputLines — turns an agent's stdout bytes into lines, strictly: split on "\n" (a trailing "\r" is dropped),
 * each line decoded as UTF-8 with invalid bytes reported rather than replaced, and a hard per-line limit so a CLI
 * that never prints a newline cannot grow our memory. It does not parse JSON or know any CLI's event format.
 */

/** SPEC §6: no line limit below 16 MiB. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

export type OutputLine =
  | { readonly _tag: "Text"; readonly text: string }
  /** Not valid UTF-8: adapters skip it (and count it), never guess at its content. */
  | { readonly _tag: "Invalid"; readonly bytes: number }

/** A line grew past the limit; the stream must fail rather than keep buffering. */
export class LineTooLong {
  readonly _tag = "LineTooLong"
  readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }
}

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d

/** Splits one byte stream into strictly decoded UTF-8 lines of at most `limit` bytes; `push` each chunk, then `end`. */
export class Utf8LineSplitter {
  private parts: Array<Uint8Array> = []
  private size = 0
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  readonly limit: number

  constructor(limit: number = MAX_LINE_BYTES) {
    this.limit = limit
  }

  push(chunk: Uint8Array): ReadonlyArray<OutputLine> | LineTooLong {
    const lines: Array<OutputLine> = []
    let start = 0
    for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      if (this.size + (nl - start) > this.limit) return new LineTooLong(this.limit)
      this.parts.push(chunk.subarray(start, nl))
      lines.push(this.take())
      start = nl + 1
    }
    if (start < chunk.length) {
      if (this.size + (chunk.length - start) > this.limit) return new LineTooLong(this.limit)
      // Copy: the caller may reuse its buffer after we return.
      this.parts.push(chunk.slice(start))
      this.size += chunk.length - start
    }
    return lines
  }

  /** The last line when the output did not end with a newline. */
  end(): ReadonlyArray<OutputLine> {
    return this.size === 0 ? [] : [this.take()]
  }

  private take(): OutputLine {
    const joined = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)
    this.parts = []
    this.size = 0
    const line = joined.at(-1) === CARRIAGE_RETURN ? joined.subarray(0, -1) : joined
    try {
      return { _tag: "Text", text: this.decoder.decode(line) }
    } catch {
      return { _tag: "Invalid", bytes: line.length }
    }
  }
}
