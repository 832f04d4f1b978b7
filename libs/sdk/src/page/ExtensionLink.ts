/**
 * ExtensionLink — the page's one port to the extension: hello, requests with ids and acknowledgement timeouts,
 * decoding of everything that comes back, and reconnection with backoff when the port drops (the extension's
 * service worker may stop at any time). It owns the port and its lifecycle; what a session does with events, and how
 * it re-subscribes after a reconnect, belongs to the sessions (they register a `restore` step run before queued
 * requests go out). Its subscriptions read text refs: a large text this port already carried for a session comes as
 * a PageTextRef, rebuilt here (TextRunsReceiver, one per session of the port) before anything sees the event.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import { jsonDepthExceeded } from "@pedelec/contracts/JsonPointer"
import {
  ExtensionToPage,
  type PageEvent,
  type PageMethod,
  PageMethods,
  type PageNotice,
  type PageParams,
  type PageResponse,
  type PageResult,
  type PageTextRef
} from "@pedelec/contracts/link/PageLink"
import { TextRunsReceiver } from "@pedelec/contracts/link/TextRuns"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { version } from "../../package.json"
import { type ChromePort, lastErrorMessage, openPort } from "./ChromePort.ts"

/** From package.json (one version everywhere); a named import, so the bundle carries only this one field. */
export const SDK_VERSION: string = version

/** The approval window may stay open this long (SPEC §4); the acknowledgement timeout never runs during it. */
const APPROVAL_WINDOW_MS = 60_000
/** Methods the extension may answer only after the user decided in the approval window. */
const MAY_ASK_USER: ReadonlySet<PageMethod> = new Set([
  "session.create",
  "session.resume",
  "providers.list",
  "settings.get",
  "extension.request_approval"
])
/** Safe to send again after a reconnect: Core treats a repeat as the same request. */
const IDEMPOTENT: ReadonlySet<PageMethod> = new Set([
  "tool.submit_result",
  "tool.progress",
  "session.cancel",
  "session.end"
])
const BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000] as const
/** Failed reconnects after which live sessions hear EXTENSION_DISCONNECTED (the link keeps trying). */
const ATTEMPTS_BEFORE_REPORTING = 4

const decodeMessage = Schema.decodeUnknownExit(ExtensionToPage)

const sdkError = PedelecError.fromCode

/** A first port that dies before its hello is answered means the extension is not there for this page. */
const neverConnected = (error: PedelecError): PedelecError =>
  error.code === "EXTENSION_DISCONNECTED"
    ? sdkError("EXTENSION_UNAVAILABLE", "sdk", { details: { reason: String(error.details?.reason ?? error.message) } })
    : error

interface Pending {
  readonly method: PageMethod
  readonly message: unknown
  readonly resolve: (result: unknown) => void
  readonly reject: (error: PedelecError) => void
  readonly timer: ReturnType<typeof setTimeout>
}

export interface LinkHandlers {
  readonly onEvent: (event: SessionEvent) => void
  readonly onNotice: (notice: PageNotice) => void
  /** Runs on every new port before queued requests are sent: sessions resume and re-subscribe here. */
  readonly restore: () => Promise<void>
  /** The port has been down through several reconnect attempts. */
  readonly onLost: (error: PedelecError) => void
}

type State =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Connecting"; readonly ready: Promise<void> }
  | { readonly _tag: "Ready"; readonly port: ChromePort }
  | { readonly _tag: "Unavailable"; readonly error: PedelecError }
  | { readonly _tag: "Closed" }

export class ExtensionLink {
  #state: State = { _tag: "Idle" }
  #port: ChromePort | undefined
  readonly #pending = new Map<string, Pending>()
  /** What the current port carried, per session, for the refs it may bring next. */
  readonly #runs = new Map<string, TextRunsReceiver>()
  #nextId = 0
  #failedAttempts = 0
  #everConnected = false

  readonly extensionId: string
  readonly #requestTimeoutMs: number
  readonly #handlers: LinkHandlers

