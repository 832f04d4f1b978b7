/**
 * Tools as a page author writes them: `defineTool` keeps the literal name, so a session created with those tools
 * knows its tool names and `onTool("typo", …)` does not compile. What travels to Core is the manifest without the
 * handler (see Manifest.ts); running a handler is ToolRunner's.
 */
import type { ArgsSchema } from "@pedelec/contracts/ArgsSchema"
import type { ToolAnnotations } from "@pedelec/contracts/Tool"
import type { EventContext } from "../session/EventContext.ts"

/** A plain JSON value: what tool arguments are and what a handler's result must be. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }
/** A JSON object: a tool's arguments. */
export type JsonObject = { readonly [key: string]: JsonValue }

/** What a tool handler receives beside the arguments. */
export interface ToolCallContext extends EventContext {
  /** The turn in which the agent called the tool. */
  readonly turnId: string
  /** The call's id; Core accepts one result per id. */
  readonly toolCallId: string
  /** The earlier SDK's name for `toolCallId`. */
  readonly toolRequestId: string
  /** The tool's name. */
  readonly tool: string
  /** Aborted when the call times out, the turn is cancelled, the session ends or the agent stops waiting. */
  readonly signal: AbortSignal
  /** Keeps a long call alive: each call resets the tool's timeout, up to 10 times `timeoutMs` in all. */
  progress(message?: string): void
  /**
   * Says a person is answering (a modal, a form): the tool's timeout is paused until the handler returns or the call
   * is cancelled, up to 30 minutes from the call. Later `progress` calls change nothing; calling it twice is harmless.
   */
  awaitingUser(): void
}

/** A tool the agent may call and the page runs; make one with `defineTool` to keep its name a literal type. */
export interface ToolDefinition<Name extends string = string, Args = JsonObject, Result = unknown> {
  /** `^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$`, unique in the session. */
  readonly name: Name
  /** What the tool does, for the agent's tool index (1–4096 characters). */
  readonly description: string
  /** The arguments, in the JSON Schema subset Core enforces before the handler runs. */
  readonly argsSchema: ArgsSchema
  /** 1 s … 30 min; default 60 s. */
  readonly timeoutMs?: number | undefined
  /**
   * Hints for the agent (`readOnly`, `destructive`, `idempotent`, `title`). A `destructive` or `requiresConfirmation`
   * call is confirmed by the user in the extension's window before the handler runs.
   */
  readonly annotations?: ToolAnnotations | undefined
  /** Method syntax on purpose: tools with different argument types must fit one `ReadonlyArray<ToolDefinition>`. */
  handler?(args: Args, ctx: ToolCallContext): Result | Promise<Result>
}

/** Identity at run time; it exists so the tool's name stays a literal type. */
export const defineTool = <const Name extends string, Args = JsonObject, Result = unknown>(
  tool: ToolDefinition<Name, Args, Result>
): ToolDefinition<Name, Args, Result> => tool

/** The union of the names of a list of tools. */
export type ToolNameOf<Tools extends ReadonlyArray<ToolDefinition>> = Tools[number]["name"]

/** A handler for one tool: its return value (plain JSON) goes to the agent, a throw becomes `TOOL_HANDLER_ERROR`. */
export type ToolHandler<Args = JsonObject> = (args: Args, ctx: ToolCallContext) => unknown
/** The fallback of `onTool(handler)`: called with the tool's name for every tool without a handler of its own. */
export type GenericToolHandler<Name extends string = string> = (
  tool: Name,
  args: JsonObject,
  ctx: ToolCallContext
) => unknown
