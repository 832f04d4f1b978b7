/**
 * FakeChromeApi — the Chrome APIs the worker uses (browser/Chrome.ts ChromeApi): ports whose both ends a test drives
 * (FakeWorkerPort, for page and native ports alike), in-memory storage areas, and popup windows it can inspect and
 * close. Plus helpers to wait for the worker's asynchronous steps, which run on real timers even under TestClock.
 * Nothing answers on those ports: the tests play the page and the host. (libs/sdk/test/FakeExtension.ts is the other
 * side: a scripted extension as a page sees it.)
 */
import * as Effect from "effect/Effect"
import type { ChromeApi, PortLike, StorageAreaLike } from "../src/browser/Chrome.ts"

type Listener<A extends Array<unknown>> = (...args: A) => void

export class FakeWorkerPort implements PortLike {
  readonly name: string
  readonly sender: { readonly origin?: string | undefined } | undefined
  /** What the worker posted on this port. */
  readonly posted: Array<unknown> = []
  disconnected = false
  private readonly messageListeners: Array<Listener<[unknown]>> = []
  private readonly disconnectListeners: Array<Listener<[]>> = []
  private readonly fake: FakeChromeApi

  constructor(fake: FakeChromeApi, name: string, origin?: string) {
    this.fake = fake
    this.name = name
    this.sender = origin === undefined ? undefined : { origin }
  }

  postMessage(message: unknown): void {
    if (this.disconnected) throw new Error("Attempting to use a disconnected port object")
    // Chrome serialises messages; a JSON round trip catches anything that would not survive that.
    this.posted.push(JSON.parse(JSON.stringify(message)))
  }

  /** The worker's own disconnect: the other end hears it, this end's onDisconnect does not fire (as in Chrome). */
  disconnect(): void {
    this.disconnected = true
  }

  readonly onMessage = { addListener: (listener: Listener<[unknown]>) => void this.messageListeners.push(listener) }
  readonly onDisconnect = { addListener: (listener: Listener<[]>) => void this.disconnectListeners.push(listener) }

  /** The other end sends a message. */
  emit(message: unknown): void {
    if (this.disconnected) throw new Error("Attempting to use a disconnected port object")
    for (const listener of this.messageListeners) listener(JSON.parse(JSON.stringify(message)))
  }

  /** The other end goes away, with `lastError` set for the listeners, as Chrome does. */
  drop(lastError?: string): void {
    if (this.disconnected) return
    this.disconnected = true
    this.fake.lastError = lastError
    for (const listener of this.disconnectListeners) listener()
    this.fake.lastError = undefined
  }
}

class FakeStorage implements StorageAreaLike {
  readonly data = new Map<string, unknown>()
  get(key: string) {
    return Promise.resolve(this.data.has(key) ? { [key]: structuredClone(this.data.get(key)) } : {})
  }
  set(items: Record<string, unknown>) {
    for (const [key, value] of Object.entries(items)) this.data.set(key, structuredClone(value))
    return Promise.resolve()
  }
}

export class FakeChromeApi implements ChromeApi {
  readonly extensionVersion = "9.8.7"
  readonly local = new FakeStorage()
  readonly session = new FakeStorage()
  /** Every native port the worker opened, in order. */
  readonly nativePorts: Array<FakeWorkerPort> = []
  /** Every popup the worker opened: its path (with query) and window id. */
  readonly popups: Array<{ readonly path: string; readonly windowId: number }> = []
  readonly closedWindows: Array<number> = []
  lastError: string | undefined
  private nextWindow = 100

  readonly connectNative = (name: string) => {
    const port = new FakeWorkerPort(this, name)
    this.nativePorts.push(port)
    return port
  }

  readonly lastErrorMessage = () => this.lastError

  readonly openPopup = (path: string) => {
    const windowId = this.nextWindow++
    this.popups.push({ path, windowId })
    return Promise.resolve(windowId)
  }

  readonly closeWindow = (windowId: number) => {
    this.closedWindows.push(windowId)
    return Promise.resolve()
  }

  /** A page connects: the port the worker gets. */
  page(origin: string, name = "pedelec-sdk"): FakeWorkerPort {
    return new FakeWorkerPort(this, name, origin)
  }

  /** The ticket and query of the last popup. */
  lastPopup(): URLSearchParams {
    const popup = this.popups.at(-1)
    if (popup === undefined) throw new Error("no popup was opened")
    return new URLSearchParams(popup.path.split("?")[1])
  }
}

/** One turn of the real event loop: lets promises and forked fibers run, whatever the clock. */
export const tick = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

/** Waits (bounded, on real turns) until `condition` holds; fails the test otherwise. */
export const waitUntil = (condition: () => boolean, what: string) =>
  Effect.gen(function* () {
    for (let turn = 0; turn < 500; turn++) {
      if (condition()) return
      yield* tick
    }
    return yield* Effect.die(new Error(`timed out waiting until ${what}`))
  })
