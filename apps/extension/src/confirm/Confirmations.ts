/**
 * Confirmations — a person's yes before a destructive tool runs (issue 16.1), asked in a window the extension draws,
 * never the page. A `tool_call` of a tool the session's approved manifest marks `destructive` or
 * `requiresConfirmation` is held from the page; the window (confirm.html) shows the site, the tool and the exact
 * arguments; Allow once / Allow for this session pass the very event it showed (bound by a SHA-256 of session, call
 * id, tool and canonical arguments) to the page, Deny answers Core `TOOL_DENIED_BY_USER` on the page's own
 * connection (again at each re-offer until Core has answered) and the page sees nothing run. While it is open Core is told the call waits on the user
 * (`tool.awaiting_user`: its timeout pauses). Closing the window is Deny. Everything is kept in
 * `chrome.storage.session` (ConfirmState), so the window outlives a worker restart: Core offers the call again when
 * the page re-subscribes, which re-attaches it. Which events reach the page otherwise is Forwarding's.
 */

import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Skills } from "@pedelec/contracts/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mintTicket } from "../approval/Approvals/ApprovalWindow.ts"
import { canonicalJson, sha256Hex } from "../approval/Digest.ts"
import { Chrome, type ChromeApi } from "../browser/Chrome.ts"
import { type Forwarding, forward } from "../page/PageConnection/Forwarding.ts"
import {
  type ConfirmDocument,
  confirmToolsOf,
  type Decision,
  type PendingCall,
  readConfirmations,
  writeConfirmations
} from "./ConfirmState.ts"

type ToolCall = Extract<SessionEvent, { readonly type: "tool_call" }>

interface State {
  readonly chrome: ChromeApi
  /** Loaded when the worker starts, so `screen` can answer synchronously; every change is written through. */
  readonly document: ConfirmDocument
  /** The page connection each pending call came on (lost with the worker; a re-offer brings it back). */
  readonly via: Map<string, { readonly forwarding: Forwarding; readonly event: ToolCall }>
}

export class Confirmations extends Context.Service<
  Confirmations,
  {
    /** At a session's creation: which of its tools ask before each run (from the manifest the user approved). */
    readonly remember: (sessionId: SessionId, skills: Skills | undefined) => Effect.Effect<void>
    /** True when it takes `event` from the page (a call to confirm); false passes it on. Synchronous, like delivery. */
    readonly screen: (forwarding: Forwarding, event: SessionEvent) => boolean
    /** From confirm.html; false when the ticket is not a waiting call's. */
    readonly decide: (ticket: string, decision: Decision) => Effect.Effect<boolean>
    /** From `chrome.windows.onRemoved`: a confirmation closed without an answer is Deny. */
    readonly windowClosed: (windowId: number) => Effect.Effect<void>
  }
>()("pedelec/extension/Confirmations") {
  static readonly layer = Layer.effect(
    Confirmations,
    Effect.gen(function* () {
      const chrome = yield* Chrome
      const state: State = { chrome, document: yield* readConfirmations(chrome), via: new Map() }
      return Confirmations.of({
        remember: (sessionId, skills) => remember(state, sessionId, skills),
        screen: (forwarding, event) => screen(state, forwarding, event),
        decide: (ticket, decision) => decide(state, ticket, decision),
        windowClosed: (windowId) => windowClosed(state, windowId)
      })
    })
  )
}

const save = (state: State) => writeConfirmations(state.chrome, state.document)

const remember = (state: State, sessionId: SessionId, skills: Skills | undefined) =>
  Effect.suspend(() => {
    const tools = confirmToolsOf(skills)
    if (Object.keys(tools).length === 0) return Effect.void
    state.document.tools[sessionId] = tools
    return save(state)
  })

const pendingOf = (state: State, toolCallId: string) =>
  Object.values(state.document.pending).find((call) => call.toolCallId === toolCallId)

const screen = (state: State, forwarding: Forwarding, event: SessionEvent): boolean => {
  if (event.type === "tool_result" || event.type === "tool_call_cancelled") {
    const ended = pendingOf(state, event.toolCallId)
    // Timed out, cancelled or answered meanwhile: its window has nothing left to decide.
    if (ended !== undefined) Effect.runFork(settle(state, ended))
    return false
  }
  if (event.type !== "tool_call") return false
  const tool = state.document.tools[event.sessionId]?.[event.tool]
  if (tool === undefined) return false
  if (state.document.allowed[event.sessionId]?.includes(event.tool) === true) return false
  Effect.runFork(hold(state, forwarding, event, tool))
  return true
}

const hashOf = (event: ToolCall) =>
  Effect.promise(() =>
    sha256Hex(
      canonicalJson({ sessionId: event.sessionId, toolCallId: event.toolCallId, tool: event.tool, args: event.args })
    )
  )

