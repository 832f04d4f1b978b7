/**
 * Printer — pedelec-agent's stdout: one ProviderEvent a line, in order, and every event emitted in the same turn of
 * the event loop in one write. One model chunk carries several lines (deltas, the message, the completion): written
 * one by one, Core read them one by one and published each as its own event, a wake-up and a publish per line on a
 * loaded 2-core machine (issue 15, warm ollama turns); written together, Core reads them in one go and coalesces the
 * deltas. It does not decide what is printed (Loop, main) nor when a turn ends.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"

export type Print = (event: ProviderEvent) => Promise<void>

/** A printer on `write` (stdout's): the returned promise settles once the line has been handed to the stream. */
export const makePrinter = (write: (text: string, done: () => void) => void): Print => {
  let lines: Array<string> = []
  let waiting: Array<() => void> = []
  // After everything this turn of the loop emits: the lines of one model chunk, and what a round's end adds to them.
  const flush = () => {
    const text = lines.join("")
    const settled = waiting
    lines = []
    waiting = []
    write(text, () => {
      for (const resolve of settled) resolve()
    })
  }
  return (event) =>
    new Promise<void>((resolve) => {
      if (lines.length === 0) setImmediate(flush)
      lines.push(`${JSON.stringify(event)}\n`)
      waiting.push(resolve)
    })
}
