/**
 * TextLines — splits a text stream into lines in time linear in its length: each piece of text is searched once for newlines,
 * and a line that spans pieces is joined once, when it ends. (Appending to one buffer and searching it again on every
 * read is quadratic in a long line's length.) No Effect, so pedelec-cli's fast path can use it.
 * Bytes with a UTF-8 tail are providers' OutputLines' business; this one takes decoded text (sockets, HTTP bodies).
 */
export type Pushed = { readonly _tag: "Lines"; readonly lines: ReadonlyArray<string> } | { readonly _tag: "TooLong" }

export class TextLineSplitter {
  private readonly maxLength: number
  private pieces: Array<string> = []
  private pending = 0

  /** `maxLength`: the longest line accepted, in UTF-16 units, excluding the newline. */
  constructor(maxLength: number) {
    this.maxLength = maxLength
  }

  /** The lines `text` completes (a trailing `\r` removed, empty lines kept); TooLong resets the splitter. */
  push(text: string): Pushed {
    const lines: Array<string> = []
    let start = 0
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const tail = text.slice(start, newline)
      if (this.pending + tail.length > this.maxLength) return this.reset()
      const line = this.pieces.length === 0 ? tail : this.pieces.join("") + tail
      lines.push(line.endsWith("\r") ? line.slice(0, -1) : line)
      this.pieces = []
      this.pending = 0
      start = newline + 1
    }
    if (start < text.length) {
      this.pieces.push(text.slice(start))
      this.pending += text.length - start
      if (this.pending > this.maxLength) return this.reset()
    }
    return { _tag: "Lines", lines }
  }

  private reset(): Pushed {
    this.pieces = []
    this.pending = 0
    return { _tag: "TooLong" }
  }
}
