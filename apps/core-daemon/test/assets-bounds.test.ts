// The asset server of a real Core against what a local attacker or a slow client does: a hard link inside assets/ to
// a file outside the workspace is refused ASSET_PATH_INVALID on GET and PUT (a ticket for it, and a ticket issued
// before the link was made), and connections that drip their headers or never send a byte are closed within the
// headers deadline (PEDELEC_ASSET_HEADERS_MS, 2 s here) whether or not the peer reads, while a 100 MiB upload still
// goes through.
import { link, mkdir, rm, writeFile } from "node:fs/promises"
import { request } from "node:http"
import net from "node:net"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ASSET_LIMITS, ASSET_TICKET_HEADER, type AssetPath, type AssetTicket } from "@pedelec/contracts/Assets"
import {
  coreForFile,
  failureOf,
  hostClient,
  ORIGIN,
  openSession,
  removeHome,
  tempDir
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const HEADERS_MS = 2_000
const core = coreForFile({ env: { PEDELEC_ASSET_HEADERS_MS: String(HEADERS_MS) } })
const figure = (line: string) => process.stderr.write(`${line}\n`)
const io = <A>(run: () => Promise<A>) => Effect.promise(run)

/** One request with the ticket's token from the session's origin; the status and the body's text. */
const transfer = (ticket: AssetTicket, body?: Buffer | (() => AsyncIterable<Buffer>)) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const url = new URL(ticket.url)
    const req = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: ticket.method,
      agent: false,
      headers: { origin: ORIGIN, [ASSET_TICKET_HEADER]: ticket.token }
    })
    req.on("response", (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }))
    })
    req.on("error", reject)
    if (body === undefined) req.end()
    else if (Buffer.isBuffer(body)) req.end(body)
    else
      (async () => {
        for await (const chunk of body()) if (!req.write(chunk)) await new Promise((go) => req.once("drain", go))
        req.end()
      })()
  })

type IdleKind = "dripping" | "silent" | "silent, reading"
const IDLE_KINDS: ReadonlyArray<IdleKind> = ["dripping", "silent", "dripping", "silent, reading"]

/**
 * A connection that drips a request line at 1 byte/s and never finishes its headers (reading its refusal), or that
 * never sends a byte, reading what it is sent or never reading (such a peer sees a close only if nothing was written
 * before it: Node's own bare 408 kept those open for good before issue 14's fix).
 */
const openIdle = (url: URL, pick: number, started: number) => {
  const kind = IDLE_KINDS[pick]!
  const socket = net.createConnection({ host: url.hostname, port: Number(url.port) })
  const state = { kind, socket, closedAt: undefined as number | undefined, received: 0 }
  socket.on("error", () => undefined)
  socket.on("close", () => {
    state.closedAt = Date.now() - started
  })
  if (kind !== "silent") socket.on("data", (chunk: Buffer) => (state.received += chunk.length))
  if (kind === "dripping") {
    const line = `GET /assets/x HTTP/1.1\r\nHost: ${url.host}\r\n`
    let at = 0
    const drip = setInterval(() => socket.write(line[at++ % line.length]!), 1000)
    socket.on("close", () => clearInterval(drip))
  }
  return state
}

const codeOf = (reply: { readonly text: string }) => (JSON.parse(reply.text) as { readonly code: string }).code

