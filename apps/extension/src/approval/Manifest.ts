/**
 * Manifest — what a session's agent will be told, as the user approves it (SPEC §4): the page's guidance and its tool
 * index (each tool's name, description, annotations and timeout: what Core's prompt gives the agent; argument schemas
 * are not shown to the agent, so they are not part of it), its digest, and what changed from the manifest approved
 * before. Pure data and SHA-256; storing approved manifests is Grants', asking is Approvals'.
 */
import { type Skills, ToolAnnotations, ToolName, ToolTimeoutMs } from "@pedelec/contracts/Tool"
import * as Schema from "effect/Schema"
import { canonicalJson, sha256Hex } from "./Digest.ts"

export const ManifestTool = Schema.Struct({
  name: ToolName,
  description: Schema.String,
  annotations: Schema.optionalKey(ToolAnnotations),
  timeoutMs: Schema.optionalKey(ToolTimeoutMs)
})
export type ManifestTool = typeof ManifestTool.Type

export const Manifest = Schema.Struct({ guidance: Schema.String, tools: Schema.Array(ManifestTool) })
export type Manifest = typeof Manifest.Type

/** A manifest the user approved, with the digest a later session's manifest is compared by. */
export const ApprovedManifest = Schema.Struct({ digest: Schema.String, manifest: Manifest, approvedAt: Schema.Number })
export type ApprovedManifest = typeof ApprovedManifest.Type

/** What differs between the approved manifest and the one a session brings. */
export const ManifestChange = Schema.Struct({
  guidanceChanged: Schema.Boolean,
  added: Schema.Array(Schema.String),
  removed: Schema.Array(Schema.String),
  changed: Schema.Array(Schema.String)
})
export type ManifestChange = typeof ManifestChange.Type

/** Where the approval window finds the manifest it shows (ManifestView), in `chrome.storage.session`. */
export const MANIFEST_VIEW_KEY = "approvalManifest"

/** The manifest an approval window shows, and what changed since the one approved before, if there was one. */
export const ManifestView = Schema.Struct({
  ticket: Schema.String,
  manifest: Manifest,
  change: Schema.optionalKey(ManifestChange)
})
export type ManifestView = typeof ManifestView.Type

/** The session's manifest from its skills: tools in name order, each with only what the agent is shown. */
export const manifestOf = (skills: Skills | undefined): Manifest => ({
  guidance: skills?.guidance ?? "",
  tools: [...(skills?.tools ?? [])]
    .map(({ name, description, annotations, timeoutMs }) => ({
      name,
      description,
      ...(annotations === undefined ? {} : { annotations }),
      ...(timeoutMs === undefined ? {} : { timeoutMs })
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
})

/** The manifest's SHA-256, hex, over its canonical JSON (the same however the page ordered its keys). */
export const digestOf = (manifest: Manifest): Promise<string> => sha256Hex(canonicalJson(manifest))

export const changeBetween = (before: Manifest, after: Manifest): ManifestChange => {
  const old = new Map(before.tools.map((tool) => [tool.name, canonicalJson(tool)]))
  const now = new Map(after.tools.map((tool) => [tool.name, canonicalJson(tool)]))
  return {
    guidanceChanged: before.guidance !== after.guidance,
    added: [...now.keys()].filter((name) => !old.has(name)),
    removed: [...old.keys()].filter((name) => !now.has(name)),
    changed: [...now].filter(([name, text]) => old.has(name) && old.get(name) !== text).map(([name]) => name)
  }
}