  constructor(extensionId: string, requestTimeoutMs: number, handlers: LinkHandlers) {
    this.extensionId = extensionId
    this.#requestTimeoutMs = requestTimeoutMs
    this.#handlers = handlers
  }

  /** Sends one request once the link is up (connecting first if needed) and resolves with its decoded result. */
  async request<M extends PageMethod>(method: M, params: PageParams<M>): Promise<PageResult<M>> {
    await this.#ready()
    return this.send(method, params)
  }

  /** For `restore` steps only: sends on the port being restored without waiting for the link to be ready. */
  send<M extends PageMethod>(method: M, params: PageParams<M>): Promise<PageResult<M>> {
    const port = this.#port
    if (port === undefined) return Promise.reject(this.#unusable())
    const id = `r${(this.#nextId++).toString(36)}`
    const timeoutMs = MAY_ASK_USER.has(method) ? this.#requestTimeoutMs + APPROVAL_WINDOW_MS : this.#requestTimeoutMs
    const message = { kind: "request", id, method, params, ...(method === "session.subscribe" && { textRefs: true }) }
    return new Promise<PageResult<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        reject(sdkError("REQUEST_TIMEOUT", "sdk", { details: { method, timeoutMs } }))
      }, timeoutMs)
      this.#pending.set(id, { method, message, resolve: resolve as (result: unknown) => void, reject, timer })
      this.#post(port, message, id)
    })
  }

  close(): void {
    const port = this.#port
    this.#state = { _tag: "Closed" }
    this.#port = undefined
    this.#failAll(sdkError("EXTENSION_DISCONNECTED", "sdk", { message: "This Pedelec client was closed." }))
    port?.disconnect()
  }

  #ready(): Promise<void> {
    switch (this.#state._tag) {
      case "Ready":
        return Promise.resolve()
      case "Connecting":
        return this.#state.ready
      case "Unavailable":
      case "Closed":
        return Promise.reject(this.#unusable())
      case "Idle": {
        const ready = this.#connect()
        this.#state = { _tag: "Connecting", ready }
        return ready
      }
    }
  }

  #unusable(): PedelecError {
    if (this.#state._tag === "Unavailable") return this.#state.error
    if (this.#state._tag === "Closed")
      return sdkError("EXTENSION_DISCONNECTED", "sdk", { message: "This client was closed." })
    return sdkError("EXTENSION_DISCONNECTED", "sdk")
  }

  /** Opens a port and says hello; retried with backoff only once a port has worked (a missing extension is final). */
  async #connect(): Promise<void> {
    for (;;) {
      const outcome = await this.#attempt()
      if (this.#state._tag === "Closed") throw this.#unusable()
      if (outcome === undefined) {
        this.#everConnected = true
        this.#failedAttempts = 0
        this.#state = { _tag: "Ready", port: this.#port! }
        for (const [id, request] of this.#pending) this.#post(this.#port!, request.message, id)
        return
      }
      if (!this.#everConnected) {
        const error = neverConnected(outcome)
        this.#state = { _tag: "Unavailable", error }
        throw error
      }
      this.#failedAttempts++
      if (this.#failedAttempts === ATTEMPTS_BEFORE_REPORTING) this.#handlers.onLost(outcome)
      const delay = BACKOFF_MS[Math.min(this.#failedAttempts, BACKOFF_MS.length - 1)]!
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }

  /** One port: undefined once hello and the sessions' restore step succeeded, else why not. */
  async #attempt(): Promise<PedelecError | undefined> {
    const opened = openPort(this.extensionId)
    if ("unavailable" in opened) {
      return sdkError("EXTENSION_UNAVAILABLE", "sdk", { details: { reason: opened.unavailable } })
    }
    const port = opened.port
    this.#port = port
    this.#runs.clear()
    port.onMessage.addListener((message) => this.#receive(port, message))
    port.onDisconnect.addListener(() => this.#dropped(port, lastErrorMessage()))
    try {
      const hello = await this.send("extension.hello", { protocolVersion: PROTOCOL_VERSION, sdkVersion: SDK_VERSION })
      if (hello.protocolVersion !== PROTOCOL_VERSION) {
        port.disconnect()
        this.#port = undefined
        return sdkError("PROTOCOL_VERSION_MISMATCH", "sdk", {
          details: { expected: PROTOCOL_VERSION, received: hello.protocolVersion }
        })
      }
      await this.#handlers.restore()
      return undefined
    } catch (error) {
      if (this.#port === port) {
        this.#port = undefined
        port.disconnect()
      }
      return error instanceof PedelecError ? error : sdkError("EXTENSION_UNAVAILABLE", "sdk")
    }
  }

  #post(port: ChromePort, message: unknown, id: string): void {
    try {
      port.postMessage(message)
    } catch (error) {
      // Chrome throws on a port that died between two checks; the disconnect handler re-sends or rejects.
      if (port !== this.#port) return
      this.#settle(id, undefined, sdkError("EXTENSION_DISCONNECTED", "sdk", { details: { reason: String(error) } }))
    }
  }

  #receive(port: ChromePort, raw: unknown): void {
    if (port !== this.#port) return
    const decoded = jsonDepthExceeded(raw) === undefined ? decodeMessage(raw) : undefined
    // What was dropped may have been a session's event: nothing carried before it may be named.
    if (decoded === undefined || Exit.isFailure(decoded)) {
      this.#runs.clear()
      return
    }
    const message = decoded.value
    if (message.kind === "event" || message.kind === "text_ref") this.#event(message)
    else if (message.kind === "notice") this.#handlers.onNotice(message)
    else this.#answered(message)
  }

  /** A whole event, recorded for the refs that may follow it; a ref rebuilt into one, or reported lost. */
  #event(message: PageEvent | PageTextRef): void {
    const { sessionId } = message.event
    const runs = this.#runs.get(sessionId) ?? new TextRunsReceiver()
    this.#runs.set(sessionId, runs)
    const event = runs.receive(message)
    if (event !== undefined) {
      this.#handlers.onEvent(event)
      return
    }
    const reason = "the extension named texts this page did not get"
    this.#handlers.onNotice({
      kind: "notice",
      sessionId,
      error: sdkError("PROTOCOL_ERROR", "sdk", { details: { reason } }).toWire()
    })
  }

  #answered(response: PageResponse): void {
    const request = this.#pending.get(response.id)
    if (request === undefined) return
    if (!response.ok) {
      this.#settle(response.id, undefined, PedelecError.fromWire(response.error))
      return
    }
    const result = Schema.decodeUnknownExit(PageMethods[request.method].result)(response.result)
    if (Exit.isSuccess(result)) this.#settle(response.id, result.value)
    else {
      const reason = `the answer to ${request.method} was malformed`
      this.#settle(response.id, undefined, sdkError("PROTOCOL_ERROR", "sdk", { details: { reason } }))
    }
  }

  #settle(id: string, result: unknown, error?: PedelecError): void {
    const request = this.#pending.get(id)
    if (request === undefined) return
    this.#pending.delete(id)
    clearTimeout(request.timer)
    if (error === undefined) request.resolve(result)
    else request.reject(error)
  }

  /**
   * A bare disconnect means the service worker stopped (or the extension was reloaded): reconnect. A request that may
   * already have been acted on is rejected unless repeating it is harmless; those are sent again on the new port.
   */
  #dropped(port: ChromePort, browserMessage: string | undefined): void {
    if (port !== this.#port) return
    this.#port = undefined
    const reason = browserMessage ?? "the extension closed the connection"
    const lost = sdkError("EXTENSION_DISCONNECTED", "sdk", { details: { reason } })
    for (const [id, request] of this.#pending) {
      if (!IDEMPOTENT.has(request.method)) this.#settle(id, undefined, lost)
    }
    if (this.#state._tag !== "Ready") return
    this.#state = { _tag: "Idle" }
    void this.#ready().catch(() => this.#failAll(lost))
  }

  #failAll(error: PedelecError): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id, undefined, error)
  }
}
