/**
 * AssetServer — owns Core's loopback HTTP listener for asset bodies (SPEC §8): bound to 127.0.0.1 on a random port
 * for the life of Core, it serves `PUT` and `GET /assets/<ticket id>` with the token in the `x-pedelec-ticket` header,
 * answers CORS and Private Network Access preflights for the ticket's origin only, refuses any `Host` but its own
 * address (DNS rebinding), closes slow, silent and stalled connections and caps how many are open (timeoutsFor), and
 * sends refusals as a JSON `{ code, message }`. Before it reads a byte of a body it has
 * checked the Host, the ticket, the origin and that the session is still live and that origin's. It does not decide
 * what a ticket allows (AssetTickets), where files go (AssetFiles) or who gets tickets (AssetAccess). Here are the
 * listener and the checks before a ticket is looked at (Host, route, method); one transfer is AssetServer/Transfer's,
 * and how answers are written AssetServer/Answers'.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { ASSET_TICKET_HEADER } from "@pedelec/contracts/Assets"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import { AssetFiles } from "./AssetFiles.ts"
import { COMMON, clientErrorAnswer, corsHeaders, refusal, refuse } from "./AssetServer/Answers.ts"
import { type TransferDeps, transfer } from "./AssetServer/Transfer.ts"
import { AssetTickets, TICKET_ID_PATTERN } from "./AssetTickets.ts"
import { milliseconds } from "./CoreConfig.ts"
import { Sessions } from "./Sessions.ts"

export const ASSET_HOST = "127.0.0.1"
const ROUTE = /^\/assets\/([^/?#]+)$/

/**
 * Node's defaults let a slow or silent client hold a connection for minutes (300 sockets at 1 byte/s were all still
 * open after 20 s). Node counts `headersTimeout` from the accept, not from the first byte (so on 20.20 and 22.19), so
 * one deadline, `PEDELEC_ASSET_HEADERS_MS` (5 s), bounds a socket that never sends a byte and one that drips its
 * headers alike; the sweep that enforces it runs every quarter of it, at most every second. A whole request (a
 * 100 MiB body included, so at least ~0.85 MiB/s) has 120 s, an idle keep-alive socket 5 s.
 */
const timeoutsFor = (headersMs: number) => ({
  headersTimeout: headersMs,
  // Node refuses a request deadline shorter than the headers one.
  requestTimeout: Math.max(120_000, headersMs),
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersMs / 4))),
  // Node's own answer to a request without Host is a bare 400 that bypasses clientError; `handle` refuses it coded
  // (ASSET_UNAUTHORIZED, 421) as it does any Host that is not this server's.
  requireHostHeader: false
})
/** A transfer silent both ways this long goes: requestTimeout bounds a request, not a client that stopped reading. */
const STALL_MS = 10_000
/** Uploads and downloads at once, at most: one page rarely moves more than a few files together. */
const MAX_CONNECTIONS = 256
const ALLOWED_HEADERS = `${ASSET_TICKET_HEADER}, content-type`

/** What the listener serves requests with: `host` is its own `127.0.0.1:<port>`, known once it is bound. */
interface Listener extends TransferDeps {
  /** The answer in progress on each socket, so Node's own refusal is never written into the middle of one. */
  readonly answers: WeakMap<Duplex, ServerResponse>
  /** Forks a transfer into the layer's FiberSet, so closing the layer interrupts the ones still running. */
  readonly run: (effect: Effect.Effect<void>) => unknown
  host: string
}

