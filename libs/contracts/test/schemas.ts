/**
 * The one table of every Schema src exports, shared by roundtrip.test.ts and properties.test.ts. Named schemas are
 * listed one by one; the params/result of the method maps and the payload/success of every Rpc are derived by
 * iterating the maps and groups, so a new method or rpc cannot skip the suites. roundtrip.test.ts imports every
 * module under src/ and fails when an exported Schema is missing here.
 *
 * `effect/Arbitrary` derives a generator for every schema here, including the recursive, filtered ArgsSchema, except
 * those in `NOT_DERIVED`, which are checked on hand-written values only. `EXAMPLES` adds hand-written values for
 * shapes the generator reaches only rarely (deep argsSchemas, oneOf, `required`, tools with annotations), checked
 * beside the generated ones.
 */
import { RpcSchema } from "effect/rpc"
import type * as Schema from "effect/Schema"
import * as ArgsSchema from "../src/ArgsSchema.ts"
import * as Assets from "../src/Assets.ts"
import * as Desktop from "../src/Desktop.ts"
import * as ErrorCode from "../src/ErrorCode.ts"
import * as Events from "../src/Events.ts"
import * as Ids from "../src/Ids.ts"
import * as DesktopLink from "../src/link/DesktopLink.ts"
import * as HostLink from "../src/link/HostLink.ts"
import * as PageLink from "../src/link/PageLink.ts"
import * as AgentLink from "../src/node/AgentLink.ts"
import * as AgentLoop from "../src/node/AgentLoop.ts"
import * as CliOutput from "../src/node/CliOutput.ts"
import * as CoreLink from "../src/node/CoreLink.ts"
import * as DesktopRole from "../src/node/DesktopRole.ts"
import * as ProviderEvent from "../src/node/ProviderEvent.ts"
import * as PedelecError from "../src/PedelecError.ts"
import * as Protocol from "../src/Protocol.ts"
import * as Provider from "../src/Provider.ts"
import * as Session from "../src/Session.ts"
import * as Settings from "../src/Settings.ts"
import * as SitePolicy from "../src/SitePolicy.ts"
import * as Tool from "../src/Tool.ts"

export type AnyCodec = Schema.Codec<unknown, unknown>

export interface SchemaRow {
  readonly name: string
  readonly schema: AnyCodec
  /** Hand-written valid values (Type side) checked beside the generated ones. */
  readonly examples: ReadonlyArray<unknown>
  /** Whether `Arbitrary.schema` can generate values for it. */
  readonly derived: boolean
}

