/**
 * WebMcp — `createSession({ webmcp: true })`: the session's tools also registered with the browser's own agent
 * through WebMCP (`document.modelContext.registerTool`, the W3C draft Chromium ships behind a flag), where the
 * browser has it; nothing at all where it does not. Each registration lives as long as the session (its signal
 * aborts at the end, which unregisters it); a call runs the page's own handler here, its `ctx.signal` the execute
 * signal (and the session's end). Such calls never pass through Core or the extension: WebMCP leaves confirming a
 * `consequentialHint` call to the browser's agent. Handler resolution and running are the session's (ToolCalls).
 */
import type { ToolManifest, ToolOutcome } from "@pedelec/contracts/Tool"
import type { JsonObject } from "./Tool.ts"

/** The slice of WebMCP's `ModelContext` this uses. */
export interface ModelContextLike {
  registerTool(
    tool: {
      readonly name: string
      readonly title: string | undefined
      readonly description: string
      readonly inputSchema: object
      readonly annotations: { readonly readOnlyHint: boolean; readonly consequentialHint: boolean }
      readonly execute: (input: JsonObject, options?: { readonly signal?: AbortSignal }) => Promise<unknown>
    },
    options: { readonly signal: AbortSignal }
  ): unknown
}

/** Runs one call with the page's handler for `tool` and says how it went (the session's `runHere`). */
export interface RunsHere {
  runHere(tool: string, args: JsonObject, signal: AbortSignal): Promise<ToolOutcome>
}

/** Registers every tool for as long as `life` is not aborted; a registration the browser refuses is skipped. */
export const registerWebMcp = (tools: ReadonlyArray<ToolManifest>, session: RunsHere, life: AbortSignal): void => {
  // `document.modelContext` is the draft's (it dropped `navigator.modelContext`); where it is missing, nothing.
  const context = (globalThis as { document?: { modelContext?: ModelContextLike } }).document?.modelContext
  if (!context?.registerTool) return
  for (const { name, description, argsSchema, annotations: hints = {} } of tools) {
    // The handler's ctx.signal is the caller's; the session's end unregisters the tool, as the draft has it.
    const execute = async (input: JsonObject, options?: { readonly signal?: AbortSignal }) => {
      const outcome = await session.runHere(name, input, options?.signal ?? life)
      if (outcome.ok) return outcome.result
      throw Error(outcome.error.message)
    }
    const annotations = {
      readOnlyHint: !!hints.readOnly,
      consequentialHint: !!(hints.destructive || hints.requiresConfirmation)
    }
    // An undefined title is an absent one to WebIDL. A refusal (a duplicate name, a draft that differs), thrown or
    // rejected, leaves the session working as without WebMCP.
    const tool = { name, title: hints.title, description, inputSchema: argsSchema, annotations, execute }
    Promise.resolve({ signal: life })
      .then((options) => context.registerTool(tool, options))
      .catch(() => undefined)
  }
}
