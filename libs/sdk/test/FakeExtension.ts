/**
 * FakeExtension — the extension as a page sees it: the page side of `chrome.runtime` (`connect`, `lastError`) and a
 * scripted extension behind each FakePagePort, answering page-link requests by method. For unit tests of the SDK's
 * own logic (ids, ordering, reconnects, tool calls). Not the worker's Chrome APIs (apps/extension/test/FakeChromeApi.ts
 * fakes those); the real extension and Chromium are proven by apps/e2e.
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"

export interface Request {
  readonly id: string
  readonly method: string
  readonly params: Record<string, unknown>
  /** On `session.subscribe`: the page reads PageTextRefs. */
  readonly textRefs?: true
}

type Answer = { readonly result: unknown } | { readonly error: PedelecErrorWire } | "silent"
type Handler = (request: Request, port: FakePagePort) => Answer | Promise<Answer>

export const SESSION_ID = "s".repeat(22)

export const wireError = (code: PedelecErrorWire["code"], message = `${code} happened`): PedelecErrorWire => ({
  code,
  message,
  retryable: false,
  source: "core"
})

export const sessionInfo = (overrides: Record<string, unknown> = {}) => ({
  sessionId: SESSION_ID,
  origin: "http://127.0.0.1:5173",
  provider: "scripted",
  model: null,
  effortLevel: "medium",
  workspace: { path: "/tmp/w", managed: true },
  status: "idle",
  autoEndOnDisconnect: true,
  lastSeq: 0,
  createdAt: 1,
  ...overrides
})

export class FakePagePort {
  readonly sent: Array<Request> = []
  private readonly messageListeners: Array<(message: unknown) => void> = []
  private readonly disconnectListeners: Array<() => void> = []
  connected = true

  private readonly chrome: FakeExtension

  constructor(chrome: FakeExtension) {
    this.chrome = chrome
  }

  readonly onMessage = { addListener: (listener: (message: unknown) => void) => this.messageListeners.push(listener) }
  readonly onDisconnect = { addListener: (listener: () => void) => this.disconnectListeners.push(listener) }

  postMessage(message: unknown): void {
    if (!this.connected) throw new Error("Attempting to use a disconnected port object")
    const request = message as Request
    this.sent.push(request)
    void this.chrome.answer(request, this)
  }

  disconnect(): void {
    this.connected = false
  }

  /** Extension → page. */
  push(message: unknown): void {
    if (this.connected) for (const listener of this.messageListeners) listener(structuredClone(message))
  }

  event(event: SessionEvent): void {
    this.push({ kind: "event", event })
  }

  /** The extension side drops the port; `lastError` as Chrome would report it, undefined for a service-worker stop. */
  drop(lastError?: string): void {
    if (!this.connected) return
    this.connected = false
    this.chrome.lastError = lastError === undefined ? undefined : { message: lastError }
    for (const listener of this.disconnectListeners) listener()
    this.chrome.lastError = undefined
  }
}

export class FakeExtension {
  readonly ports: Array<FakePagePort> = []
  lastError: { message: string } | undefined
  /** Make `connect` fail like a missing extension does: the port drops at once with this message. */
  refuseWith: string | undefined
  private readonly handlers = new Map<string, Handler>()

  constructor() {
    this.on("extension.hello", () => ({ result: { protocolVersion: PROTOCOL_VERSION, extensionVersion: "0.1.0" } }))
    this.on("session.subscribe", () => ({ result: {} }))
    this.on("session.resume", () => ({ result: sessionInfo() }))
    this.on("session.create", () => ({ result: sessionInfo() }))
    this.on("tool.submit_result", () => ({ result: { accepted: true } }))
    this.on("tool.progress", () => ({ result: {} }))
    this.on("tool.awaiting_user", () => ({ result: {} }))
  }

  install(): this {
    const runtime = {
      connect: (_id: string, _info: { name: string }) => {
        const port = new FakePagePort(this)
        this.ports.push(port)
        if (this.refuseWith !== undefined) {
          const reason = this.refuseWith
          queueMicrotask(() => port.drop(reason))
        }
        return port
      },
      get lastError() {
        return chrome.lastError
      }
    }
    const chrome = this
    Object.assign(globalThis, { window: globalThis, chrome: { runtime } })
    return this
  }

  on(method: string, handler: Handler): void {
    this.handlers.set(method, handler)
  }

  get port(): FakePagePort {
    return this.ports.at(-1)!
  }

  requests(method: string): Array<Request> {
    return this.ports.flatMap((port) => port.sent.filter((request) => request.method === method))
  }

  async answer(request: Request, port: FakePagePort): Promise<void> {
    const handler = this.handlers.get(request.method)
    if (handler === undefined) return
    const answer = await handler(request, port)
    if (answer === "silent") return
    port.push(
      "error" in answer
        ? { kind: "response", id: request.id, ok: false, error: answer.error }
        : { kind: "response", id: request.id, ok: true, result: answer.result }
    )
  }
}

export const uninstall = () => {
  const global = globalThis as { window?: unknown; chrome?: unknown }
  delete global.window
  delete global.chrome
}

export const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

let nextSeq = 1
export const resetSeq = () => {
  nextSeq = 1
}
const base = () => ({ sessionId: SESSION_ID as never, seq: nextSeq++, at: 1 })
export const events = {
  chat: (turnId: string, text: string): SessionEvent => ({ type: "chat", ...base(), turnId: turnId as never, text }),
  delta: (turnId: string, delta: string): SessionEvent => ({
    type: "chat_delta",
    ...base(),
    turnId: turnId as never,
    delta
  }),
  status: (status: "idle" | "running" | "waiting_tool_result", previous = "idle" as const): SessionEvent => ({
    type: "status_changed",
    ...base(),
    status,
    previous
  }),
  toolCall: (turnId: string, toolCallId: string, tool: string, args: Record<string, unknown> = {}): SessionEvent => ({
    type: "tool_call",
    ...base(),
    turnId: turnId as never,
    toolCallId: toolCallId as never,
    tool,
    args: args as never,
    timeoutMs: 60_000
  }),
  toolCancelled: (turnId: string, toolCallId: string): SessionEvent => ({
    type: "tool_call_cancelled",
    ...base(),
    turnId: turnId as never,
    toolCallId: toolCallId as never,
    reason: "TOOL_CANCELLED"
  }),
  completed: (turnId: string, text: string, error?: PedelecErrorWire): SessionEvent => ({
    type: "turn_completed",
    ...base(),
    turnId: turnId as never,
    turnKind: "user",
    reason: error === undefined ? "completed" : "failed",
    text,
    ...(error === undefined ? {} : { error })
  }),
  ended: (): SessionEvent => ({ type: "ended", ...base(), reason: "requested" })
}
