/**
 * manifest-view — draws a manifest (what a site's agent will be told: guidance and tool index) for the approval
 * window and the options page, with what changed since the one approved before when there was one. Browser DOM only;
 * text always goes in as text, never as HTML (the guidance and descriptions come from the page). Stable selectors for
 * tests: `.manifest-change`, `.guidance`, `.tools li[data-tool]`, `.badge.destructive`, `.badge.changed`.
 */
import type { Manifest, ManifestChange, ManifestTool } from "./Manifest.ts"

const node = <K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string) => {
  const element = document.createElement(tag)
  if (className !== "") element.className = className
  if (text !== undefined) element.textContent = text
  return element
}

const seconds = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`)

/** What each annotation means for the user, in words; the ones a user should stop at come first. */
const badgesOf = (tool: ManifestTool): Array<[className: string, text: string]> => {
  const annotations: Readonly<Record<string, unknown>> = tool.annotations ?? {}
  const badges: Array<[string, string]> = []
  if (annotations.destructive === true) badges.push(["destructive", "can change or delete your data"])
  if (annotations.requiresConfirmation === true || annotations.destructive === true)
    badges.push(["confirm", "asks you before each run"])
  if (annotations.readOnly === true) badges.push(["read-only", "read-only"])
  if (annotations.idempotent === true) badges.push(["", "safe to repeat"])
  badges.push(["", `times out after ${seconds(tool.timeoutMs ?? 60_000)}`])
  return badges
}

const toolItem = (tool: ManifestTool, mark: "new" | "changed" | undefined) => {
  const li = node("li", "")
  li.dataset.tool = tool.name
  const head = node("div", "tool-head")
  head.append(node("code", "", tool.name))
  const title = tool.annotations?.title
  if (title !== undefined) head.append(node("span", "tool-title", title))
  if (mark !== undefined) head.append(node("span", "badge changed", mark))
  li.append(head, node("p", "tool-description", tool.description))
  const badges = node("p", "badges")
  for (const [className, text] of badgesOf(tool)) badges.append(node("span", `badge ${className}`.trim(), text))
  li.append(badges)
  return li
}

const changeSummary = (change: ManifestChange) => {
  const box = node("div", "manifest-change")
  box.append(node("strong", "", "Changed since you last approved this site:"))
  const list = node("ul", "facts")
  const say = (text: string) => list.append(node("li", "", text))
  if (change.guidanceChanged) say("The guidance (below) is different.")
  if (change.added.length > 0) say(`New tools: ${change.added.join(", ")}.`)
  if (change.removed.length > 0) say(`Removed tools: ${change.removed.join(", ")}.`)
  if (change.changed.length > 0) say(`Tools described differently: ${change.changed.join(", ")}.`)
  box.append(list)
  return box
}

/** The manifest as a block of elements; `change` marks new and changed tools and says what changed. */
export const manifestBlock = (manifest: Manifest, change?: ManifestChange): HTMLElement => {
  const block = node("section", "manifest")
  if (change !== undefined) block.append(changeSummary(change))
  block.append(node("h2", "", "Guidance the agent gets"))
  const guidance = manifest.guidance.trim()
  block.append(guidance === "" ? node("p", "empty", "None.") : node("pre", "guidance", guidance))
  block.append(node("h2", "", `Tools the agent can call on this page (${manifest.tools.length})`))
  if (manifest.tools.length === 0) block.append(node("p", "empty", "None."))
  const tools = node("ul", "tools")
  for (const tool of manifest.tools) {
    const mark = change?.added.includes(tool.name) ? "new" : change?.changed.includes(tool.name) ? "changed" : undefined
    tools.append(toolItem(tool, mark))
  }
  block.append(tools)
  return block
}