/** Every named Schema export, by `Module.export`. */
const NAMED = {
  // Ids.ts
  "Ids.SessionId": Ids.SessionId,
  "Ids.TurnId": Ids.TurnId,
  "Ids.ToolCallId": Ids.ToolCallId,
  "Ids.RequestId": Ids.RequestId,
  "Ids.SessionCapability": Ids.SessionCapability,
  "Ids.LaunchSecret": Ids.LaunchSecret,
  "Ids.Origin": Ids.Origin,
  // Protocol.ts
  "Protocol.ProtocolVersion": Protocol.ProtocolVersion,
  "Protocol.Component": Protocol.Component,
  "Protocol.Hello": Protocol.Hello,
  // ErrorCode.ts, PedelecError.ts
  "ErrorCode.ErrorCode": ErrorCode.ErrorCode,
  "PedelecError.ErrorDetails": PedelecError.ErrorDetails,
  "PedelecError.PedelecErrorWire": PedelecError.PedelecErrorWire,
  "PedelecError.PedelecError": PedelecError.PedelecError,
  // ArgsSchema.ts
  "ArgsSchema.ArgsSchema": ArgsSchema.ArgsSchema,
  "ArgsSchema.ArgsSchemaNode": ArgsSchema.ArgsSchemaNode,
  // Provider.ts
  "Provider.ProviderCode": Provider.ProviderCode,
  "Provider.EffortLevel": Provider.EffortLevel,
  "Provider.ModelName": Provider.ModelName,
  "Provider.EffortProfile": Provider.EffortProfile,
  "Provider.EffortProfiles": Provider.EffortProfiles,
  "Provider.EffortSupport": Provider.EffortSupport,
  "Provider.ProviderInfo": Provider.ProviderInfo,
  // Session.ts
  "Session.SessionStatus": Session.SessionStatus,
  "Session.TurnReason": Session.TurnReason,
  "Session.TurnKind": Session.TurnKind,
  "Session.AbsolutePath": Session.AbsolutePath,
  "Session.CreateSessionInput": Session.CreateSessionInput,
  "Session.WorkspaceInfo": Session.WorkspaceInfo,
  "Session.SessionInfo": Session.SessionInfo,
  "Session.TurnResult": Session.TurnResult,
  "Session.TurnText": Session.TurnText,
  // Tool.ts
  "Tool.ToolName": Tool.ToolName,
  "Tool.ToolAnnotations": Tool.ToolAnnotations,
  "Tool.ToolTimeoutMs": Tool.ToolTimeoutMs,
  "Tool.ToolManifest": Tool.ToolManifest,
  "Tool.ToolsManifest": Tool.ToolsManifest,
  "Tool.Skills": Tool.Skills,
  "Tool.ToolError": Tool.ToolError,
  "Tool.ToolOutcome": Tool.ToolOutcome,
  // Events.ts
  "Events.Seq": Events.Seq,
  "Events.Claimant": Events.Claimant,
  "Events.ChatEvent": Events.ChatEvent,
  "Events.ChatDeltaEvent": Events.ChatDeltaEvent,
  "Events.StatusChangedEvent": Events.StatusChangedEvent,
  "Events.ToolCallEvent": Events.ToolCallEvent,
  "Events.ToolCallCancelledEvent": Events.ToolCallCancelledEvent,
  "Events.ToolResultEvent": Events.ToolResultEvent,
  "Events.TurnCompletedEvent": Events.TurnCompletedEvent,
  "Events.ErrorEvent": Events.ErrorEvent,
  "Events.EndedEvent": Events.EndedEvent,
  "Events.SessionEvent": Events.SessionEvent,
  // Settings.ts
  "Settings.HttpUrl": Settings.HttpUrl,
  "Settings.OllamaSettings": Settings.OllamaSettings,
  "Settings.Settings": Settings.Settings,
  "Settings.Secrets": Settings.Secrets,
  "Settings.SecretName": Settings.SecretName,
  "Settings.PublicSettings": Settings.PublicSettings,
  // SitePolicy.ts
  "SitePolicy.SitePolicy": SitePolicy.SitePolicy,
  "SitePolicy.SitePolicies": SitePolicy.SitePolicies,
  // Assets.ts
  "Assets.AssetPath": Assets.AssetPath,
  "Assets.AssetInfo": Assets.AssetInfo,
  "Assets.ReadAssetAs": Assets.ReadAssetAs,
  "Assets.UploadTicketRequest": Assets.UploadTicketRequest,
  "Assets.DownloadTicketRequest": Assets.DownloadTicketRequest,
  "Assets.AssetTicket": Assets.AssetTicket,
  // link/PageLink.ts
  "PageLink.ApprovalStatus": PageLink.ApprovalStatus,
  "PageLink.PageMethod": PageLink.PageMethod,
  "PageLink.PageRequest": PageLink.PageRequest,
  "PageLink.PageResponse": PageLink.PageResponse,
  "PageLink.PageEvent": PageLink.PageEvent,
  "PageLink.PageNotice": PageLink.PageNotice,
  "PageLink.PageTextRef": PageLink.PageTextRef,
  "PageLink.ExtensionToPage": PageLink.ExtensionToPage,
  // link/HostLink.ts
  "HostLink.ExtensionMethod": HostLink.ExtensionMethod,
  "HostLink.HostRequest": HostLink.HostRequest,
  "HostLink.HostSubscribeParams": HostLink.HostSubscribeParams,
  "HostLink.HostResponse": HostLink.HostResponse,
  "HostLink.HostEvent": HostLink.HostEvent,
  "HostLink.HostSubscriptionEnded": HostLink.HostSubscriptionEnded,
  "HostLink.ChunkFrame": HostLink.ChunkFrame,
  "HostLink.HostTextRef": HostLink.HostTextRef,
  "HostLink.HostToExtension": HostLink.HostToExtension,
  // node/CliOutput.ts, node/CoreLink.ts, node/AgentLink.ts
  "CliOutput.CliOutput": CliOutput.CliOutput,
  "CoreLink.Welcome": CoreLink.Welcome,
  "CoreLink.CoreRuntimeInfo": CoreLink.CoreRuntimeInfo,
  "ProviderEvent.ProviderEvent": ProviderEvent.ProviderEvent,
  // node/AgentLoop.ts
  "AgentLoop.AgentLoopRequest": AgentLoop.AgentLoopRequest,
  "ProviderEvent.ProviderSessionId": ProviderEvent.ProviderSessionId,
  "AgentLink.ToolSummary": AgentLink.ToolSummary,
  "AgentLink.ToolSpec": AgentLink.ToolSpec,
  "AgentLink.DenoRunPolicy": AgentLink.DenoRunPolicy,
  // Desktop.ts (shared by node/DesktopRole.ts and link/DesktopLink.ts)
  "Desktop.AfterSeq": Desktop.AfterSeq,
  "Desktop.CoreStatus": Desktop.CoreStatus,
  "Desktop.DesktopSession": Desktop.DesktopSession,
  "Desktop.LocalProvider": Desktop.LocalProvider,
  "Desktop.EffortDescription": Desktop.EffortDescription,
  "Desktop.EffortPreview": Desktop.EffortPreview,
  "Desktop.OllamaModel": Desktop.OllamaModel,
  "Desktop.OllamaStatus": Desktop.OllamaStatus,
  "Desktop.EventPage": Desktop.EventPage,
  "Desktop.WatchItem": Desktop.WatchItem,
  // link/DesktopLink.ts
  "DesktopLink.AppInfo": DesktopLink.AppInfo,
  "DesktopLink.NativeHostBrowser": DesktopLink.NativeHostBrowser,
  "DesktopLink.NativeHostRegistration": DesktopLink.NativeHostRegistration,
  "DesktopLink.NativeHostStatus": DesktopLink.NativeHostStatus,
  "DesktopLink.SelfTestHopName": DesktopLink.SelfTestHopName,
  "DesktopLink.SelfTestHop": DesktopLink.SelfTestHop,
  "DesktopLink.DesktopRequest": DesktopLink.DesktopRequest,
  "DesktopLink.DesktopStreamRequest": DesktopLink.DesktopStreamRequest,
  "DesktopLink.DesktopResponse": DesktopLink.DesktopResponse,
  "DesktopLink.DesktopStreamItem": DesktopLink.DesktopStreamItem
} satisfies Record<string, AnyCodec>

