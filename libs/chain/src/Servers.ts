/**
 * Servers — the page's origins: one plain http server on 127.0.0.1 (reachable as `http://127.0.0.1:<port>` and as
 * the distinct origin `http://localhost:<port>`) and, given a certificate, one https server reachable as
 * `https://pedelec-e2e.test:<port>` through Chromium's host-resolver rules. Both serve the same routes; a route's
 * body is read per request, so a rebuilt file is served fresh.
 */
import http from "node:http"
import https from "node:https"
import type { AddressInfo } from "node:net"
import { type Certificate, HTTPS_HOST } from "./Certificate.ts"

export interface Route {
  readonly type: string
  readonly body: () => Promise<string | Uint8Array>
}

export type Routes = Readonly<Record<string, Route>>

export interface Origins {
  readonly http: string
  /** Same server as `http`, but another origin to the browser (origin = scheme + host + port). */
  readonly localhost: string
  readonly https: string | undefined
  readonly close: () => Promise<void>
}

const handler = (routes: Routes) => (request: http.IncomingMessage, response: http.ServerResponse) => {
  const route = routes[new URL(request.url ?? "/", "http://page").pathname]
  if (route === undefined) {
    response.writeHead(404, { "content-type": "text/plain" }).end("not found")
    return
  }
  route.body().then(
    (body) => response.writeHead(200, { "content-type": route.type, "cache-control": "no-store" }).end(body),
    (error: unknown) => response.writeHead(500, { "content-type": "text/plain" }).end(String(error))
  )
}

const listen = (server: http.Server) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

const close = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

export const serve = async (routes: Routes, certificate?: Certificate): Promise<Origins> => {
  const plain = http.createServer(handler(routes))
  const secure = certificate === undefined ? undefined : https.createServer(certificate, handler(routes))
  const plainPort = await listen(plain)
  const securePort = secure === undefined ? undefined : await listen(secure)
  return {
    http: `http://127.0.0.1:${plainPort}`,
    localhost: `http://localhost:${plainPort}`,
    https: securePort === undefined ? undefined : `https://${HTTPS_HOST}:${securePort}`,
    close: async () => {
      await close(plain)
      if (secure !== undefined) await close(secure)
    }
  }
}
