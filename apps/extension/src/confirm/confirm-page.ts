/**
 * The confirmation window's script (confirm.html): shows the call its ticket names, read from
 * `chrome.storage.session` (confirm/ConfirmState: the site, the tool's title and description from the approved
 * manifest, the exact arguments readably and as JSON), and sends the user's answer back with the ticket. The allow
 * buttons wait like the approval window's (ArmDelay); closing the window is Deny (the worker sees it close).
 * Element ids are stable for tests: `#site`, `#tool-name`, `#args`, `#args-json`, `#allow-once`, `#allow-session`,
 * `#deny`, `#status`.
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { armAfterDelay } from "../ui/ArmDelay.ts"
import { UiResponse } from "../ui/UiMessages.ts"
import { type Decision, pendingCallOf } from "./ConfirmState.ts"

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const allowOnce = element<HTMLButtonElement>("allow-once")
const allowSession = element<HTMLButtonElement>("allow-session")
const deny = element<HTMLButtonElement>("deny")
const status = element<HTMLParagraphElement>("status")
const ticket = new URLSearchParams(location.search).get("ticket") ?? ""

/** One argument as a person reads it: strings as they are, everything else as compact JSON. */
const readable = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 1))

const showArgs = (args: unknown) => {
  const list = element<HTMLDListElement>("args")
  const entries = args !== null && typeof args === "object" && !Array.isArray(args) ? Object.entries(args) : []
  if (entries.length === 0) list.append(Object.assign(document.createElement("dd"), { textContent: "(none)" }))
  for (const [name, value] of entries) {
    const dt = Object.assign(document.createElement("dt"), { textContent: name })
    const dd = Object.assign(document.createElement("dd"), { textContent: readable(value) })
    dd.dataset.arg = name
    list.append(dt, dd)
  }
  element("args-json").textContent = JSON.stringify(args, null, 2)
}

const show = async () => {
  const call = await pendingCallOf(ticket)
  if (call === undefined) {
    status.textContent =
      "This tool call is no longer waiting (it was answered, timed out or cancelled). Close this window."
    status.className = "error"
    for (const button of [allowOnce, allowSession, deny]) button.hidden = true
    return
  }
  element("site").textContent = call.origin
  element("tool-title").textContent = call.title ?? call.tool
  element("tool-name").textContent = call.title === undefined ? "" : call.tool
  element("tool-description").textContent = call.description
  showArgs(call.args)
}

const decodeResponse = Schema.decodeUnknownExit(UiResponse)

const answer = async (decision: Decision) => {
  for (const button of [allowOnce, allowSession, deny]) button.disabled = true
  const reply = decodeResponse(await chrome.runtime.sendMessage({ kind: "confirm.decide", ticket, decision }))
  if (Exit.isSuccess(reply) && reply.value.ok) return window.close()
  status.textContent =
    Exit.isSuccess(reply) && !reply.value.ok
      ? reply.value.message
      : "The extension sent an answer this window cannot read; close it (that denies the call)."
  status.className = "error"
}

armAfterDelay([allowOnce, allowSession])
allowOnce.addEventListener("click", () => void answer("once"))
allowSession.addEventListener("click", () => void answer("session"))
deny.addEventListener("click", () => void answer("deny"))
void show()
