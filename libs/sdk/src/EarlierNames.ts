/**
 * EarlierNames — the names the earlier SDK (`@kaoruisaac/pedelec`) exported that this one calls otherwise, kept as
 * aliases so a page written for it type-checks after changing only its import. Types only: nothing here exists at
 * run time, and new code should use the names each alias points at. Behaviour kept for those pages (`toolRequestId`,
 * an asset's `name` and `sizeBytes`, `bridgeTimeoutMs`) lives with the behaviour, not here.
 */
import type {
  ArgsArraySchema,
  ArgsBooleanSchema,
  ArgsIntegerSchema,
  ArgsNumberSchema,
  ArgsObjectSchema,
  ArgsOneOfSchema,
  ArgsSchema,
  ArgsSchemaMeta,
  ArgsSchemaNode,
  ArgsStringSchema
} from "@pedelec/contracts/ArgsSchema"
import type { AssetPath, ReadAssetAs } from "@pedelec/contracts/Assets"
import type { Skills, ToolManifest } from "@pedelec/contracts/Tool"
import type { EventContext } from "./session/EventContext.ts"
import type { CreateSessionOptions } from "./tools/Manifest.ts"
import type { JsonObject, ToolCallContext, ToolDefinition } from "./tools/Tool.ts"

/** Earlier name of {@link CreateSessionOptions}. */
export type CreateSessionInput<Tools extends ReadonlyArray<ToolDefinition> = ReadonlyArray<ToolDefinition>> =
  CreateSessionOptions<Tools>
/** Earlier name of `CreateSessionOptions["skills"]`: the guidance and the tools the agent is given. */
export type SkillsInput<Tools extends ReadonlyArray<ToolDefinition> = ReadonlyArray<ToolDefinition>> = NonNullable<
  CreateSessionOptions<Tools>["skills"]
>

/** Earlier name of `ArgsSchemaMeta`. */
export type ToolArgsSchemaMeta = ArgsSchemaMeta
/** Earlier name of `ArgsStringSchema`. */
export type ToolArgsStringSchema = ArgsStringSchema
/** Earlier name of `ArgsNumberSchema`. */
export type ToolArgsNumberSchema = ArgsNumberSchema
/** Earlier name of `ArgsIntegerSchema`. */
export type ToolArgsIntegerSchema = ArgsIntegerSchema
/** Earlier name of `ArgsBooleanSchema`. */
export type ToolArgsBooleanSchema = ArgsBooleanSchema
/** Earlier name of `ArgsArraySchema`. */
export type ToolArgsArraySchema = ArgsArraySchema
/** Earlier name of `ArgsObjectSchema`. */
export type ToolArgsObjectSchema = ArgsObjectSchema
/** Earlier name of `ArgsOneOfSchema`. */
export type ToolArgsOneOfSchema = ArgsOneOfSchema
/** Earlier name of `ArgsSchemaNode`. */
export type ToolArgsSchemaNode = ArgsSchemaNode
/** Earlier name of `ArgsSchema`: a tool's `argsSchema`, whose root is an object. */
export type ToolArgsSchema = ArgsSchema

/** Earlier name of `AssetPath`. A leading `/` (the earlier spelling) is accepted wherever a path is taken. */
export type SandboxAssetPath = AssetPath
/** Earlier name of `ReadAssetAs`. */
export type ReadAssetType = ReadAssetAs

/** A tool as it travels to Core: the definition without its handler. */
export type SerializableToolManifest = ToolManifest
/** The skills as they travel to Core: the guidance and each tool's manifest. */
export type SerializableSkillsManifest = Skills

/** Earlier name of {@link EventContext}, which every callback receives. */
export type PedelecEventContext = EventContext
/** What `onChat` and `onChatDelta` callbacks receive. */
export type ChatEventContext = EventContext
/** What `onStatus` callbacks receive. */
export type StatusEventContext = EventContext
/** What `onError` callbacks receive. */
export type ErrorEventContext = EventContext
/** What `onEnded` callbacks receive. */
export type EndedEventContext = EventContext

/** Earlier name of a named `onTool` handler's type (`ToolHandler`), with its result typed. */
export type ToolSpecificHandler<Args = JsonObject, Result = unknown> = (
  args: Args,
  ctx: ToolCallContext
) => Result | Promise<Result>

/** A JSON value that is not an array or an object. */
export type JsonPrimitive = null | boolean | number | string
