/**
 * FromHost — Core's side of the host role (the native host, pedelec-cli's session commands): each
 * HostRpcs method mapped onto the service that owns it. No logic of its own beyond that mapping.
 */
import { HostRpcs } from "@pedelec/contracts/node/CoreLink"
import * as Effect from "effect/Effect"
import { AssetAccess } from "./AssetAccess.ts"
import { Providers } from "./Providers.ts"
import { Sessions } from "./Sessions.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { ToolRouter } from "./ToolRouter.ts"

export const HostHandlers = HostRpcs.toLayer(
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const tools = yield* ToolRouter
    const providers = yield* Providers
    const settings = yield* SettingsStore
    const assets = yield* AssetAccess
    return HostRpcs.of({
      "session.create": ({ origin, input }) => sessions.create(origin, input),
      "session.resume": ({ origin, sessionId }) => sessions.resume(origin, sessionId),
      // The connection names the claimer: each page port reaches Core through its own native host connection.
      "session.subscribe": ({ origin, sessionId, afterSeq, claimTools, claimant }, { client }) =>
        sessions.subscribe(origin, sessionId, afterSeq, claimTools, { connection: client.id, claimant }),
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
      "providers.list": ({ rescan }) => providers.list(rescan),
      "settings.get": () => settings.get,
      "asset.upload_ticket": ({ origin, ...request }) => assets.uploadTicket(origin, request),
      "asset.download_ticket": ({ origin, ...request }) => assets.downloadTicket(origin, request),
      "asset.list": ({ origin, sessionId }) => assets.list(origin, sessionId)
    })
  })
)