describe("asset server bounds", () => {
  it.live("a hard link to a file outside the workspace is ASSET_PATH_INVALID on GET and PUT, never served", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { session, sessionId } = yield* openSession(client)
      const assets = path.join(session.workspace.path, ".pedelec-runtime", "assets")
      const outside = yield* io(() => tempDir("pedelec-outside-"))
      yield* Effect.addFinalizer(() => io(() => removeHome(outside)))
      const secret = path.join(outside, "secret.txt")
      yield* io(() => writeFile(secret, "outside secret\n"))
      const asset = (name: string) => name as AssetPath

      // A regular file, its download ticket issued, then swapped for a hard link to the outside file.
      const body = Buffer.from("inside\n")
      const up = yield* client["asset.upload_ticket"]({
        origin: ORIGIN,
        sessionId,
        path: asset("swapped.txt"),
        bytes: body.length,
        contentType: "text/plain"
      })
      assert.strictEqual((yield* io(() => transfer(up, body))).status, 201)
      const early = yield* client["asset.download_ticket"]({ origin: ORIGIN, sessionId, path: asset("swapped.txt") })
      yield* io(() => rm(path.join(assets, "swapped.txt")))
      yield* io(() => link(secret, path.join(assets, "swapped.txt")))
      const got = yield* io(() => transfer(early))
      figure(`GET of a hard link made after the ticket: ${got.status} ${got.text.slice(0, 120)}`)
      assert.notInclude(got.text, "outside secret")
      assert.strictEqual(codeOf(got), "ASSET_PATH_INVALID")

      // Tickets for the hard link itself: refused at the RPC, for reading and for replacing it.
      yield* io(() => mkdir(assets, { recursive: true }))
      yield* io(() => link(secret, path.join(assets, "leak.txt")))
      const leak = asset("leak.txt")
      const download = yield* failureOf(client["asset.download_ticket"]({ origin: ORIGIN, sessionId, path: leak }))
      assert.strictEqual(download?.code, "ASSET_PATH_INVALID")
      const upload = yield* failureOf(
        client["asset.upload_ticket"]({ origin: ORIGIN, sessionId, path: leak, bytes: 3, contentType: "text/plain" })
      )
      assert.strictEqual(upload?.code, "ASSET_PATH_INVALID")
      const listed = yield* client["asset.list"]({ origin: ORIGIN, sessionId })
      assert.notInclude(
        listed.map((info): string => info.path),
        "leak.txt"
      )
    }).pipe(Effect.scoped)
  )

  it.live("slow and silent connections are closed within the headers deadline; a 100 MiB upload goes through", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId } = yield* openSession(client)
      const bytes = ASSET_LIMITS.maxUploadBytes
      const ticket = yield* client["asset.upload_ticket"]({
        origin: ORIGIN,
        sessionId,
        path: "big.bin" as AssetPath,
        bytes,
        contentType: "application/octet-stream"
      })
      const started = Date.now()
      const sockets = Array.from({ length: 100 }, (_, index) => openIdle(new URL(ticket.url), index % 4, started))
      const chunk = Buffer.alloc(1024 * 1024, 0x62)
      const uploadStarted = Date.now()
      const uploaded = yield* io(() =>
        transfer(ticket, async function* () {
          for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk
        })
      )
      const uploadMs = Date.now() - uploadStarted
      // Past the deadline and the sweep with room for a loaded machine, well short of Node's own minutes.
      yield* Effect.sleep(Math.max(0, HEADERS_MS + 5_000 - (Date.now() - started)))
      const openOf = (kind: IdleKind) => sockets.filter((s) => s.kind === kind && s.closedAt === undefined).length
      const latest = Math.max(...sockets.map((s) => s.closedAt ?? Number.NaN))
      const heard = sockets.filter((s) => s.kind === "silent, reading").reduce((sum, s) => sum + s.received, 0)
      for (const { socket } of sockets) socket.destroy()
      figure(
        `100 slow/silent connections, headers deadline ${HEADERS_MS} ms: open after ${HEADERS_MS + 5_000} ms: ` +
          `dripping ${openOf("dripping")}, silent ${openOf("silent")}, silent reading ${openOf("silent, reading")} ` +
          `(last closed at ${latest} ms; silent readers heard ${heard} bytes); 100 MiB upload ${uploaded.status} in ${uploadMs} ms`
      )
      assert.strictEqual(uploaded.status, 201, uploaded.text)
      assert.strictEqual(openOf("dripping"), 0)
      // A socket that never sends a byte, even one whose peer never reads: it must see the close.
      assert.strictEqual(openOf("silent"), 0)
      assert.strictEqual(openOf("silent, reading"), 0)
      assert.isAtMost(latest, HEADERS_MS + 3_000)
    }).pipe(Effect.scoped)
  )
})
