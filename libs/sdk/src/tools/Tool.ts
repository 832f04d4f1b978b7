/**
 * Tools as a page author writes them: `defineTool` keeps the literal name, so a session created with those tools
 * knows its tool names and `onTool("typo", …)` does not compile. What travels to Core is the manifest without the
 * handler (see Manifest.ts); running a handler is ToolRunner's.
 */
import type { ArgsSchema } from "@pedelec/contracts/ArgsSchema"
import type { ToolAnnotations } from "@pedelec/contracts/Tool"
import type { EventContext } from "../session/EventContext.ts"

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }
export type JsonObject = { readonly [key: string]: JsonValue }

export interface ToolCallContext extends EventContext {
  readonly turnId: string
  readonly toolCallId: string
  readonly tool: string
  /** Aborted when the call times out, the turn is cancelled, the session ends or the agent stops waiting. */
  readonly signal: AbortSignal
  /** Keeps a long call alive: each call resets the tool's timeout, up to 10 times `timeoutMs` in all. */
  progress(message?: string): void
}

export interface ToolDefinition<Name extends string = string, Args = JsonObject, Result = unknown> {
  readonly name: Name
  readonly description: string
  readonly argsSchema: ArgsSchema
  /** 1 s … 30 min; default 60 s. */
  readonly timeoutMs?: number
  readonly annotations?: ToolAnnotations
  /** Method syntax on purpose: tools with different argument types must fit one `ReadonlyArray<ToolDefinition>`. */
  handler?(args: Args, ctx: ToolCallContext): Result | Promise<Result>
}

/** Identity at run time; it exists so the tool's name stays a literal type. */
export const defineTool = <const Name extends string, Args = JsonObject, Result = unknown>(
  tool: ToolDefinition<Name, Args, Result>
): ToolDefinition<Name, Args, Result> => tool

export type ToolNameOf<Tools extends ReadonlyArray<ToolDefinition>> = Tools[number]["name"]

export type ToolHandler<Args = JsonObject> = (args: Args, ctx: ToolCallContext) => unknown
export type GenericToolHandler<Name extends string = string> = (
  tool: Name,
  args: JsonObject,
  ctx: ToolCallContext
) => unknown
