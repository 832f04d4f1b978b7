/**
 * The approval window's script (approval.html). Shows what the worker put in the URL (origin, provider, workspace
 * path) and, for a session, the manifest its agent will be told (from `chrome.storage.session`, under this window's
 * ticket: manifest-view draws it), and sends the user's decision back with the ticket. Approve stays disabled until the window has been visible
 * for APPROVE_DELAY_MS, counted again each time it comes to the front, so a click meant for the page cannot land on
 * it (click-jacking). Closing the window without a decision counts as Reject (the worker sees it close).
 * Element ids are stable for tests: `#approve`, `#reject`, `#origin`, `#details`, `#manifest`, `#status`.
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { armAfterDelay } from "../ui/ArmDelay.ts"
import { UiResponse } from "../ui/UiMessages.ts"
import { MANIFEST_VIEW_KEY, ManifestView } from "./Manifest.ts"
import { manifestBlock } from "./manifest-view.ts"

const query = new URLSearchParams(location.search)
const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const approve = element<HTMLButtonElement>("approve")
const reject = element<HTMLButtonElement>("reject")
const status = element<HTMLParagraphElement>("status")

const askOrigin = query.get("askOrigin") === "true"
const path = query.get("path")
const method = query.get("method")

const ticket = query.get("ticket") ?? ""

element("origin").textContent = query.get("origin") ?? "(unknown site)"
const title = (view: ManifestView | undefined) =>
  askOrigin
    ? "Allow this site to use Pedelec?"
    : path !== null
      ? "Allow this site to use a folder on this computer?"
      : view?.change !== undefined
        ? "This site changed what its agent will be told"
        : "Allow what this site's agent will be told?"
element("title").textContent = title(undefined)

/** The manifest this window's ask carries, if it is this window's (a stale one from another ask is not shown). */
const showManifest = async () => {
  const read = (await chrome.storage.session.get(MANIFEST_VIEW_KEY))[MANIFEST_VIEW_KEY]
  const decoded = Schema.decodeUnknownOption(ManifestView)(read)
  if (decoded._tag === "None" || decoded.value.ticket !== ticket) return
  const stored = decoded.value
  element("title").textContent = title(stored)
  element("manifest").replaceChildren(manifestBlock(stored.manifest, stored.change))
}
void showManifest()

const details = element<HTMLDListElement>("details")
const detail = (term: string, value: string | null, id: string) => {
  if (value === null) return
  const dt = document.createElement("dt")
  dt.textContent = term
  const dd = document.createElement("dd")
  dd.id = id
  dd.textContent = value
  details.append(dt, dd)
}
/** What the call that asked wants first; approving lets the site start agent sessions whichever it was. */
const ASKS: Readonly<Record<string, string>> = {
  "session.create": "start an agent session",
  "session.resume": "continue an existing session",
  "providers.list": "use Pedelec, starting with which agent CLIs you have installed",
  "settings.get": "use Pedelec, starting with your default provider and models",
  "extension.request_approval": "use Pedelec: start agent sessions on this computer"
}
detail("Asks to", ASKS[method ?? ""] ?? "start an agent session", "asks")
if (method === "session.create") detail("Provider", query.get("provider") ?? "your default provider", "provider")
detail("Model", query.get("model"), "model")
detail("Session", query.get("sessionId"), "session")
detail("Workspace folder", path, "path")
if (path !== null) {
  element("warning").textContent =
    "The agent will work directly in this folder and can read and change every file in it. Approve only if you trust this site with it."
}

armAfterDelay([approve])

const decodeResponse = Schema.decodeUnknownExit(UiResponse)

const decide = async (approved: boolean) => {
  approve.disabled = true
  reject.disabled = true
  const answer = decodeResponse(
    await chrome.runtime.sendMessage({
      kind: "approval.decide",
      ticket,
      approve: approved
    })
  )
  if (Exit.isSuccess(answer) && answer.value.ok) return window.close()
  status.textContent = Exit.isSuccess(answer)
    ? answer.value.ok
      ? ""
      : answer.value.message
    : "The extension sent an answer this window cannot read; close it and retry from the page."
  status.className = "error"
}

approve.addEventListener("click", () => void decide(true))
reject.addEventListener("click", () => void decide(false))