/** The `{ params, result }` maps of the browser links. */
export const METHOD_MAPS = {
  PageMethods: PageLink.PageMethods,
  ExtensionMethods: HostLink.ExtensionMethods,
  DesktopMethods: DesktopLink.DesktopMethods,
  DesktopStreams: DesktopLink.DesktopStreams
} as const

/** What the suites read of an `effect/rpc` group. */
export interface RpcLike {
  readonly _tag: string
  readonly payloadSchema: Schema.Top
  readonly successSchema: Schema.Top
}
export interface RpcGroupLike {
  readonly requests: ReadonlyMap<string, RpcLike>
}

/** The `effect/rpc` groups of Core IPC. */
export const RPC_GROUPS: Record<string, RpcGroupLike> = {
  HelloRpcs: CoreLink.HelloRpcs,
  HostRpcs: CoreLink.HostRpcs,
  AgentRpcs: AgentLink.AgentRpcs,
  DesktopRpcs: DesktopRole.DesktopRpcs
}

const methodRows = (): Array<readonly [string, AnyCodec]> =>
  Object.entries(METHOD_MAPS).flatMap(([map, methods]) =>
    Object.entries(methods).flatMap(
      ([method, { params, result }]): Array<readonly [string, AnyCodec]> => [
        [`${map}.${method}.params`, params],
        [`${map}.${method}.result`, result]
      ]
    )
  )

/** A streaming rpc's success schema wraps its element schema; the element is what travels. */
export const rpcSuccess = (rpc: RpcLike): Schema.Top =>
  RpcSchema.isStreamSchema(rpc.successSchema) ? rpc.successSchema.success : rpc.successSchema

const rpcRows = (): Array<readonly [string, AnyCodec]> =>
  Object.entries(RPC_GROUPS).flatMap(([group, rpcs]) =>
    [...rpcs.requests.values()].flatMap(
      (rpc): Array<readonly [string, AnyCodec]> => [
        [`${group}.${rpc._tag}.payload`, rpc.payloadSchema as AnyCodec],
        [`${group}.${rpc._tag}.success`, rpcSuccess(rpc) as AnyCodec]
      ]
    )
  )

const string = (extra: Record<string, unknown> = {}) => ({ type: "string", ...extra })

