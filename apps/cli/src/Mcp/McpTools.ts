/**
 * McpTools — the session's page tools as MCP tools on Effect's `McpServer`: each spec becomes a raw MCP `Tool`
 * (name, description, the page's argsSchema as its JSON inputSchema, the manifest's hints as MCP annotations) whose
 * handle is one SessionTools call. The outcome is a text result: the page's result as JSON, or, for a result file,
 * a page failure or a Core refusal, the very line `pedelec-cli tool-call` prints (`isError` unless `ok`), so an
 * agent reads the same coded error and what-to-do message either way; a client that asked for progress hears when
 * a call waits on the user. It does not reach Core (SessionTools).
 */

import type { ToolSpec } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import * as McpSchema from "effect/ai/McpSchema"
import * as McpServer from "effect/ai/McpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SessionTools } from "./SessionTools.ts"

type Hints = { -readonly [K in keyof McpSchema.ToolAnnotations]?: McpSchema.ToolAnnotations[K] }

/**
 * The hints the page declared, by MCP's names. Effect's `Tool` fills MCP's defaults in for the others when it is
 * built (destructive and open world true, read-only and idempotent false), which is what an absent hint means.
 */
export const hintsOf = (annotations: ToolSpec["annotations"]): McpSchema.ToolAnnotations | undefined => {
  if (annotations === undefined) return undefined
  const hints: Hints = {}
  if (annotations.title !== undefined) hints.title = annotations.title
  if (annotations.readOnly !== undefined) hints.readOnlyHint = annotations.readOnly
  if (annotations.destructive !== undefined) hints.destructiveHint = annotations.destructive
  if (annotations.idempotent !== undefined) hints.idempotentHint = annotations.idempotent
  return Object.keys(hints).length === 0 ? undefined : (hints as McpSchema.ToolAnnotations)
}

export const toMcpTool = (spec: ToolSpec): McpSchema.Tool => {
  const annotations = hintsOf(spec.annotations)
  return new McpSchema.Tool({
    name: spec.name,
    description: spec.description,
    inputSchema: spec.argsSchema as unknown as McpSchema.ToolJson,
    ...(annotations === undefined ? {} : { annotations })
  })
}

const isJsonObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * What the agent reads back: the result itself when it came inline as a JSON object, else the line tool-call prints.
 * Never JSON that is not an object: gemini 0.61 takes a text block that parses as JSON for the call's
 * structuredContent, which MCP says is an object, and then refuses the whole answer ("expected record").
 */
export const toResult = (output: CliOutput): McpSchema.CallToolResult => {
  const text =
    output.ok && "result" in output && isJsonObject(output.result)
      ? JSON.stringify(output.result)
      : JSON.stringify(output)
  return new McpSchema.CallToolResult({
    content: [{ type: "text", text }],
    ...(output.ok ? {} : { isError: true })
  })
}

export const WAITING_ON_USER = "waiting on the user: the page asked a person, and the call has no timeout meanwhile"

/**
 * For a request whose client asked for progress (`_meta.progressToken`), the notification that says the call waits
 * on the user; none otherwise. The shell's `tool-call` just waits.
 */
const waitingNotice = (server: McpServer.McpServer["Service"]) =>
  Effect.map(McpSchema.McpRequestContext, ({ requestMetadata }) => {
    const progressToken = requestMetadata?.progressToken
    if (typeof progressToken !== "string" && typeof progressToken !== "number") return undefined
    return server.notifications["notifications/progress"]({
      progressToken,
      progress: 0,
      message: WAITING_ON_USER
    }).pipe(Effect.ignore)
  })

/** Registers every tool of the session before the server reads its first request. */
export const McpTools = Layer.effectDiscard(
  Effect.gen(function* () {
    const server = yield* McpServer.McpServer
    const session = yield* SessionTools
    yield* Effect.forEach(
      session.specs,
      (spec) =>
        server.addTool({
          tool: toMcpTool(spec),
          annotations: Context.empty(),
          handle: (args: Readonly<Record<string, unknown>>) =>
            Effect.flatMap(waitingNotice(server), (notice) => session.call(spec.name, args, notice)).pipe(
              Effect.map(toResult)
            )
        }),
      { discard: true }
    )
  })
)
