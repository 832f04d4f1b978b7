// The same page as an Effect program, against @pedelec/sdk/effect as a user gets it from npm: the client as a scoped
// layer, a scoped session, and every operation as an Effect failing with PedelecError, narrowed by code. Type-checked
// strictly by package.test.ts in a fresh project; `effect` is that project's own dependency, at the SDK's version.
import { defineTool } from "@pedelec/sdk"
import {
  cancel,
  end,
  hasCode,
  listAssets,
  PedelecClient,
  type PedelecError,
  prepare,
  readAssetFile,
  readAssetJson,
  readAssetText,
  scoped,
  sendText,
  uploadAsset
} from "@pedelec/sdk/effect"
import * as Effect from "effect/Effect"

const echo = defineTool({
  name: "echo",
  description: "Returns its arguments",
  argsSchema: { type: "object", properties: { text: { type: "string" } } }
})

const turn = Effect.gen(function* () {
  const client = yield* PedelecClient
  const availability = yield* client.checkAvailability
  if (!availability.available) return `unavailable: ${availability.error?.code ?? "?"}`
  yield* client.getApprovalStatus
  yield* client.requestApproval
  const providers = yield* client.listProviders
  const settings = yield* client.getSettings
  const session = yield* scoped(client.createSession({ skills: { guidance: "Echo.", tools: [echo] } }))
  session.onTool("echo", (args) => args)
  yield* prepare(session)
  const path = yield* uploadAsset(session, new File(["hi"], "hi.txt"))
  const listed = yield* listAssets(session)
  const text = yield* readAssetText(session, path)
  const json = yield* readAssetJson<{ readonly n: number }>(session, "n.json")
  const file = yield* readAssetFile(session, path)
  const reply = yield* sendText(session, "Echo hello", { timeoutMs: 60_000 })
  const resumed = yield* client.resumeSession(session.sessionId, { claimTools: true })
  yield* cancel(resumed)
  yield* end(resumed)
  return `${providers.length} ${settings.defaultEffortLevel} ${listed.length} ${text} ${json.n} ${file.name} ${reply.text}`
})

export const program: Effect.Effect<string, PedelecError> = turn.pipe(
  Effect.catchIf(
    (error) => hasCode(error, "SESSION_BUSY"),
    (error) => Effect.succeed(`busy: ${error.code}`)
  ),
  Effect.scoped,
  Effect.provide(PedelecClient.layer({ requestTimeoutMs: 10_000 }))
)
