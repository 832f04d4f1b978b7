/**
 * @pedelec/sdk — what a page imports to work with a local AI coding agent through the Pedelec extension. A curated
 * list: everything here is public API, and every name the earlier SDK exported is here too (EarlierNames.ts holds
 * the aliases). Effect users import `@pedelec/sdk/effect`.
 */
export type {
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
export type { AssetInfo, AssetPath, ReadAssetAs } from "@pedelec/contracts/Assets"
export type { ErrorCode } from "@pedelec/contracts/ErrorCode"
export { isPedelecError, PedelecError } from "@pedelec/contracts/PedelecError"
export type { EffortLevel, ProviderCode, ProviderInfo } from "@pedelec/contracts/Provider"
export type { WorkspaceInfo } from "@pedelec/contracts/Session"
export type { PublicSettings as PedelecSettings } from "@pedelec/contracts/Settings"
export type { ToolAnnotations } from "@pedelec/contracts/Tool"
export { PEDELEC_EXTENSION_ID } from "@pedelec/contracts/Wire"
export type {
  ChatEventContext,
  CreateSessionInput,
  EndedEventContext,
  ErrorEventContext,
  JsonPrimitive,
  PedelecEventContext,
  ReadAssetType,
  SandboxAssetPath,
  SerializableSkillsManifest,
  SerializableToolManifest,
  SkillsInput,
  StatusEventContext,
  ToolArgsArraySchema,
  ToolArgsBooleanSchema,
  ToolArgsIntegerSchema,
  ToolArgsNumberSchema,
  ToolArgsObjectSchema,
  ToolArgsOneOfSchema,
  ToolArgsSchema,
  ToolArgsSchemaMeta,
  ToolArgsSchemaNode,
  ToolArgsStringSchema,
  ToolSpecificHandler
} from "./EarlierNames.ts"
export {
  type ApprovalStatus,
  Pedelec,
  type PedelecAvailability,
  type PedelecOptions,
  type ResumeOptions
} from "./Pedelec.ts"
export type { SandboxAsset } from "./session/Assets.ts"
export type {
  EventContext,
  PedelecSessionStatus,
  TurnCompletion,
  TurnResult
} from "./session/EventContext.ts"
export { PedelecSession, type SendTextOptions } from "./session/PedelecSession.ts"
export type { CreateSessionOptions } from "./tools/Manifest.ts"
export {
  defineTool,
  type GenericToolHandler,
  type JsonObject,
  type JsonValue,
  type ToolCallContext,
  type ToolDefinition,
  type ToolHandler,
  type ToolNameOf
} from "./tools/Tool.ts"
