/**
 * AssetServer — owns Core's loopback HTTP listener for asset bodies (SPEC §8): bound to 127.0.0.1 on a random port
 * for the life of Core, it serves `PUT` and `GET /assets/<ticket id>` with the token in the `x-pedelec-ticket` header,
 * answers CORS and Private Network Access preflights for the ticket's origin only, refuses any `Host` but its own
 * address (DNS rebinding), and sends refusals as a JSON `{ code, message }`. Before it reads a byte of a body it has
 * checked the Host, the ticket, the origin and that the session is still live and that origin's. It does not decide
 * what a ticket allows (AssetTickets), where files go (AssetFiles) or who gets tickets (AssetAccess).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { pipeline } from "node:stream/promises"
import { ASSET_LIMITS, ASSET_TICKET_HEADER, type AssetRefusal } from "@pedelec/contracts/Assets"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import { AssetFiles } from "./AssetFiles.ts"
import { AssetTickets, TICKET_ID_PATTERN, type Ticket } from "./AssetTickets.ts"
import { Sessions } from "./Sessions.ts"

export const ASSET_HOST = "127.0.0.1"
const ROUTE = /^\/assets\/([^/?#]+)$/
const ALLOWED_HEADERS = `${ASSET_TICKET_HEADER}, content-type`
/** After a refusal the rest of a body is read and dropped (so the client reads the answer), up to this much. */
const DISCARD_LIMIT = ASSET_LIMITS.maxUploadBytes + 1024 * 1024

const statusOf = (code: ErrorCode): number => {
  switch (code) {
    case "INVALID_INPUT":
    case "ASSET_PATH_INVALID":
      return 400
    case "ASSET_UNAUTHORIZED":
    case "SESSION_ACCESS_DENIED":
      return 403
    case "ASSET_NOT_FOUND":
    case "SESSION_NOT_FOUND":
      return 404
    case "ASSET_TICKET_EXPIRED":
    case "SESSION_ENDED":
      return 410
    case "ASSET_TOO_LARGE":
      return 413
    default:
      return 500
  }
}

const refusal = (code: ErrorCode, details: Record<string, string | number>, message?: string) =>
  PedelecError.fromCode(code, "core", message === undefined ? { details } : { details, message })

/** Only for the ticket's own origin: any other page gets no CORS allowance, so its browser hides the answer. */
const corsHeaders = (origin: string | undefined): Record<string, string> =>
  origin === undefined ? { vary: "Origin" } : { "access-control-allow-origin": origin, vary: "Origin" }

const COMMON = { "x-content-type-options": "nosniff", "cache-control": "no-store" }

/**
 * Reads and drops what is left of a refused body, then `done`; too much, and it hangs up. A client that is still
 * sending when its answer comes would otherwise find the connection closed (EPIPE) before it read the answer.
 */
const discard = (req: IncomingMessage, done: () => void) => {
  let dropped = 0
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > DISCARD_LIMIT) req.destroy()
  })
  req.once("end", done)
  req.on("error", () => undefined)
  req.resume()
}

const refuse = (
  req: IncomingMessage,
  res: ServerResponse,
  error: PedelecError,
  corsOrigin: string | undefined,
  status = statusOf(error.code)
) => {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body: AssetRefusal = { code: error.code, message: error.message }
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...COMMON,
    ...corsHeaders(corsOrigin),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text))
  })
  if (req.complete) {
    res.end(text)
    return
  }
  // The whole answer now, the end of the response (and a `Connection: close` hang-up) once the body is dropped.
  res.write(text)
  discard(req, () => res.end())
}

