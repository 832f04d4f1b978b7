/**
 * Loopback — the bridge over HTTP on 127.0.0.1:<random>, for the tests and `npm run desktop:preview` only (the app
 * itself uses Electron IPC): POST /call answers one `DesktopResponse`, POST /watch streams NDJSON
 * `DesktopStreamItem`s, each refused 403 with a coded body (UNAUTHORIZED) unless it carries this run's token in
 * `x-pedelec-desktop-token`; GET serves the built renderer (public files, no token: the page is told the token in
 * its URL's fragment). A `Host` other than this listener's is refused too, so a rebinding name cannot reach it.
 * What a message means is Bridge's; this file only carries them.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import { readFile } from "node:fs/promises"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { LOOPBACK } from "@pedelec/contracts/link/DesktopLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Bridge, type BridgeShape } from "./Bridge.ts"

const MAX_BODY = 1024 * 1024
const FILES: Readonly<Record<string, string>> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/app.js": "app.js",
  "/app.js.map": "app.js.map",
  "/styles.css": "styles.css"
}
const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json",
  ".css": "text/css; charset=utf-8"
}
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'"

export interface LoopbackOptions {
  /** The built renderer (apps/desktop-ui/dist). */
  readonly staticDir: string
  /** Defaults to 256 random bits. */
  readonly token?: string
}

export interface LoopbackShape {
  readonly port: number
  readonly token: string
  /** The page to open: the renderer, with the token in the fragment. */
  readonly pageUrl: string
}

const refusal = (reason: string) =>
  JSON.stringify({
    ok: false,
    error: PedelecError.fromCode("UNAUTHORIZED", "desktop", { details: { reason } }).toWire()
  })

const send = (response: http.ServerResponse, status: number, type: string, body: string | Buffer) => {
  response.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": CSP
  })
  response.end(body)
}

const sameToken = (given: string | Array<string> | undefined, token: string) =>
  typeof given === "string" && given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token))

const readBody = (request: http.IncomingMessage) =>
  new Promise<unknown>((resolve) => {
    let size = 0
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY) chunks.push(chunk)
    })
    // A body that is not JSON (or too large) is passed on as a string: the bridge answers it INVALID_INPUT.
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      if (size > MAX_BODY) return resolve(`(a body of ${size} bytes)`)
      try {
        resolve(JSON.parse(text))
      } catch {
        resolve(text)
      }
    })
  })

const serveFile = async (staticDir: string, url: string, response: http.ServerResponse) => {
  const name = FILES[url.split(/[?#]/)[0] ?? ""]
  if (name === undefined) return send(response, 404, "text/plain", "not found")
  const body = await readFile(path.join(staticDir, name)).catch(() => undefined)
  if (body === undefined) return send(response, 404, "text/plain", `${name} is not built: npx nx run desktop-ui:build`)
  send(response, 200, TYPES[path.extname(name)] ?? "application/octet-stream", body)
}

const streamTo = (response: http.ServerResponse, items: Stream.Stream<unknown>) => {
  response.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" })
  const fiber = Effect.runFork(
    items.pipe(
      Stream.runForEach((item) => Effect.sync(() => response.write(`${JSON.stringify(item)}\n`))),
      Effect.ensuring(Effect.sync(() => response.end()))
    )
  )
  response.on("close", () => Effect.runFork(Fiber.interrupt(fiber)))
}

const handler =
  (bridge: BridgeShape, options: LoopbackOptions & { readonly token: string }, host: () => string) =>
  async (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (request.headers.host !== host()) return send(response, 403, "application/json", refusal("wrong Host"))
    if (request.method === "GET") return serveFile(options.staticDir, request.url ?? "/", response)
    const route = request.url
    if (request.method !== "POST" || (route !== LOOPBACK.call && route !== LOOPBACK.watch)) {
      return send(response, 404, "text/plain", "not found")
    }
    if (!sameToken(request.headers[LOOPBACK.tokenHeader], options.token)) {
      request.resume()
      return send(response, 403, "application/json", refusal("the loopback token is missing or wrong"))
    }
    const body = await readBody(request)
    if (route === LOOPBACK.watch) return streamTo(response, bridge.watch(body))
    send(response, 200, "application/json", JSON.stringify(await Effect.runPromise(bridge.call(body))))
  }

export class Loopback extends Context.Service<Loopback, LoopbackShape>()("pedelec/desktop/bridge/Loopback") {
  static readonly layer = (options: LoopbackOptions) =>
    Layer.effect(
      Loopback,
      Effect.gen(function* () {
        const bridge = yield* Bridge
        const token = options.token ?? randomBytes(32).toString("base64url")
        let port = 0
        const server = http.createServer(handler(bridge, { ...options, token }, () => `127.0.0.1:${port}`))
        port = yield* Effect.acquireRelease(
          Effect.callback<number>((resume) => {
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
          }),
          () =>
            Effect.callback<void>((resume) => {
              server.closeAllConnections()
              server.close(() => resume(Effect.void))
            })
        )
        return Loopback.of({ port, token, pageUrl: `http://127.0.0.1:${port}/#token=${token}` })
      })
    )
}