/** Opens the window for a new call; a call offered again (after a restart, or to a new tab) keeps its window. */
const hold = Effect.fnUntraced(function* (
  state: State,
  forwarding: Forwarding,
  event: ToolCall,
  tool: { readonly title?: string; readonly description: string }
) {
  const hash = yield* hashOf(event)
  const known = Object.values(state.document.pending).find((call) => call.hash === hash)
  if (known !== undefined) {
    state.via.set(known.ticket, { forwarding, event })
    if (known.decided !== undefined) yield* apply(state, known, known.decided)
    return
  }
  const call: PendingCall = {
    ticket: mintTicket(),
    origin: forwarding.origin,
    sessionId: event.sessionId,
    toolCallId: event.toolCallId,
    tool: event.tool,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    args: event.args,
    hash
  }
  state.via.set(call.ticket, { forwarding, event })
  state.document.pending[call.ticket] = call
  yield* save(state)
  const waiting = { sessionId: event.sessionId, toolCallId: event.toolCallId }
  yield* forward(forwarding, "tool.awaiting_user", waiting).pipe(Effect.ignore, Effect.forkDetach)
  const windowId = yield* Effect.promise(() => state.chrome.openPopup(`confirm.html?ticket=${call.ticket}`))
  const current = state.document.pending[call.ticket]
  if (current === undefined) {
    // Settled while the window was opening (the call timed out, say): the window has nothing to ask.
    if (windowId !== undefined) yield* Effect.promise(() => state.chrome.closeWindow(windowId).catch(() => undefined))
    return
  }
  state.document.pending[call.ticket] = { ...current, ...(windowId === undefined ? {} : { windowId }) }
  yield* save(state)
})

/** The user's answer for the call's page connection: the event passes, or Core hears the refusal. */
const apply = Effect.fnUntraced(function* (state: State, call: PendingCall, decision: Decision) {
  const via = state.via.get(call.ticket)
  if (via === undefined) {
    // The worker restarted and no page has the call again yet: the answer waits for the re-offer.
    state.document.pending[call.ticket] = { ...call, decided: decision }
    return yield* save(state)
  }
  if (decision === "session") {
    const allowed = state.document.allowed[call.sessionId] ?? []
    state.document.allowed[call.sessionId] = [...allowed, call.tool]
  }
  if (decision === "deny") return yield* refuse(state, call, via.forwarding)
  via.forwarding.post({ kind: "event", event: via.event })
  yield* settle(state, call)
})

/**
 * Deny: the window closes at once, and Core hears TOOL_DENIED_BY_USER. Until Core has answered, the call stays
 * decided: if the refusal is lost (the link dropped), Core offers the call again and it is refused again, unasked.
 */
const refuse = Effect.fnUntraced(function* (state: State, call: PendingCall, forwarding: Forwarding) {
  const { code, message, details } = PedelecError.fromCode("TOOL_DENIED_BY_USER", "extension", {
    details: { tool: call.tool }
  })
  // A tool outcome's error is what the agent reads: code, message, details (no wire-only fields).
  const outcome = { ok: false, error: { code, message, ...(details === undefined ? {} : { details }) } }
  const params = { sessionId: call.sessionId, toolCallId: call.toolCallId, outcome }
  const { windowId, ...rest } = call
  const decided: PendingCall = { ...rest, decided: "deny" }
  state.document.pending[call.ticket] = decided
  state.via.delete(call.ticket)
  yield* save(state)
  if (windowId !== undefined) yield* Effect.promise(() => state.chrome.closeWindow(windowId).catch(() => undefined))
  yield* forward(forwarding, "tool.submit_result", params).pipe(
    Effect.andThen(settle(state, decided)),
    Effect.ignore,
    Effect.forkDetach
  )
})

/** Forgets the call and closes its window. */
const settle = (state: State, call: PendingCall) =>
  Effect.gen(function* () {
    delete state.document.pending[call.ticket]
    state.via.delete(call.ticket)
    yield* save(state)
    const { windowId } = call
    if (windowId !== undefined) yield* Effect.promise(() => state.chrome.closeWindow(windowId).catch(() => undefined))
  })

const decide = (state: State, ticket: string, decision: Decision) =>
  Effect.suspend(() => {
    const call = state.document.pending[ticket]
    if (call === undefined || call.decided !== undefined) return Effect.succeed(false)
    return Effect.as(apply(state, call, decision), true)
  })

const windowClosed = (state: State, windowId: number) =>
  Effect.suspend(() => {
    const call = Object.values(state.document.pending).find((pending) => pending.windowId === windowId)
    return call === undefined || call.decided !== undefined ? Effect.void : apply(state, call, "deny")
  })
