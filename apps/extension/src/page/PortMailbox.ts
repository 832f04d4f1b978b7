/**
 * PortMailbox — holds a page port's messages from the moment Chrome hands the port over until the worker is ready
 * for them. Its listeners are attached synchronously in `onConnectExternal`: a listener added after an await misses
 * what the page sent meanwhile (browser-e2e.md P4), and a disconnect listener added after the port closed never fires
 * (P7). No Effect here: it runs in the listener's own turn, before the worker's runtime may even exist.
 */
import type { PortLike } from "../browser/Chrome.ts"

export class PortMailbox {
  readonly port: PortLike
  private buffered: Array<unknown> = []
  private receiver: ((message: unknown) => void) | undefined
  private onGone: (() => void) | undefined
  private gone = false

  constructor(port: PortLike) {
    this.port = port
    port.onMessage.addListener((message) => {
      if (this.receiver !== undefined) this.receiver(message)
      else if (!this.gone) this.buffered.push(message)
    })
    port.onDisconnect.addListener(() => {
      this.gone = true
      this.buffered = []
      this.onGone?.()
    })
  }

  /** Delivers what was buffered, in order, then every later message; `onGone` runs once the page disconnects. */
  start(receiver: (message: unknown) => void, onGone: () => void): void {
    if (this.gone) {
      onGone()
      return
    }
    this.onGone = onGone
    const waiting = this.buffered
    this.buffered = []
    for (const message of waiting) receiver(message)
    this.receiver = receiver
  }

  get disconnected(): boolean {
    return this.gone
  }
}
