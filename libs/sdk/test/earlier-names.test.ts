/**
 * Every name the earlier SDK (`@kaoruisaac/pedelec` 0.1.23, research/anchor-pedelec.md §1.1) exported, imported from
 * this one: its 36 types (a missing one fails the type check of this file) and its runtime exports (a missing one
 * fails here), so a page's import line keeps compiling when it switches packages.
 */
import { describe, expect, it } from "vitest"
import type {
  ApprovalStatus,
  ChatEventContext,
  CreateSessionInput,
  EndedEventContext,
  ErrorEventContext,
  JsonPrimitive,
  JsonValue,
  PedelecAvailability,
  PedelecError,
  PedelecEventContext,
  PedelecOptions,
  PedelecSessionStatus,
  PedelecSettings,
  ProviderCode,
  ProviderInfo,
  ReadAssetType,
  SandboxAsset,
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
  ToolCallContext,
  ToolDefinition,
  ToolNameOf,
  ToolSpecificHandler
} from "../src/index.ts"
import { defineTool, Pedelec, PedelecError as PedelecErrorClass, PedelecSession } from "../src/index.ts"

/** Each earlier type, used once: the list is the point. */
export type EarlierTypes = [
  ApprovalStatus,
  ChatEventContext,
  CreateSessionInput,
  EndedEventContext,
  ErrorEventContext,
  JsonPrimitive,
  JsonValue,
  PedelecAvailability,
  PedelecError,
  PedelecEventContext,
  PedelecOptions,
  PedelecSessionStatus,
  PedelecSettings,
  ProviderCode,
  ProviderInfo,
  ReadAssetType,
  SandboxAsset,
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
  ToolCallContext,
  ToolDefinition,
  ToolNameOf<[]>,
  ToolSpecificHandler
]

describe("the earlier SDK's exports", () => {
  it("are here at run time: Pedelec, PedelecSession, defineTool (and PedelecError, a class now)", () => {
    for (const value of [Pedelec, PedelecSession, defineTool, PedelecErrorClass]) expect(typeof value).toBe("function")
  })
})
