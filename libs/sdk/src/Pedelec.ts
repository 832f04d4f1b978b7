/**
 * Pedelec — the client a page constructs: sessions (create, resume), the questions a page asks before it has one
 * (providers, settings, approval, availability), and the routing of each event to its session. It connects lazily,
 * on the first call, so constructing it during a server render does nothing. The port is ExtensionLink's; each
 * session's behaviour is PedelecSession's.
 */
import type { PageNotice } from "@pedelec/contracts/link/PageLink"
import { hasCode, PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import type { SessionInfo } from "@pedelec/contracts/Session"
import type { PublicSettings } from "@pedelec/contracts/Settings"
import type { ToolManifest } from "@pedelec/contracts/Tool"
import { PEDELEC_EXTENSION_ID, WIRE_PATTERNS } from "@pedelec/contracts/Wire"
import { ExtensionLink } from "./page/ExtensionLink.ts"
import { PedelecSession } from "./session/PedelecSession.ts"
import { type CreateSessionOptions, prepareInput } from "./tools/Manifest.ts"
import type { ToolDefinition, ToolHandler, ToolNameOf } from "./tools/Tool.ts"
import { registerWebMcp } from "./tools/WebMcp.ts"

/** What `new Pedelec(options)` takes; every field is optional. */
export interface PedelecOptions {
  /** The extension to talk to; default: the published Pedelec extension. A development build passes its own. */
  readonly extensionId?: string | undefined
  /** How long a request may wait for its acknowledgement (never counting the approval window); default 30 s. */
  readonly requestTimeoutMs?: number | undefined
  /** The earlier SDK's name for `requestTimeoutMs` (which wins when both are given). */
  readonly bridgeTimeoutMs?: number | undefined
}

/** Where this page stands with the extension, from `getApprovalStatus()` (which never opens a window). */
export interface ApprovalStatus {
  /** The extension answered this page. */
  readonly installed: boolean
  /** The user approved this page's origin. */
  readonly approved: boolean
  /** This page's origin as the extension saw it (`null` where there is no page, as in a server render). */
  readonly origin: string | null
  /** The native host reached a running Core (only asked for an approved origin). */
  readonly appConnected: boolean
}

/** The answer of `checkAvailability()`: one flag per link of the chain, and the first problem as an error. */
export interface PedelecAvailability {
  /** Everything is in place: a session can be created without asking the user anything. */
  readonly available: boolean
  /** Whether the extension answered this page. */
  readonly extension: { readonly available: boolean }
  /** Whether this origin is approved, and the origin the extension saw. */
  readonly approval: { readonly approved: boolean; readonly origin: string | null }
  /** `launchAttempted`: whether Core was asked at all (only for an approved origin; it may start the app). */
  readonly desktop: { readonly available: boolean; readonly launchAttempted: boolean }
  /** Why `available` is false: `EXTENSION_UNAVAILABLE`, `APPROVAL_REQUIRED`, `CORE_RUNTIME_UNAVAILABLE`, …. */
  readonly error?: PedelecError
}

/** What `resumeSession(sessionId, options)` takes. */
export interface ResumeOptions {
  /** This page handles the session's tool calls from now on (the creator's claim moves here). */
  readonly claimTools?: boolean | undefined
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/** The status of a page no extension answers (its origin `null` where there is no page, as in a server render). */
const unreachable = (): ApprovalStatus => ({
  installed: false,
  approved: false,
  origin: typeof location === "undefined" ? null : location.origin,
  appConnected: false
})

/**
 * The client a page constructs, once: it creates and resumes sessions and answers the questions a page asks before it
 * has one. Nothing connects until the first call, so constructing it during a server render is safe.
 */
export class Pedelec {
  /** The extension this client talks to (`PEDELEC_EXTENSION_ID` unless `options.extensionId` said otherwise). */
  readonly extensionId: string
  readonly #link: ExtensionLink
  readonly #sessions = new Map<string, PedelecSession<string>>()

  constructor(options: PedelecOptions = {}) {
    this.extensionId = options.extensionId ?? PEDELEC_EXTENSION_ID
    const timeout = options.requestTimeoutMs ?? options.bridgeTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    this.#link = new ExtensionLink(this.extensionId, Math.max(1, timeout), {
      onEvent: (event) => this.#sessions.get(event.sessionId)?.receive(event),
      onNotice: (notice) => this.#notice(notice),
      restore: async () => {
        await Promise.all([...this.#sessions.values()].map((session) => session.resubscribe("send")))
      },
      onLost: (error) => {
        for (const session of this.#sessions.values()) session.report(error)
      }
    })
  }

  /** Opens the approval window for a new origin. The session's tools are handled by this page. */
  async createSession<const Tools extends ReadonlyArray<ToolDefinition> = []>(
    options: CreateSessionOptions<Tools> = {}
  ): Promise<PedelecSession<ToolNameOf<Tools>>> {
    const { input, inlineHandlers } = prepareInput(options)
    const info = await this.#link.request("session.create", { input })
    return this.#attach(info, true, inlineHandlers, options.webmcp ? input.skills?.tools : undefined)
  }

  /** Observes a session this origin created (after a reload, from another tab, after a Core restart). */
  async resumeSession(sessionId: string, options: ResumeOptions = {}): Promise<PedelecSession<string>> {
    if (typeof sessionId !== "string" || !WIRE_PATTERNS.sessionId.test(sessionId)) {
      throw PedelecError.fromCode("INVALID_INPUT", "sdk", {
        details: { pointer: "/sessionId", reason: "a session id is 22–64 URL-safe characters" }
      })
    }
    const claimTools = options.claimTools === true
    const held = this.#sessions.get(sessionId)
    if (held !== undefined) {
      // The same handle again, picked up from the last seq it saw: a page's way to fill a gap it was told of.
      if (claimTools) held.claim()
      await held.follow("request")
      return held
    }
    const info = await this.#link.request("session.resume", { sessionId: sessionId as never, claimTools })
    return this.#attach(info, claimTools, new Map())
  }

  /** The agent CLIs the user has; for a new origin this opens the approval window first, as `createSession` does. */
  listProviders(): Promise<ReadonlyArray<ProviderInfo>> {
    return this.#link.request("providers.list", {})
  }

  /** The user's defaults (provider, models, effort); asks for approval first, as `listProviders` does. */
  getSettings(): Promise<PublicSettings> {
    return this.#link.request("settings.get", {})
  }

  /**
   * Asks the user to approve this origin now (the approval window, unless it is approved already) and resolves with
   * the status after it; rejects `APPROVAL_REJECTED`, `APPROVAL_TIMEOUT` or `APPROVAL_PENDING` as `createSession` does.
   */
  requestApproval(): Promise<ApprovalStatus> {
    return this.#link.request("extension.request_approval", {})
  }

  /** Never opens the approval window and never wakes the desktop app for an unapproved origin. */
  async getApprovalStatus(): Promise<ApprovalStatus> {
    try {
      return await this.#link.request("extension.approval_status", {})
    } catch (error) {
      if (hasCode(error, "EXTENSION_UNAVAILABLE", "EXTENSION_DISCONNECTED")) return unreachable()
      throw error
    }
  }

  /** Everything a page checks before offering its agent features; failures are in `error`, never thrown. */
  async checkAvailability(): Promise<PedelecAvailability> {
    let status: ApprovalStatus
    let error: PedelecError | undefined
    try {
      status = await this.getApprovalStatus()
      error = !status.installed
        ? PedelecError.fromCode("EXTENSION_UNAVAILABLE", "sdk")
        : !status.approved
          ? PedelecError.fromCode("APPROVAL_REQUIRED", "sdk", { details: { origin: status.origin } })
          : !status.appConnected
            ? PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "sdk")
            : undefined
    } catch (thrown) {
      status = unreachable()
      error = thrown instanceof PedelecError ? thrown : PedelecError.fromCode("INTERNAL_ERROR", "sdk")
    }
    // Available exactly when nothing is in the way (installed, approved and connected).
    return {
      available: error === undefined,
      extension: { available: status.installed },
      approval: { approved: status.approved, origin: status.origin },
      desktop: { available: status.appConnected, launchAttempted: status.approved },
      ...(error === undefined ? {} : { error })
    }
  }

  /** Drops the connection. Sessions with `autoEndOnDisconnect` end after Core's grace period. */
  close(): void {
    this.#link.close()
    this.#sessions.clear()
  }

  /** `webmcp`: the tools to register with WebMCP for the session's life (WebMcp.ts). */
  async #attach<Name extends string>(
    info: SessionInfo,
    claimTools: boolean,
    inlineHandlers: ReadonlyMap<string, ToolHandler>,
    webmcp?: ReadonlyArray<ToolManifest>
  ): Promise<PedelecSession<Name>> {
    const life = new AbortController()
    const session = new PedelecSession<Name>(info, claimTools, inlineHandlers, this.#link, () => {
      life.abort()
      this.#sessions.delete(info.sessionId)
    })
    this.#sessions.set(info.sessionId, session as PedelecSession<string>)
    try {
      const params = { sessionId: info.sessionId, afterSeq: info.lastSeq, ...session.claimParams }
      await this.#link.request("session.subscribe", params)
    } catch (error) {
      this.#sessions.delete(info.sessionId)
      throw error
    }
    if (webmcp !== undefined) registerWebMcp(webmcp, session, life.signal)
    return session
  }

  #notice(notice: PageNotice): void {
    const error = PedelecError.fromWire(notice.error)
    const targets =
      notice.sessionId === undefined ? [...this.#sessions.values()] : [this.#sessions.get(notice.sessionId)]
    for (const session of targets) {
      if (session === undefined) continue
      // The native side dropped this session's subscription: pick it up again from the last seq seen (a failure
      // to do so is reported then); anything else the page must hear about.
      if (hasCode(error, "NATIVE_CONNECTION_CLOSED")) void session.resubscribe("request")
      else session.report(error)
    }
  }
}
