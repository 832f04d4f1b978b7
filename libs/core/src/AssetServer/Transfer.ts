/**
 * AssetServer/Transfer — one `PUT` or `GET` whose Host and route AssetServer has checked: the ticket is redeemed
 * (origin, token, expiry and method), then the session must be live and the ticket origin's, then the body's
 * declared size must be the ticket's, and only then is a byte read or sent. Each refusal comes before the next
 * check. It does not decide what a ticket allows (AssetTickets) or where files go (AssetFiles).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline } from "node:stream/promises"
import { ASSET_LIMITS, ASSET_TICKET_HEADER } from "@pedelec/contracts/Assets"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import type { AssetFiles } from "../AssetFiles.ts"
import type { AssetTickets, Ticket } from "../AssetTickets.ts"
import type { Sessions } from "../Sessions.ts"
import { COMMON, corsHeaders, refusal, refuse } from "./Answers.ts"

/** What a transfer is checked against and served from. */
export interface TransferDeps {
  readonly tickets: AssetTickets["Service"]
  readonly files: AssetFiles["Service"]
  readonly sessions: Sessions["Service"]
}

const contentLengthOf = (req: IncomingMessage): number | undefined | "invalid" => {
  const value = req.headers["content-length"]
  if (value === undefined) return undefined
  return /^\d{1,16}$/.test(value) ? Number(value) : "invalid"
}

/** Why a declared Content-Length does not fit the ticket, if it does not (no header: the write counts the bytes). */
const sizeRefusal = (declared: number | undefined | "invalid", expected: number): PedelecError | undefined => {
  if (declared === "invalid") return refusal("INVALID_INPUT", { reason: "the Content-Length header is not a number" })
  if (declared === undefined) return undefined
  if (declared > expected)
    return declared > ASSET_LIMITS.maxUploadBytes
      ? refusal("ASSET_TOO_LARGE", { bytes: declared, limit: ASSET_LIMITS.maxUploadBytes })
      : refusal(
          "ASSET_TOO_LARGE",
          { bytes: declared, limit: expected },
          `The upload is ${declared} bytes, more than the ${expected} bytes its ticket was issued for. Ask for a ticket with the file's exact size.`
        )
  if (declared < expected)
    return refusal("INVALID_INPUT", {
      reason: `the upload is ${declared} bytes but its ticket was issued for ${expected}`
    })
  return undefined
}

/** Streams the file to the response; a client that leaves ends it, with nothing to tell anyone. */
const send = (source: NodeJS.ReadableStream, res: ServerResponse) =>
  Effect.callback<void>((resume) => {
    pipeline(source, res).then(
      () => resume(Effect.void),
      () => resume(Effect.void)
    )
    return Effect.sync(() => res.destroy())
  })

const upload = Effect.fn("AssetServer.upload")(function* (
  { files }: TransferDeps,
  req: IncomingMessage,
  res: ServerResponse,
  ticket: Ticket,
  workspace: string
) {
  const expected = ticket.bytes ?? 0
  const refused = sizeRefusal(contentLengthOf(req), expected)
  if (refused !== undefined) return yield* Effect.fail(refused)
  const info = yield* files.write(workspace, ticket.path, req, expected)
  const text = JSON.stringify(info)
  res.writeHead(201, {
    ...COMMON,
    ...corsHeaders(ticket.origin),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text))
  })
  res.end(text)
})

const download = Effect.fn("AssetServer.download")(function* (
  { files }: TransferDeps,
  res: ServerResponse,
  ticket: Ticket,
  workspace: string
) {
  const { info, stream } = yield* files.open(workspace, ticket.path)
  res.writeHead(200, {
    ...COMMON,
    ...corsHeaders(ticket.origin),
    "content-type": info.contentType,
    "content-length": String(info.bytes),
    "last-modified": new Date(info.modifiedAt).toUTCString(),
    // Bytes for the SDK to read, never a document to render on this origin.
    "content-security-policy": "default-src 'none'; sandbox",
    "content-disposition": "attachment"
  })
  if (info.bytes === 0) res.end()
  else yield* send(stream, res)
}, Effect.scoped)

/** Ticket, origin, token, expiry and method, then the session, then the body: each refusal before the next. */
export const transfer = Effect.fn("AssetServer.transfer")(function* (
  deps: TransferDeps,
  req: IncomingMessage,
  res: ServerResponse,
  id: string
) {
  const token = req.headers[ASSET_TICKET_HEADER]
  const verdict = yield* deps.tickets.redeem({
    id,
    token: typeof token === "string" ? token : undefined,
    origin: req.headers.origin,
    method: req.method ?? ""
  })
  if (verdict._tag === "Refused")
    return refuse(req, res, refusal(verdict.code, { reason: verdict.reason }), verdict.corsOrigin)
  const { ticket } = verdict
  yield* Effect.gen(function* () {
    const session = yield* deps.sessions.access(ticket.origin, ticket.sessionId)
    const workspace = session.workspace
    if (ticket.method === "PUT") yield* upload(deps, req, res, ticket, workspace)
    else yield* download(deps, res, ticket, workspace)
  }).pipe(Effect.catch((error) => Effect.sync(() => refuse(req, res, error, ticket.origin))))
})
