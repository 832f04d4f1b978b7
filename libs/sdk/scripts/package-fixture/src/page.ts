// A page written against @pedelec/sdk as a user gets it from npm: every runtime export, every method of the client
// and the session, and the types a page names (the earlier SDK's aliases among them). package.test.ts copies it into
// a fresh project outside the repository, type-checks it strictly against the packed .d.ts, bundles it with Vite and
// measures the result. In the repository it is also type-checked against the source (tsconfig.test.json).
import {
  type ApprovalStatus,
  type ChatEventContext,
  type CreateSessionInput,
  defineTool,
  type ErrorCode,
  type EventContext,
  isPedelecError,
  PEDELEC_EXTENSION_ID,
  Pedelec,
  type PedelecAvailability,
  PedelecError,
  PedelecSession,
  type PedelecSessionStatus,
  type PedelecSettings,
  type ProviderInfo,
  type SandboxAsset,
  type ToolArgsSchema,
  type ToolCallContext,
  type ToolSpecificHandler,
  type TurnCompletion,
  type TurnResult
} from "@pedelec/sdk"

const log = document.createElement("pre")
const say = (line: string): void => {
  log.textContent += `${line}\n`
}

let counter = 0
const increment = defineTool({
  name: "counter.increment",
  description: "Adds `by` to the page's counter and returns the new value",
  argsSchema: { type: "object", properties: { by: { type: "integer", minimum: 1 } }, required: ["by"] },
  annotations: { idempotent: false },
  handler: (args) => (counter += Number(args.by))
})

const colorArgs: ToolArgsSchema = {
  type: "object",
  properties: { color: { type: "string", enum: ["red", "green", "blue"] } },
  required: ["color"]
}
const paint = defineTool<"page.paint", { readonly color: string }, string>({
  name: "page.paint",
  description: "Paints the page's background",
  argsSchema: colorArgs,
  timeoutMs: 5_000,
  handler: (args) => args.color
})

const tools = [increment, paint] as const

/** The earlier SDK's handler type, its result typed; it overrides the inline handler of `page.paint`. */
const paintNow: ToolSpecificHandler<{ readonly color: string }, string> = (args, ctx: ToolCallContext) => {
  ctx.progress(`painting for call ${ctx.toolRequestId}`)
  if (ctx.signal.aborted) throw new Error("cancelled")
  document.body.style.background = args.color
  return args.color
}

const describeError = (error: unknown): string => {
  if (error instanceof PedelecError && error.code === "SESSION_BUSY") return "busy, try again"
  if (!isPedelecError(error)) return String(error)
  const code: ErrorCode = error.code
  return `${code} (${error.source}${error.retryable ? ", retryable" : ""}): ${error.message}`
}

/** The questions a page asks before it has a session. */
const preflight = async (pedelec: Pedelec): Promise<boolean> => {
  const availability: PedelecAvailability = await pedelec.checkAvailability()
  if (!availability.available) say(`unavailable: ${availability.error?.code ?? "?"}`)
  const status: ApprovalStatus = availability.approval.approved
    ? await pedelec.getApprovalStatus()
    : await pedelec.requestApproval()
  const providers: ReadonlyArray<ProviderInfo> = await pedelec.listProviders()
  const settings: PedelecSettings = await pedelec.getSettings()
  say(`${status.origin}: ${providers.map((p) => p.code).join(", ")}, default ${settings.defaultProvider}`)
  return status.approved
}

const listen = (session: PedelecSession<"counter.increment" | "page.paint">): ReadonlyArray<() => void> => [
  session.onChat((text, ctx: ChatEventContext) => say(`#${ctx.seq} ${ctx.provider}: ${text}`)),
  session.onChatDelta((delta, ctx) => say(`${ctx.turnId ?? "-"} ${delta}`)),
  session.onStatus((status: PedelecSessionStatus, ctx) => say(`${status} at ${ctx.receivedAt}`)),
  session.onError((error, ctx) => say(`${ctx.source}: ${describeError(error)}`)),
  session.onEnded((ctx: EventContext) => say(`ended ${ctx.sessionId}`)),
  session.onTurnCompleted((result: TurnCompletion) => say(`${result.turnKind} ${result.reason}: ${result.text}`)),
  session.onTool("counter.increment", (args, ctx) => {
    say(`call ${ctx.toolCallId} of ${ctx.tool}`)
    counter += Number(args.by ?? 1)
    return counter
  }),
  session.onTool<{ readonly color: string }>("page.paint", paintNow),
  // @ts-expect-error: "typo" is not one of the session's tools
  session.onTool("typo", () => 0),
  session.onTool((tool, args) => `${tool satisfies "counter.increment" | "page.paint"} ${JSON.stringify(args)}`)
]

/** A session's assets: upload, list, and every form of read. */
const assets = async (session: PedelecSession<string>): Promise<void> => {
  const path = await session.uploadAsset(new File(["hello"], "hello.txt", { type: "text/plain" }), "notes/hello.txt")
  const listed: ReadonlyArray<SandboxAsset> = await session.listAssets()
  say(listed.map((asset) => `${asset.path} ${asset.name} ${asset.sizeBytes}`).join("\n"))
  const text: string = await session.readAsset(path, "text")
  const json = await session.readAsset<{ readonly count: number }>("state.json", "json")
  const file: File = await session.readAsset(path, "file")
  say(`${text} ${json.count} ${file.size}`)
}

const run = async (): Promise<void> => {
  const pedelec = new Pedelec({ extensionId: PEDELEC_EXTENSION_ID, requestTimeoutMs: 10_000 })
  if (!(await preflight(pedelec))) return
  const options: CreateSessionInput<typeof tools> = {
    effortLevel: "low",
    skills: { guidance: "Keep answers short.", tools },
    autoEndOnDisconnect: true
  }
  const session = await pedelec.createSession(options)
  const unsubscribe = listen(session)
  await session.prepare()
  const reply: TurnResult = await session.sendText("Add three to the counter", { timeoutMs: 60_000 })
  say(`${reply.turnId} ${reply.reason} ${reply.text} ${session.getStatus()} ${session.workspace.path}`)
  await assets(session)
  const again = await pedelec.resumeSession(session.sessionId, { claimTools: true })
  say(`${again instanceof PedelecSession} ${again.provider} ${again.model ?? "default"} ${again.effortLevel}`)
  await session.cancel()
  await session.end()
  for (const off of unsubscribe) off()
  pedelec.close()
}

document.body.append(log)
document.querySelector("button")?.addEventListener("click", () => {
  run().catch((error: unknown) => say(describeError(error)))
})
