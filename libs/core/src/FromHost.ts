/**
 * FromHost — Core's side of the host role (the native host, pedelec-cli's session commands): each
 * HostRpcs method mapped onto the service that owns it (`session.subscribe_refs` is the subscription with each event
 * as that stream's TextRuns sends it), and the one decoding Core does itself: `session.create`'s
 * input arrives undecoded (CoreHostRpcs) and is decoded strictly here, because effect/rpc's decoder strips unknown
 * keys, and an argsSchema keyword Core does not support (`format`, …) must be refused with its pointer, the same
 * code and pointer the SDK gives (TOOLS_MANIFEST_INVALID at `/skills/tools/<i>/argsSchema/…`), not dropped.
 */
import { decodeArgsSchema } from "@pedelec/contracts/ArgsSchema"
import { Origin } from "@pedelec/contracts/Ids"
import { issuesOfExit } from "@pedelec/contracts/JsonPointer"
import { TextRuns } from "@pedelec/contracts/link/TextRuns"
import { HostAuth, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { CreateSessionInput, SessionInfo } from "@pedelec/contracts/Session"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import { Rpc } from "effect/rpc"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AssetAccess } from "./AssetAccess.ts"
import { Providers } from "./Providers.ts"
import { Sessions } from "./Sessions.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { SitePolicies } from "./SitePolicies.ts"
import { ToolRouter } from "./ToolRouter.ts"

/** HostRpcs as Core serves it: the same wire, with `session.create`'s input left for Core to decode. */
export const CoreHostRpcs = HostRpcs.omit("session.create").add(
  Rpc.make("session.create", {
    payload: { origin: Origin, input: Schema.Unknown },
    success: SessionInfo,
    error: PedelecError
  }).middleware(HostAuth)
)

const refused = (code: "TOOLS_MANIFEST_INVALID" | "INVALID_INPUT", pointer: string, reason: string) =>
  Effect.fail(PedelecError.fromCode(code, "core", { details: { pointer, reason } }))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const decodeInput = Schema.decodeUnknownExit(CreateSessionInput)

/** The SDK's rules (libs/sdk tools/Manifest): each argsSchema by decodeArgsSchema first, then the whole input. */
const decodeCreateInput = (input: unknown): Effect.Effect<CreateSessionInput, PedelecError> => {
  const tools = isRecord(input) && isRecord(input.skills) ? input.skills.tools : undefined
  for (const [index, tool] of (Array.isArray(tools) ? tools : []).entries()) {
    const args = isRecord(tool) ? decodeArgsSchema(tool.argsSchema) : undefined
    if (args !== undefined && Result.isFailure(args)) {
      const { pointer, reason } = args.failure
      return refused("TOOLS_MANIFEST_INVALID", `/skills/tools/${index}/argsSchema${pointer}`, reason)
    }
  }
  const decoded = decodeInput(input, { onExcessProperty: "error" })
  if (Exit.isSuccess(decoded)) return Effect.succeed(decoded.value)
  const { pointer, reason } = issuesOfExit(decoded)[0] ?? { pointer: "", reason: "invalid input" }
  return refused(pointer.startsWith("/skills") ? "TOOLS_MANIFEST_INVALID" : "INVALID_INPUT", pointer, reason)
}

export const HostHandlers = CoreHostRpcs.toLayer(
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const tools = yield* ToolRouter
    const providers = yield* Providers
    const settings = yield* SettingsStore
    const assets = yield* AssetAccess
    const policies = yield* SitePolicies
    return CoreHostRpcs.of({
      "session.create": ({ origin, input }) =>
        Effect.flatMap(decodeCreateInput(input), (decoded) => sessions.create(origin, decoded)),
      "session.resume": ({ origin, sessionId }) => sessions.resume(origin, sessionId),
      // The connection names the claimer: each page port reaches Core through its own native host connection.
      "session.subscribe": ({ origin, sessionId, afterSeq, claimTools, claimant }, { client }) =>
        sessions.subscribe(origin, sessionId, afterSeq, claimTools, { connection: client.id, claimant }),
      // Runs of its own per stream: a ref names only what this stream carried, so a resubscribe gets whole texts.
      "session.subscribe_refs": ({ origin, sessionId, afterSeq, claimTools, claimant }, { client }) =>
        Stream.suspend(() => {
          const runs = new TextRuns()
          return sessions
            .subscribe(origin, sessionId, afterSeq, claimTools, { connection: client.id, claimant })
            .pipe(Stream.map((event) => runs.send(event)))
        }),
      "session.prepare": ({ origin, sessionId }) => sessions.prepare(origin, sessionId),
      "session.send_text": ({ origin, sessionId, text }) => sessions.sendText(origin, sessionId, text),
      "session.cancel": ({ origin, sessionId }) => sessions.cancel(origin, sessionId),
      "session.end": ({ origin, sessionId }) => sessions.end(origin, sessionId),
      "session.list": ({ origin }) => sessions.list(origin),
      "origin.revoke": ({ origin }) => sessions.revokeOrigin(origin),
      "tool.submit_result": ({ origin, sessionId, toolCallId, outcome }, { client }) =>
        sessions.access(origin, sessionId).pipe(
          Effect.flatMap((session) => tools.submit(session, toolCallId, outcome, client.id)),
          Effect.map((accepted) => ({ accepted }))
        ),
      "tool.progress": ({ origin, sessionId, toolCallId }, { client }) =>
        sessions
          .access(origin, sessionId)
          .pipe(Effect.flatMap((session) => tools.progress(session, toolCallId, client.id))),
      "tool.awaiting_user": ({ origin, sessionId, toolCallId }, { client }) =>
        sessions
          .access(origin, sessionId)
          .pipe(Effect.flatMap((session) => tools.awaitingUser(session, toolCallId, client.id))),
      // The extension's own methods (its options page): the extension never forwards a page's request to them.
      "origin.get_policy": ({ origin }) => policies.get(origin),
      "origin.set_policy": ({ origin, policy }) => policies.set(origin, policy),
      "providers.list": ({ rescan }) => providers.list(rescan),
      "settings.get": () => settings.get,
      "asset.upload_ticket": ({ origin, ...request }) => assets.uploadTicket(origin, request),
      "asset.download_ticket": ({ origin, ...request }) => assets.downloadTicket(origin, request),
      "asset.list": ({ origin, sessionId }) => assets.list(origin, sessionId)
    })
  })
)
