/**
 * earlier — a page written for the earlier SDK (`@kaoruisaac/pedelec`, as research/anchor-pedelec.md §1 describes
 * its API), with only its import changed to `@pedelec/sdk`: its names (`CreateSessionInput`, `SkillsInput`,
 * `ToolArgsObjectSchema`, `ToolSpecificHandler`, the `*EventContext` types, `SandboxAsset`, …), `bridgeTimeoutMs`,
 * `ctx.toolRequestId`, an asset's `name` and `sizeBytes`, optional properties set to `undefined`, and providers and
 * settings asked for before any session (which opens the approval window). It runs in the E2E suite through the
 * probe and is type-checked strictly again against the packed SDK (libs/sdk/scripts/package.test.ts). It reports
 * what it saw as plain data; the test decides. Browser code: no node imports.
 */
import {
  type ChatEventContext,
  type CreateSessionInput,
  defineTool,
  type EndedEventContext,
  type ErrorEventContext,
  type JsonPrimitive,
  Pedelec,
  type PedelecError,
  type PedelecSessionStatus,
  type PedelecSettings,
  type ProviderInfo,
  type SandboxAsset,
  type SandboxAssetPath,
  type SkillsInput,
  type StatusEventContext,
  type ToolArgsNumberSchema,
  type ToolArgsObjectSchema,
  type ToolCallContext,
  type ToolSpecificHandler
} from "@pedelec/sdk"

export interface EarlierReport {
  readonly providers: ReadonlyArray<string>
  readonly defaultProvider: string | null
  readonly statuses: ReadonlyArray<PedelecSessionStatus>
  readonly chats: ReadonlyArray<string>
  readonly calls: ReadonlyArray<{ readonly tool: string; readonly toolRequestId: string; readonly same: boolean }>
  readonly sums: ReadonlyArray<JsonPrimitive>
  readonly uploaded: SandboxAssetPath
  readonly assets: ReadonlyArray<Pick<SandboxAsset, "name" | "path" | "sizeBytes">>
  readonly assetText: string
  readonly errors: ReadonlyArray<string>
  readonly ended: boolean
}

const number: ToolArgsNumberSchema = { type: "number" }
const addArgs: ToolArgsObjectSchema = { type: "object", properties: { a: number, b: number }, required: ["a", "b"] }

const tools = [defineTool({ name: "add", description: "Adds two numbers.", argsSchema: addArgs, timeoutMs: undefined })]

const skills: SkillsInput<typeof tools> = { guidance: "Use the page's tools when asked to add.", tools }

/** Runs the earlier page's whole flow once; `text` is what it sends (the scripted agent's script, in the test). */
export const runEarlierPage = async (text: string): Promise<EarlierReport> => {
  const pedelec = new Pedelec({ bridgeTimeoutMs: 30_000 })
  // Asked together before anything else: the first opens the approval window, the second waits on the same one.
  const [providers, settings]: [ReadonlyArray<ProviderInfo>, PedelecSettings] = await Promise.all([
    pedelec.listProviders(),
    pedelec.getSettings()
  ])
  const input: CreateSessionInput<typeof tools> = { provider: "scripted", model: undefined, skills }
  const session = await pedelec.createSession(input)
  const statuses: Array<PedelecSessionStatus> = []
  const chats: Array<string> = []
  const errors: Array<string> = []
  const calls: Array<EarlierReport["calls"][number]> = []
  const sums: Array<JsonPrimitive> = []
  let ended = false
  session.onStatus((status: PedelecSessionStatus, _ctx: StatusEventContext) => statuses.push(status))
  session.onChat((chat: string, _ctx: ChatEventContext) => chats.push(chat))
  session.onError((error: PedelecError, _ctx: ErrorEventContext) => errors.push(error.code))
  session.onEnded((_ctx: EndedEventContext) => {
    ended = true
  })
  const onAdd: ToolSpecificHandler<{ a: number; b: number }, { sum: number }> = (args, ctx: ToolCallContext) => {
    calls.push({ tool: ctx.tool, toolRequestId: ctx.toolRequestId, same: ctx.toolRequestId === ctx.toolCallId })
    sums.push(args.a + args.b)
    return { sum: args.a + args.b }
  }
  session.onTool("add", onAdd)
  await session.sendText(text)
  const uploaded = await session.uploadAsset(new File(["hello, earlier page"], "note.txt", { type: "text/plain" }))
  const assets = (await session.listAssets()).map(({ name, path, sizeBytes }) => ({ name, path, sizeBytes }))
  // The earlier SDK's paths began with a slash.
  const assetText = await session.readAsset("/note.txt", "text")
  await session.end()
  const defaultProvider = settings.defaultProvider
  return {
    providers: providers.map((p) => p.code),
    defaultProvider,
    statuses,
    chats,
    calls,
    sums,
    uploaded,
    assets,
    assetText,
    errors,
    ended
  }
}
