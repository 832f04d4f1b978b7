/**
 * AssetServer — owns Core's loopback HTTP listener for asset bodies (SPEC §8): bound to 127.0.0.1 on a random port
 * for the life of Core, it serves `PUT` and `GET /assets/<ticket id>` with the token in the `x-pedelec-ticket` header,
 * answers CORS and Private Network Access preflights for the ticket's origin only, refuses any `Host` but its own
 * address (DNS rebinding), closes slow and idle connections and caps how many are open (TIMEOUTS), and sends refusals
 * as a JSON `{ code, message }`. Before it reads a byte of a body it has
 * checked the Host, the ticket, the origin and that the session is still live and that origin's. It does not decide
 * what a ticket allows (AssetTickets), where files go (AssetFiles) or who gets tickets (AssetAccess). Here are the
 * listener and the checks before a ticket is looked at (Host, route, method); one transfer is AssetServer/Transfer's,
 * and how answers are written AssetServer/Answers'.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { ASSET_TICKET_HEADER } from "@pedelec/contracts/Assets"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import { AssetFiles } from "./AssetFiles.ts"
import { COMMON, corsHeaders, refusal, refuse } from "./AssetServer/Answers.ts"
import { type TransferDeps, transfer } from "./AssetServer/Transfer.ts"
import { AssetTickets, TICKET_ID_PATTERN } from "./AssetTickets.ts"
import { Sessions } from "./Sessions.ts"

export const ASSET_HOST = "127.0.0.1"
const ROUTE = /^\/assets\/([^/?#]+)$/

/**
 * Node's defaults let a slow or idle client hold a connection for minutes (300 sockets at 1 byte/s were all still
 * open after 20 s): headers must arrive within 5 s, a whole request (a 100 MiB body included, so at least
 * ~0.85 MiB/s) within 120 s, an idle keep-alive socket goes after 5 s and a silent one after 10 s (Node's header timer
 * starts at the first byte), checked every second.
 */
const TIMEOUTS = {
  headersTimeout: 5_000,
  requestTimeout: 120_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000
} as const
const IDLE_SOCKET_MS = 10_000
/** Uploads and downloads at once, at most: one page rarely moves more than a few files together. */
const MAX_CONNECTIONS = 256
const ALLOWED_HEADERS = `${ASSET_TICKET_HEADER}, content-type`

/** What the listener serves requests with: `host` is its own `127.0.0.1:<port>`, known once it is bound. */
interface Listener extends TransferDeps {
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

/** Bound for the life of the layer's scope; closing it drops every open connection. */
const listen = (listener: Listener) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const created = createServer(TIMEOUTS, (req, res) => handle(listener, req, res))
      created.maxConnections = MAX_CONNECTIONS
      // Per socket, from its first moment: the server-wide timer leaves a socket that never sends a byte alone.
      created.on("connection", (socket) => socket.setTimeout(IDLE_SOCKET_MS, () => socket.destroy()))
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
        run: yield* FiberSet.makeRuntime<never>(),
        host: ""
      }
      const server = yield* listen(listener)
      const { port } = server.address() as AddressInfo
      listener.host = `${ASSET_HOST}:${port}`
      return AssetServer.of({ port, urlOf: (ticketId) => `http://${listener.host}/assets/${ticketId}` })
    })
  )
}
