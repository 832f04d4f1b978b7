/**
 * JSON Schema (draft 2020-12) documents of the public shapes, derived from the same Effect Schemas that validate
 * them, so what `pedelec-cli tool-spec` and the docs show cannot drift from what runs. Node-only: the browser never
 * needs them.
 */
import * as Schema from "effect/Schema"
import { ArgsSchema } from "../ArgsSchema.ts"
import { AssetInfo } from "../Assets.ts"
import { SessionEvent } from "../Events.ts"
import { PedelecErrorWire } from "../PedelecError.ts"
import { ProviderInfo } from "../Provider.ts"
import { CreateSessionInput, SessionInfo, TurnResult } from "../Session.ts"
import { PublicSettings, Settings } from "../Settings.ts"
import { SitePolicy } from "../SitePolicy.ts"
import { Skills, ToolManifest } from "../Tool.ts"
import { ToolSpec } from "./AgentLink.ts"
import { CliOutput } from "./CliOutput.ts"

export const PUBLIC_SCHEMAS = {
  ArgsSchema,
  ToolManifest,
  Skills,
  ToolSpec,
  CreateSessionInput,
  SessionInfo,
  TurnResult,
  SessionEvent,
  PedelecError: PedelecErrorWire,
  ProviderInfo,
  Settings,
  PublicSettings,
  SitePolicy,
  AssetInfo,
  CliOutput
} as const satisfies Record<string, Schema.Top>

export type PublicSchemaName = keyof typeof PUBLIC_SCHEMAS

/** A standalone document: `$defs` inlined, so each file can be read or validated on its own. */
export const toJsonSchema = (name: PublicSchemaName): Record<string, unknown> => {
  // Every decoder in Pedelec runs with onExcessProperty "error", so the documents must say so too.
  const document = Schema.toJsonSchemaDocument(PUBLIC_SCHEMAS[name], { onExcessProperty: "error" })
  const defs = Object.keys(document.definitions).length > 0 ? { $defs: document.definitions } : {}
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: name,
    ...document.schema,
    ...defs
  }
}