const preflight = (listener: Listener, req: IncomingMessage, res: ServerResponse, id: string) => {
  const origin = req.headers.origin
  const ticket = listener.tickets.preflight(id, origin, req.headers["access-control-request-method"])
  if (ticket === undefined)
    return refuse(req, res, refusal("ASSET_UNAUTHORIZED", { reason: "no usable ticket for this origin" }), undefined)
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

/** Host, route and method, in that order; then a preflight, or a transfer forked into the listener's FiberSet. */
const handle = (listener: Listener, req: IncomingMessage, res: ServerResponse) => {
  const { host } = listener
  listener.answers.set(req.socket, res)
  // DNS rebinding: a name that resolves to 127.0.0.1 is still not this server's address.
  if (req.headers.host !== host)
    return refuse(req, res, refusal("ASSET_UNAUTHORIZED", { reason: `the Host header is not ${host}` }), undefined, 421)
  const id = ROUTE.exec(req.url ?? "")?.[1]
  if (id === undefined || !TICKET_ID_PATTERN.test(id))
    return refuse(req, res, refusal("INVALID_INPUT", { reason: "no such route" }), undefined, 404)
  if (req.method === "OPTIONS") return preflight(listener, req, res, id)
  if (req.method !== "PUT" && req.method !== "GET") {
    res.setHeader("allow", "GET, PUT, OPTIONS")
    return refuse(req, res, refusal("INVALID_INPUT", { reason: "use GET or PUT" }), undefined, 405)
  }
  listener.run(
    transfer(listener, req, res, id).pipe(
      Effect.catchCause((cause) =>
        Effect.andThen(
          Effect.logWarning("asset transfer failed", cause),
          Effect.sync(() => refuse(req, res, refusal("INTERNAL_ERROR", { component: "core" }), undefined))
        )
      )
    )
  )
}

/**
 * Node's own answer to a request that ran out of time before its headers is a bare 408, even to a socket that never
 * sent a byte: a silent peer never reads it, so it never sees the hang-up behind it (its socket looked open for good,
 * issue 14). Such a socket is closed with nothing written, so any peer sees the close at once (`bytesRead` cannot
 * tell silent from dripping: Node's parser reads the socket's handle itself). Any other request Node gave up on gets
 * the status with a coded body, unless an answer of ours is already on the wire: that one is ended by a hang-up once it is out.
 */
const onClientError = (listener: Listener) => (error: NodeJS.ErrnoException, socket: Duplex) => {
  const answer = listener.answers.get(socket)
  const beforeHeaders = error.code === "ERR_HTTP_REQUEST_TIMEOUT" && answer === undefined
  const midAnswer = answer?.headersSent === true && !answer.writableEnded
  if (beforeHeaders || !socket.writable) return void socket.destroy()
  // What of our answer is written still goes out (a refusal is whole before its body is read), then the hang-up.
  socket.end(midAnswer ? undefined : clientErrorAnswer(error), () => socket.destroy())
}

/** Bound for the life of the layer's scope; closing it drops every open connection. */
const listen = (listener: Listener, headersMs: number) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const created = createServer(timeoutsFor(headersMs), (req, res) => handle(listener, req, res))
      created.maxConnections = MAX_CONNECTIONS
      created.on("connection", (socket) => socket.setTimeout(STALL_MS, () => socket.destroy()))
      created.on("clientError", onClientError(listener))
      created.once("error", (error) => resume(Effect.die(error)))
      created.listen({ host: ASSET_HOST, port: 0 }, () => resume(Effect.succeed(created)))
    }),
    (listening) =>
      Effect.callback<void>((resume) => {
        listening.close(() => resume(Effect.void))
        listening.closeAllConnections()
      })
  )

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
      const listener: Listener = {
        tickets: yield* AssetTickets,
        files: yield* AssetFiles,
        sessions: yield* Sessions,
        answers: new WeakMap(),
        run: yield* FiberSet.makeRuntime<never>(),
        host: ""
      }
      const headersMs = yield* milliseconds("PEDELEC_ASSET_HEADERS_MS", 5_000).pipe(Effect.orDie)
      const server = yield* listen(listener, headersMs)
      const { port } = server.address() as AddressInfo
      listener.host = `${ASSET_HOST}:${port}`
      return AssetServer.of({ port, urlOf: (ticketId) => `http://${listener.host}/assets/${ticketId}` })
    })
  )
}