const contentLengthOf = (req: IncomingMessage): number | undefined | "invalid" => {
  const value = req.headers["content-length"]
  if (value === undefined) return undefined
  return /^\d{1,16}$/.test(value) ? Number(value) : "invalid"
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

export class AssetServer extends Context.Service<
  AssetServer,
  {
    readonly port: number
    /** Where a ticket is used: `http://127.0.0.1:<port>/assets/<id>`. */
    readonly urlOf: (ticketId: string) => string
  }
>()("pedelec/core/AssetServer") {
  static readonly layer = Layer.effect(
    AssetServer,
    Effect.gen(function* () {
      const tickets = yield* AssetTickets
      const files = yield* AssetFiles
      const sessions = yield* Sessions
      const run = yield* FiberSet.makeRuntime<never>()
      let host = ""

      const upload = Effect.fn("AssetServer.upload")(function* (
        req: IncomingMessage,
        res: ServerResponse,
        ticket: Ticket,
        workspace: string
      ) {
        const expected = ticket.bytes ?? 0
        const declared = contentLengthOf(req)
        if (declared === "invalid")
          return yield* Effect.fail(refusal("INVALID_INPUT", { reason: "the Content-Length header is not a number" }))
        if (declared !== undefined && declared > expected)
          return yield* Effect.fail(
            declared > ASSET_LIMITS.maxUploadBytes
              ? refusal("ASSET_TOO_LARGE", { bytes: declared, limit: ASSET_LIMITS.maxUploadBytes })
              : refusal(
                  "ASSET_TOO_LARGE",
                  { bytes: declared, limit: expected },
                  `The upload is ${declared} bytes, more than the ${expected} bytes its ticket was issued for. Ask for a ticket with the file's exact size.`
                )
          )
        if (declared !== undefined && declared < expected)
          return yield* Effect.fail(
            refusal("INVALID_INPUT", {
              reason: `the upload is ${declared} bytes but its ticket was issued for ${expected}`
            })
          )
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
      const transfer = Effect.fn("AssetServer.transfer")(function* (
        req: IncomingMessage,
        res: ServerResponse,
        id: string
      ) {
        const token = req.headers[ASSET_TICKET_HEADER]
        const verdict = yield* tickets.redeem({
          id,
          token: typeof token === "string" ? token : undefined,
          origin: req.headers.origin,
          method: req.method ?? ""
        })
        if (verdict._tag === "Refused")
          return refuse(req, res, refusal(verdict.code, { reason: verdict.reason }), verdict.corsOrigin)
        const { ticket } = verdict
        yield* Effect.gen(function* () {
          const session = yield* sessions.access(ticket.origin, ticket.sessionId)
          const workspace = session.workspace
          if (ticket.method === "PUT") yield* upload(req, res, ticket, workspace)
          else yield* download(res, ticket, workspace)
        }).pipe(Effect.catch((error) => Effect.sync(() => refuse(req, res, error, ticket.origin))))
      })

      const preflight = (req: IncomingMessage, res: ServerResponse, id: string) => {
        const origin = req.headers.origin
        const ticket = tickets.preflight(id, origin, req.headers["access-control-request-method"])
        if (ticket === undefined)
          return refuse(
            req,
            res,
            refusal("ASSET_UNAUTHORIZED", { reason: "no usable ticket for this origin" }),
            undefined
          )
        const privateNetwork = req.headers["access-control-request-private-network"] === "true"
        res.writeHead(204, {
          ...COMMON,
          ...corsHeaders(ticket.origin),
          "access-control-allow-methods": ticket.method,
          "access-control-allow-headers": ALLOWED_HEADERS,
          ...(privateNetwork ? { "access-control-allow-private-network": "true" } : {})
        })
        res.end()
      }

      const handle = (req: IncomingMessage, res: ServerResponse) => {
        // DNS rebinding: a name that resolves to 127.0.0.1 is still not this server's address.
        if (req.headers.host !== host)
          return refuse(
            req,
            res,
            refusal("ASSET_UNAUTHORIZED", { reason: `the Host header is not ${host}` }),
            undefined,
            421
          )
        const id = ROUTE.exec(req.url ?? "")?.[1]
        if (id === undefined || !TICKET_ID_PATTERN.test(id))
          return refuse(req, res, refusal("INVALID_INPUT", { reason: "no such route" }), undefined, 404)
        if (req.method === "OPTIONS") return preflight(req, res, id)
        if (req.method !== "PUT" && req.method !== "GET") {
          res.setHeader("allow", "GET, PUT, OPTIONS")
          return refuse(req, res, refusal("INVALID_INPUT", { reason: "use GET or PUT" }), undefined, 405)
        }
        run(
          transfer(req, res, id).pipe(
            Effect.catchCause((cause) =>
              Effect.andThen(
                Effect.logWarning("asset transfer failed", cause),
                Effect.sync(() => refuse(req, res, refusal("INTERNAL_ERROR", { component: "core" }), undefined))
              )
            )
          )
        )
      }

      const server = yield* Effect.acquireRelease(
        Effect.callback<Server>((resume) => {
          const created = createServer(handle)
          created.once("error", (error) => resume(Effect.die(error)))
          created.listen({ host: ASSET_HOST, port: 0 }, () => resume(Effect.succeed(created)))
        }),
        (listening) =>
          Effect.callback<void>((resume) => {
            listening.close(() => resume(Effect.void))
            listening.closeAllConnections()
          })
      )
      const { port } = server.address() as AddressInfo
      host = `${ASSET_HOST}:${port}`
      return AssetServer.of({ port, urlOf: (ticketId) => `http://${host}/assets/${ticketId}` })
    })
  )
}
