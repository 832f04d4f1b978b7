/**
 * McpTools — the session's page tools as MCP tools on the MCP SDK's `Server`: each spec becomes an MCP `Tool`
 * (name, description, the page's argsSchema as its JSON inputSchema, the manifest's hints as MCP annotations), and
 * `tools/call` is one SessionTools call. The outcome is a text result: the page's result as JSON, or, for a result
 * file, a page failure or a Core refusal, the very line `pedelec-cli tool-call` prints (`isError` unless `ok`), so an
 * agent reads the same coded error and what-to-do message either way. A client that asked for progress hears when a
 * call waits on the user; `notifications/cancelled` aborts the call's signal (the SDK's), which cancels it in Core.
 * A name the session lacks goes to Core too, whose TOOL_NOT_FOUND says what to do. It does not reach Core
 * (SessionTools).
 */

import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
  type ToolAnnotations
} from "@modelcontextprotocol/sdk/types.js"
import type { ToolSpec } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { isRecord } from "../Unknown.ts"
import type { SessionTools } from "./SessionTools.ts"

type Hints = { -readonly [K in keyof ToolAnnotations]?: ToolAnnotations[K] }

/** The hints the page declared, by MCP's names; an absent one is left out, which MCP reads as its default. */
export const hintsOf = (annotations: ToolSpec["annotations"]): ToolAnnotations | undefined => {
  if (annotations === undefined) return undefined
  const hints: Hints = {}
  if (annotations.title !== undefined) hints.title = annotations.title
  if (annotations.readOnly !== undefined) hints.readOnlyHint = annotations.readOnly
  if (annotations.destructive !== undefined) hints.destructiveHint = annotations.destructive
  if (annotations.idempotent !== undefined) hints.idempotentHint = annotations.idempotent
  return Object.keys(hints).length === 0 ? undefined : hints
}

export const toMcpTool = (spec: ToolSpec): Tool => {
  const annotations = hintsOf(spec.annotations)
  return {
    name: spec.name,
    ...(spec.annotations?.title === undefined ? {} : { title: spec.annotations.title }),
    description: spec.description,
    inputSchema: spec.argsSchema as unknown as Tool["inputSchema"],
    ...(annotations === undefined ? {} : { annotations })
  }
}

/**
 * What the agent reads back: the result itself when it came inline as a JSON object, else the line tool-call prints.
 * Never JSON that is not an object: gemini 0.61 takes a text block that parses as JSON for the call's
 * structuredContent, which MCP says is an object, and then refuses the whole answer ("expected record").
 */
export const toResult = (output: CliOutput): CallToolResult => {
  const text =
    output.ok && "result" in output && isRecord(output.result) ? JSON.stringify(output.result) : JSON.stringify(output)
  return { content: [{ type: "text", text }], ...(output.ok ? {} : { isError: true }) }
}

export const WAITING_ON_USER = "waiting on the user: the page asked a person, and the call has no timeout meanwhile"

type ProgressToken = string | number

const progressTokenOf = (meta: unknown): ProgressToken | undefined => {
  const token = isRecord(meta) ? meta.progressToken : undefined
  return typeof token === "string" || typeof token === "number" ? token : undefined
}

/** Answers `tools/list` from the specs read at start and `tools/call` through Core, any number at a time. */
export const serveTools = (server: Server, session: SessionTools): void => {
  const tools = session.specs.map(toMcpTool)
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = progressTokenOf(request.params._meta)
    // Only a client that asked for progress hears of the wait; the shell's `tool-call` just waits.
    const onWaitingOnUser =
      progressToken === undefined
        ? undefined
        : () =>
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress: 0, message: WAITING_ON_USER }
              })
              .catch(() => undefined)
    const args = request.params.arguments ?? {}
    const output = await session.call(request.params.name, args, {
      signal: extra.signal,
      ...(onWaitingOnUser === undefined ? {} : { onWaitingOnUser })
    })
    return toResult(output)
  })
}
