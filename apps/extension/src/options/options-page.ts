/**
 * The options page's script (options.html, also the action popup): approved origins with Revoke, each origin's
 * granted workspace paths with Revoke, the manifest its sessions were approved with (manifest-view), its policy
 * (policy-form, saved through the worker into Core and the extension), and Core's live sessions per origin. It only asks the worker (which owns the
 * grants and the native ports) and shows what it answers, decoded with Schema. Selectors are stable for tests:
 * `#origins li[data-origin]`, `button.revoke-origin[data-origin]`, `button.revoke-path[data-origin][data-path]`,
 * `#origins li[data-origin] details.manifest-details`, `#sessions li[data-session-id]`, `#sessions-error`, `#status`.
 */
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { SessionInfo } from "@pedelec/contracts/Session"
import { policySummary, type SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { ApprovedManifest } from "../approval/Manifest.ts"
import { manifestBlock } from "../approval/manifest-view.ts"
import { type OptionsState, OptionsState as OptionsStateSchema, RevokeResult, UiResponse } from "../ui/UiMessages.ts"
import { policyForm } from "./policy-form.ts"

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const origins = element<HTMLUListElement>("origins")
const sessions = element<HTMLUListElement>("sessions")
const sessionsError = element<HTMLParagraphElement>("sessions-error")
const status = element<HTMLParagraphElement>("status")
// The release the user runs, for bug reports: the manifest's version, which the release script keeps in step.
element("version").textContent = chrome.runtime.getManifest().version

const decodeResponse = Schema.decodeUnknownExit(UiResponse)

/** Sends one request to the worker; the result decoded with `schema`, or an Error whose message says what to do. */
const ask = async <A>(schema: Schema.Decoder<A>, request: unknown): Promise<A> => {
  const answer = decodeResponse(await chrome.runtime.sendMessage(request))
  if (Exit.isFailure(answer)) throw new Error("The extension sent an answer this page cannot read; reload it.")
  if (!answer.value.ok) throw new Error(answer.value.message)
  const result = Schema.decodeUnknownExit(schema)(answer.value.result)
  if (Exit.isFailure(result)) throw new Error("The extension sent an answer this page cannot read; reload it.")
  return result.value
}

/** What the user can do about a Core error, in words. */
const explainCoreError = (error: PedelecErrorWire): string => {
  const browserMessage = typeof error.details?.browserMessage === "string" ? ` (${error.details.browserMessage})` : ""
  switch (error.code) {
    case "NATIVE_HOST_UNAVAILABLE":
      return `Pedelec's desktop runtime is not reachable${browserMessage}: install the native host with \`pedelec-cli install-native-host\` (or install the desktop app), then refresh.`
    case "NATIVE_CONNECTION_CLOSED":
      return `The connection to Pedelec's native host closed${browserMessage}. Refresh to try again.`
    case "CORE_RUNTIME_UNAVAILABLE":
      return `Pedelec's desktop runtime is not running and could not be started: start the desktop app (or \`pedelec-core\`), then refresh. ${error.message}`
    default:
      return error.message
  }
}

const button = (label: string, className: string, data: Record<string, string>, onClick: () => void) => {
  const node = document.createElement("button")
  node.type = "button"
  node.textContent = label
  node.className = className
  for (const [key, value] of Object.entries(data)) node.dataset[key] = value
  node.addEventListener("click", onClick)
  return node
}

const row = (text: HTMLElement, action: HTMLElement) => {
  const div = document.createElement("div")
  div.className = "row"
  div.append(text, action)
  return div
}

const code = (text: string) => {
  const node = document.createElement("code")
  node.textContent = text
  return node
}

const sessionLine = (session: SessionInfo) => {
  const li = document.createElement("li")
  li.dataset.sessionId = session.sessionId
  li.dataset.origin = session.origin
  const model = session.model === null ? "" : ` · ${session.model}`
  const text = document.createElement("span")
  text.append(code(session.origin), ` ${session.provider}${model} · ${session.status} · `, code(session.workspace.path))
  li.append(text)
  return li
}

/** The approved manifest, folded: a site's guidance and tools can be long. */
const manifestDetails = (approved: ApprovedManifest) => {
  const details = document.createElement("details")
  details.className = "manifest-details"
  const summary = document.createElement("summary")
  const when = new Date(approved.approvedAt).toLocaleString()
  const tools = approved.manifest.tools.length
  summary.textContent = `What its agent is told: guidance and ${tools} tool${tools === 1 ? "" : "s"} (approved ${when})`
  details.append(summary, manifestBlock(approved.manifest))
  return details
}

/** The site's policy, folded under its summary in words. */
const policyDetails = (origin: string, policy: SitePolicy) => {
  const details = document.createElement("details")
  details.className = "policy-details"
  const summary = document.createElement("summary")
  summary.textContent = `Policy: ${policySummary(policy)}`
  details.append(
    summary,
    policyForm(
      origin,
      policy,
      (next) => void savePolicy(origin, next),
      (message) => report(message, true)
    )
  )
  return details
}

const render = (state: OptionsState) => {
  origins.replaceChildren()
  element("no-origins").hidden = state.origins.length > 0
  for (const { origin, paths, openPorts, manifest, policy } of state.origins) {
    const li = document.createElement("li")
    li.dataset.origin = origin
    const label = document.createElement("span")
    label.append(code(origin), openPorts > 0 ? ` · ${openPorts} open tab${openPorts === 1 ? "" : "s"}` : "")
    li.append(
      row(
        label,
        button("Revoke", "revoke-origin", { origin }, () => void revokeOrigin(origin))
      )
    )
    if (paths.length > 0) {
      const list = document.createElement("ul")
      list.className = "paths"
      for (const path of paths) {
        const item = document.createElement("li")
        item.dataset.path = path
        item.append(
          row(
            code(path),
            button("Revoke", "revoke-path", { origin, path }, () => void revokePath(origin, path))
          )
        )
        list.append(item)
      }
      li.append(list)
    }
    li.append(policyDetails(origin, policy))
    if (manifest !== undefined) li.append(manifestDetails(manifest))
    origins.append(li)
  }
  sessions.replaceChildren()
  sessionsError.hidden = state.sessions.ok
  if (!state.sessions.ok) sessionsError.textContent = explainCoreError(state.sessions.error)
  const list = state.sessions.ok ? [...state.sessions.sessions] : []
  list.sort((a, b) => a.origin.localeCompare(b.origin) || a.createdAt - b.createdAt)
  element("no-sessions").hidden = !state.sessions.ok || list.length > 0
  sessions.append(...list.map(sessionLine))
}

const report = (text: string, isError = false) => {
  status.textContent = text
  status.className = isError ? "error" : ""
}

const refresh = async () => {
  try {
    render(await ask(OptionsStateSchema, { kind: "options.state" }))
  } catch (error) {
    report(error instanceof Error ? error.message : String(error), true)
  }
}

const revokeOrigin = async (origin: string) => {
  try {
    const outcome = await ask(RevokeResult, { kind: "origin.revoke", origin })
    const ended = outcome.ended === null ? "" : ` ${outcome.ended} session${outcome.ended === 1 ? "" : "s"} ended.`
    report(
      outcome.coreError === undefined
        ? `Revoked ${origin}.${ended}`
        : `Revoked ${origin}, but its sessions could not be ended now: ${explainCoreError(outcome.coreError)}`,
      outcome.coreError !== undefined
    )
  } catch (error) {
    report(error instanceof Error ? error.message : String(error), true)
  }
  await refresh()
}

const savePolicy = async (origin: string, policy: SitePolicy) => {
  try {
    const saved = await ask(Schema.Unknown, { kind: "origin.set_policy", origin, policy })
    report(saved === undefined ? "" : `Saved the policy of ${origin}.`)
  } catch (error) {
    report(error instanceof Error ? error.message : String(error), true)
  }
  await refresh()
}

const revokePath = async (origin: string, path: string) => {
  try {
    await ask(Schema.Unknown, { kind: "path.revoke", origin, path })
    report(`${origin} may no longer use ${path}.`)
  } catch (error) {
    report(error instanceof Error ? error.message : String(error), true)
  }
  await refresh()
}

element("refresh").addEventListener("click", () => void refresh())
void refresh()