/** A rich argsSchema: every node type, metadata everywhere, nested arrays of objects, oneOf, awkward names. */
const RICH_ARGS_SCHEMA = {
  type: "object",
  description: "Search the catalog.",
  default: { query: "bikes" },
  examples: [{ query: "bikes", limit: 3 }],
  properties: {
    query: string({ minLength: 1, maxLength: 200, pattern: "^[^\\n]+$", description: "Free text.", examples: ["x"] }),
    sort: string({ enum: ["price", "name"], default: "price" }),
    limit: { type: "integer", minimum: 1, maximum: 100, default: 10, examples: [10, 20] },
    ratio: { type: "number", minimum: -1.5, maximum: 1.5, enum: [0, 0.5, 1.5] },
    exact: { type: "boolean", description: "Exact match.", default: false, examples: [true] },
    rows: {
      type: "array",
      minItems: 0,
      maxItems: 5,
      uniqueItems: true,
      items: {
        type: "object",
        properties: { id: { type: "integer" }, tags: { type: "array", items: string() } },
        required: ["id"],
        additionalProperties: false
      }
    },
    matrix: { type: "array", items: { type: "array", items: { type: "number" } } },
    either: { oneOf: [string(), { type: "integer" }, { type: "object", properties: {} }], description: "Either." },
    "a/b~c": string(),
    PROTO: string()
  },
  required: ["query", "a/b~c"],
  additionalProperties: false
}

/** A property named `__proto__` must be an own key, as JSON.parse makes it: an object literal would set the prototype. */
export const RICH_ARGS: unknown = JSON.parse(JSON.stringify(RICH_ARGS_SCHEMA).replace('"PROTO"', '"__proto__"'))

const tool = (name: string, argsSchema: unknown) => ({
  name,
  description: `The ${name} tool.`,
  argsSchema,
  timeoutMs: 60_000,
  annotations: { readOnly: true, destructive: false, idempotent: true, title: name }
})

const TOOLS = [tool("search", RICH_ARGS), tool("cart.add-item_2", { type: "object" })]

/**
 * Derivation fails for these: the generator for `/^[^\s\p{Cc}]{1,200}$/u` starts at size 0 with "" and discards
 * every attempt ("Property exhausted after 0 run(s)"). Inside structs (optional or nullable) it derives fine; a
 * struct with a required ModelName (AgentLoopRequest) fails the same way.
 */
const NOT_DERIVED: ReadonlySet<keyof typeof NAMED> = new Set([
  "Provider.ModelName",
  "AgentLoop.AgentLoopRequest",
  "Desktop.OllamaModel"
])

const EXAMPLES: Partial<Record<keyof typeof NAMED, ReadonlyArray<unknown>>> = {
  "Desktop.OllamaModel": [
    { name: "llama3.2:1b" },
    { name: "qwen3:latest", sizeBytes: 1_000_000, modifiedAt: "2026-01-01T00:00:00Z" }
  ],
  "AgentLoop.AgentLoopRequest": [
    { prompt: "hi", model: "llama3.2:3b", baseUrl: "http://127.0.0.1:11434", apiKey: "ollama", timeoutMs: 300_000 },
    {
      prompt: "",
      providerSessionId: "AbCdEf0123456789_-xy",
      model: "qwen3",
      baseUrl: "https://ollama.example/api",
      apiKey: "k",
      timeoutMs: 1_000
    }
  ],
  "ArgsSchema.ArgsSchema": [RICH_ARGS, { type: "object" }, { type: "object", properties: {}, required: [] }],
  "ArgsSchema.ArgsSchemaNode": [RICH_ARGS, { oneOf: [RICH_ARGS, string()] }, { type: "array", items: RICH_ARGS }],
  "Tool.ToolManifest": TOOLS,
  "Tool.ToolsManifest": [TOOLS],
  "Tool.Skills": [{ guidance: "Be brief.", tools: TOOLS }],
  "Session.CreateSessionInput": [
    {
      provider: "claude",
      model: "sonnet",
      effortLevel: "high",
      workspace: { path: "/home/me/project" },
      skills: { guidance: "", tools: TOOLS },
      autoEndOnDisconnect: false
    }
  ],
  "Provider.ModelName": [
    "gpt-5",
    "claude-sonnet-4-5",
    "llama3.2:3b",
    "qwen2.5-coder:32b-instruct-q4_K_M",
    "models/gemini-2.5-pro",
    "モデル",
    "x",
    "m".repeat(200)
  ],
  "AgentLink.ToolSpec": [{ name: "search", description: "Search.", timeoutMs: 1_000, argsSchema: RICH_ARGS }],
  "AgentLink.DenoRunPolicy": [
    { workspace: "/home/u/.pedelec/workspaces/s1", timeoutMs: 60_000, outputBytes: 1_048_576 }
  ]
}

export const SCHEMAS: ReadonlyArray<SchemaRow> = [...Object.entries(NAMED), ...methodRows(), ...rpcRows()].map(
  ([name, schema]) => ({
    name,
    schema,
    examples: EXAMPLES[name as keyof typeof NAMED] ?? [],
    derived: !NOT_DERIVED.has(name as keyof typeof NAMED)
  })
)
