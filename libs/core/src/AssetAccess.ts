/**
 * AssetAccess — the host role's asset methods (`asset.upload_ticket`, `asset.download_ticket`, `asset.list`): checks
 * that the origin owns the live session, that an upload fits the limit and could land on its path, that a download's
 * file exists, and hands out a ticket whose URL is the asset server's. It does not move bytes (AssetServer,
 * AssetFiles) or keep tickets (AssetTickets).
 */
import {
  ASSET_LIMITS,
  type AssetInfo,
  type AssetTicket,
  type DownloadTicketRequest,
  type UploadTicketRequest
} from "@pedelec/contracts/Assets"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AssetFiles } from "./AssetFiles.ts"
import { AssetServer } from "./AssetServer.ts"
import { AssetTickets, type Minted } from "./AssetTickets.ts"
import { Sessions } from "./Sessions.ts"

export class AssetAccess extends Context.Service<
  AssetAccess,
  {
    readonly uploadTicket: (origin: Origin, request: UploadTicketRequest) => Effect.Effect<AssetTicket, PedelecError>
    readonly downloadTicket: (
      origin: Origin,
      request: DownloadTicketRequest
    ) => Effect.Effect<AssetTicket, PedelecError>
    readonly list: (origin: Origin, sessionId: SessionId) => Effect.Effect<ReadonlyArray<AssetInfo>, PedelecError>
  }
>()("pedelec/core/AssetAccess") {
  static readonly layer = Layer.effect(
    AssetAccess,
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const files = yield* AssetFiles
      const tickets = yield* AssetTickets
      const server = yield* AssetServer

      const workspaceOf = (origin: Origin, sessionId: SessionId) =>
        Effect.map(sessions.access(origin, sessionId), (session) => session.workspace)

      const ticketOf = (minted: Minted): AssetTicket => ({
        method: minted.method,
        url: server.urlOf(minted.id),
        token: minted.token,
        path: minted.path,
        expiresAt: minted.expiresAt
      })

      const uploadTicket = Effect.fn("AssetAccess.uploadTicket")(function* (
        origin: Origin,
        request: UploadTicketRequest
      ) {
        const { sessionId, path, bytes } = request
        const workspace = yield* workspaceOf(origin, sessionId)
        // The schema bounds it too; this is the rule, whatever a future schema says.
        if (bytes > ASSET_LIMITS.maxUploadBytes)
          return yield* Effect.fail(
            PedelecError.fromCode("ASSET_TOO_LARGE", "core", {
              details: { bytes, limit: ASSET_LIMITS.maxUploadBytes }
            })
          )
        yield* files.checkUpload(workspace, path)
        return ticketOf(yield* tickets.mint({ sessionId, origin, path, method: "PUT", bytes }))
      })

      const downloadTicket = Effect.fn("AssetAccess.downloadTicket")(function* (
        origin: Origin,
        request: DownloadTicketRequest
      ) {
        const { sessionId, path } = request
        yield* files.stat(yield* workspaceOf(origin, sessionId), path)
        return ticketOf(yield* tickets.mint({ sessionId, origin, path, method: "GET", bytes: undefined }))
      })

      const list = Effect.fn("AssetAccess.list")(function* (origin: Origin, sessionId: SessionId) {
        return yield* files.list(yield* workspaceOf(origin, sessionId))
      })

      return AssetAccess.of({ uploadTicket, downloadTicket, list })
    })
  )
}
