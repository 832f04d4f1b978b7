// The asset server of a real Core over real loopback HTTP (SPEC §8): tickets from the host role, bodies PUT and GET
// directly with node:http (which lets a test set Host and Origin as a browser or an attacker would), files checked
// on disk in the session's workspace. Refusals: expired, reused, wrong-token and another session's tickets, symlink
// escapes, another origin (no CORS allowance), a wrong Host, over-limit and short bodies.
import { createHash, randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import { mkdir, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises"
import { type IncomingHttpHeaders, request } from "node:http"
import path from "node:path"
import { Readable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { ASSET_LIMITS, ASSET_TICKET_HEADER, type AssetPath, type AssetTicket } from "@pedelec/contracts/Assets"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import {
  coreForFile,
  failureCode,
  hostClient,
  ORIGIN,
  OTHER_ORIGIN,
  openSession,
  removeHome,
  tempDir,
  waitUntil
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const core = coreForFile()

const MiB = 1024 * 1024

// ---------------------------------------------------------------------------------------------------------------
// HTTP, as the SDK (or someone else) would speak it

interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  /** sha256 and length of the body, when it was hashed rather than kept. */
  readonly sha256: string
  readonly bytes: number
}

type Body = Buffer | (() => AsyncIterable<Buffer>)

interface Send {
  readonly method: string
  readonly url: string
  readonly headers?: Record<string, string>
  readonly body?: Body
  /** Hash the response body instead of keeping it (a 50 MiB download). */
  readonly hashOnly?: boolean
  /** Stop sending after this many bytes once the answer is in (a refused body need not be sent to the end). */
  readonly abandonBody?: boolean
}

const send = (options: Send) =>
  new Promise<Reply>((resolve, reject) => {
    const target = new URL(options.url)
    let settled = false
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: options.method,
      headers: options.headers,
      agent: false
    })
    req.on("response", (res) => {
      const hash = createHash("sha256")
      const kept: Array<Buffer> = []
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
        hash.update(chunk)
        if (!options.hashOnly) kept.push(chunk)
      })
      res.on("end", () => {
        settled = true
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(kept),
          sha256: hash.digest("hex"),
          bytes
        })
        if (options.abandonBody) req.destroy()
      })
      res.on("error", (error) => {
        if (!settled) reject(error)
      })
    })
    req.on("error", (error) => {
      // A refused upload may be cut off after its answer arrived: the answer is what counts.
      if (!settled) reject(error)
    })
    const { body } = options
    if (body === undefined) req.end()
    else if (Buffer.isBuffer(body)) req.end(body)
    else Readable.from(body()).pipe(req)
  })

const io = <A>(run: () => Promise<A>) => Effect.promise(run)

interface Presenting {
  readonly origin?: string | undefined
  readonly token?: string | undefined
  readonly host?: string
  readonly headers?: Record<string, string>
}

const headersFor = (ticket: AssetTicket, presenting: Presenting, extra: Record<string, string> = {}) => {
  const headers: Record<string, string> = { ...extra, ...presenting.headers }
  const origin = "origin" in presenting ? presenting.origin : ORIGIN
  const token = "token" in presenting ? presenting.token : ticket.token
  if (origin !== undefined) headers.origin = origin
  if (token !== undefined) headers[ASSET_TICKET_HEADER] = token
  if (presenting.host !== undefined) headers.host = presenting.host
  return headers
}

const put = (ticket: AssetTicket, body: Body, presenting: Presenting = {}, abandonBody = false) =>
  io(() =>
    send({
      method: "PUT",
      url: ticket.url,
      body,
      abandonBody,
      headers: headersFor(
        ticket,
        presenting,
        Buffer.isBuffer(body) ? { "content-type": "application/octet-stream" } : { "transfer-encoding": "chunked" }
      )
    })
  )

const get = (ticket: AssetTicket, presenting: Presenting = {}, hashOnly = false) =>
  io(() => send({ method: "GET", url: ticket.url, headers: headersFor(ticket, presenting), hashOnly }))

/** The refusal a response carries: its status and `{ code, message }`. */
const refusalOf = (reply: Reply) => {
  const said = JSON.parse(reply.body.toString("utf8")) as { code: string; message: string }
  assert.strictEqual(reply.headers["content-type"], "application/json")
  assert.isString(said.message)
  return { status: reply.status, code: said.code }
}

/** `bytes` of reproducible pseudo-random data in 1 MiB chunks, never all in memory, and its sha256. */
const payload = (bytes: number, seed = "pedelec") => {
  const block = createHash("sha512").update(seed).digest()
  const chunkOf = (index: number, size: number) => {
    const chunk = Buffer.allocUnsafe(size)
    for (let offset = 0; offset < size; offset += block.length) block.copy(chunk, offset, 0, size - offset)
    if (size >= 4) chunk.writeUInt32BE(index, 0)
    return chunk
  }
  const chunks = function* () {
    for (let index = 0, sent = 0; sent < bytes; index++) {
      const size = Math.min(MiB, bytes - sent)
      sent += size
      yield chunkOf(index, size)
    }
  }
  const hash = createHash("sha256")
  for (const chunk of chunks()) hash.update(chunk)
  return {
    bytes,
    sha256: hash.digest("hex"),
    stream: async function* () {
      yield* chunks()
    }
  }
}

const sha256OfFile = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash("sha256")
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => resolve(hash.digest("hex")))
      .on("error", reject)
  })

// ---------------------------------------------------------------------------------------------------------------
// Sessions and their folders

const asset = (text: string) => text as AssetPath

const assetSession = (client: HostClient) =>
  Effect.gen(function* () {
    const { session, sessionId } = yield* openSession(client)
    const runtime = path.join(session.workspace.path, ".pedelec-runtime")
    return {
      sessionId,
      assets: path.join(runtime, "assets"),
      tmp: path.join(runtime, "tmp"),
      upload: (assetPath: string, bytes: number, contentType = "application/octet-stream") =>
        client["asset.upload_ticket"]({ origin: ORIGIN, sessionId, path: asset(assetPath), bytes, contentType }),
      download: (assetPath: string) =>
        client["asset.download_ticket"]({ origin: ORIGIN, sessionId, path: asset(assetPath) })
    }
  })

const listing = (dir: string) => io(() => readdir(dir, { recursive: true }).then((names) => names.sort()))

/** A folder outside the workspace with one file an escape would read or overwrite. */
const outsideFolder = Effect.gen(function* () {
  const dir = yield* io(() => tempDir("pedelec-outside-"))
  yield* Effect.addFinalizer(() => io(() => removeHome(dir)))
  yield* io(() => writeFile(path.join(dir, "secret.txt"), "outside secret\n"))
  return dir
})

const hello = Buffer.from("hello, asset\n")

/** The RPC did not go through: a typed refusal from Core, or the client's own schema refusing to send it. */
const refusedAtRpc = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => exit._tag === "Failure")

// ---------------------------------------------------------------------------------------------------------------

describe("assets through a real Core", () => {
  it.live(
    "a 50 MiB upload lands in the session's workspace and reads back byte for byte",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const session = yield* assetSession(client)
        const data = payload(50 * MiB)
        const ticket = yield* session.upload("big/data.bin", data.bytes)
        assert.strictEqual(ticket.method, "PUT")
        assert.match(ticket.url, /^http:\/\/127\.0\.0\.1:\d+\/assets\/[A-Za-z0-9_-]{22}$/)
        assert.match(ticket.token, /^[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(ticket.path, "big/data.bin")
        assert.approximately(ticket.expiresAt, Date.now() + ASSET_LIMITS.ticketTtlMs, 10_000)

        const stored = yield* put(ticket, data.stream)
        assert.strictEqual(stored.status, 201)
        assert.strictEqual(stored.headers["access-control-allow-origin"], ORIGIN)
        const info = JSON.parse(stored.body.toString("utf8"))
        assert.deepInclude(info, { path: "big/data.bin", bytes: data.bytes, contentType: "application/octet-stream" })
        const onDisk = path.join(session.assets, "big", "data.bin")
        assert.strictEqual(yield* io(() => sha256OfFile(onDisk)), data.sha256)
        assert.deepStrictEqual(yield* listing(session.tmp), [])

        const listed = yield* client["asset.list"]({ origin: ORIGIN, sessionId: session.sessionId })
        assert.deepStrictEqual(
          listed.map((entry) => [entry.path, entry.bytes]),
          [["big/data.bin", data.bytes]]
        )

        const back = yield* session.download("big/data.bin")
        assert.strictEqual(back.method, "GET")
        assert.notStrictEqual(back.token, ticket.token)
        const read = yield* get(back, {}, true)
        assert.strictEqual(read.status, 200)
        assert.strictEqual(read.headers["content-type"], "application/octet-stream")
        assert.strictEqual(read.headers["content-length"], String(data.bytes))
        assert.strictEqual(read.headers["x-content-type-options"], "nosniff")
        assert.strictEqual(read.headers["access-control-allow-origin"], ORIGIN)
        assert.isString(read.headers["last-modified"])
        assert.strictEqual(read.bytes, data.bytes)
        assert.strictEqual(read.sha256, data.sha256)
      }),
    120_000
  )

  it.live("list: every regular file, recursively, with content types from the extension; links skipped", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const outside = yield* outsideFolder
      for (const [name, type] of [
        ["notes.txt", "text/plain; charset=utf-8"],
        ["data/result.json", "application/json"],
        ["data/deep/pic.PNG", "image/png"],
        ["blob.xyz", "application/octet-stream"]
      ] as const) {
        const ticket = yield* session.upload(name, hello.length, "text/whatever")
        const stored = yield* put(ticket, hello)
        assert.strictEqual(stored.status, 201)
        assert.strictEqual(JSON.parse(stored.body.toString("utf8")).contentType, type)
      }
      // The agent may put anything there: a link (to a file or a folder outside) is not an asset.
      yield* io(() => symlink(path.join(outside, "secret.txt"), path.join(session.assets, "link.txt")))
      yield* io(() => symlink(outside, path.join(session.assets, "linked-dir")))
      const listed = yield* client["asset.list"]({ origin: ORIGIN, sessionId: session.sessionId })
      assert.deepStrictEqual(
        listed.map((entry) => [entry.path, entry.contentType, entry.bytes]),
        [
          ["blob.xyz", "application/octet-stream", hello.length],
          ["data/deep/pic.PNG", "image/png", hello.length],
          ["data/result.json", "application/json", hello.length],
          ["notes.txt", "text/plain; charset=utf-8", hello.length]
        ]
      )
      for (const entry of listed) assert.isAbove(entry.modifiedAt, Date.now() - 60_000)
      const read = yield* get(yield* session.download("notes.txt"))
      assert.strictEqual(read.headers["content-type"], "text/plain; charset=utf-8")
      assert.deepStrictEqual(read.body, hello)
      // Another origin lists nothing of it.
      const denied = yield* failureCode(client["asset.list"]({ origin: OTHER_ORIGIN, sessionId: session.sessionId }))
      assert.strictEqual(denied, "SESSION_ACCESS_DENIED")
    })
  )

  it.live("a ticket is single use: a second PUT or GET on it is ASSET_TICKET_EXPIRED", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("once.txt", hello.length)
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
      const again = yield* put(ticket, Buffer.from("HELLO, ASSET\n"))
      assert.deepStrictEqual(refusalOf(again), { status: 410, code: "ASSET_TICKET_EXPIRED" })
      // The page may read why: the request came from the ticket's origin.
      assert.strictEqual(again.headers["access-control-allow-origin"], ORIGIN)
      assert.deepStrictEqual(yield* io(() => readFile(path.join(session.assets, "once.txt"))), hello)

      const download = yield* session.download("once.txt")
      assert.strictEqual((yield* get(download)).status, 200)
      assert.deepStrictEqual(refusalOf(yield* get(download)), { status: 410, code: "ASSET_TICKET_EXPIRED" })
    })
  )

  it.live("a wrong or missing token is ASSET_UNAUTHORIZED and does not use the ticket up", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("guarded.txt", hello.length)
      const forged = randomBytes(32).toString("base64url")
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello, { token: forged })), {
        status: 403,
        code: "ASSET_UNAUTHORIZED"
      })
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello, { token: undefined })), {
        status: 403,
        code: "ASSET_UNAUTHORIZED"
      })
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello, { token: `${ticket.token}x` })), {
        status: 403,
        code: "ASSET_UNAUTHORIZED"
      })
      assert.deepStrictEqual(yield* listing(session.assets), [])
      // A failed guess is no denial of service: the right token still works.
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
      // A download ticket is no upload ticket, and the other way round.
      const download = yield* session.download("guarded.txt")
      const wrongWay = yield* put(download, hello)
      assert.deepStrictEqual(refusalOf(wrongWay), { status: 403, code: "ASSET_UNAUTHORIZED" })
    })
  )

  it.live("another session's ticket opens nothing of this one", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const mine = yield* assetSession(client)
      const theirs = yield* openSession(client, {}, { origin: OTHER_ORIGIN })
      // Core decides which sessions an origin owns: no ticket for another origin's session.
      const denied = yield* failureCode(
        client["asset.upload_ticket"]({
          origin: ORIGIN,
          sessionId: theirs.sessionId,
          path: asset("x.txt"),
          bytes: 1,
          contentType: "text/plain"
        })
      )
      assert.strictEqual(denied, "SESSION_ACCESS_DENIED")
      const other = yield* assetSession(client)
      const ticketA = yield* mine.upload("a.txt", hello.length)
      const ticketB = yield* other.upload("b.txt", hello.length)
      // Session A's token on session B's ticket (and the other way round) is refused.
      const crossed = yield* put(ticketB, hello, { token: ticketA.token })
      assert.deepStrictEqual(refusalOf(crossed), { status: 403, code: "ASSET_UNAUTHORIZED" })
      const crossedBack = yield* put(ticketA, hello, { token: ticketB.token })
      assert.deepStrictEqual(refusalOf(crossedBack), { status: 403, code: "ASSET_UNAUTHORIZED" })
      assert.deepStrictEqual(yield* listing(mine.assets), [])
      assert.deepStrictEqual(yield* listing(other.assets), [])
    })
  )

  it.live("a ticket of a session that ended since is refused", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("late.txt", hello.length)
      yield* client["session.end"]({ origin: ORIGIN, sessionId: session.sessionId })
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello)), { status: 410, code: "SESSION_ENDED" })
    })
  )

  it.live("paths: `..` cannot be asked for, and the URL routes nothing but tickets", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      for (const bad of ["../x.txt", "a/../../x.txt", "/etc/passwd", "a\\b.txt", "./x.txt"]) {
        const asked = client["asset.upload_ticket"]({
          origin: ORIGIN,
          sessionId: session.sessionId,
          path: bad as AssetPath,
          bytes: 1,
          contentType: "text/plain"
        })
        assert.isTrue(yield* refusedAtRpc(asked), bad)
        assert.isTrue(yield* refusedAtRpc(session.download(bad)), bad)
      }
      const ticket = yield* session.upload("ok.txt", hello.length)
      const base = new URL(ticket.url)
      for (const route of ["/assets/../../etc/passwd", "/etc/passwd", `/assets/${"A".repeat(22)}/x`, "/"]) {
        const reply = yield* io(() =>
          send({ method: "GET", url: `${base.origin}${route}`, headers: { origin: ORIGIN } })
        )
        assert.strictEqual(reply.status, 404, route)
        assert.isUndefined(reply.headers["access-control-allow-origin"])
      }
      const deleted = yield* io(() => send({ method: "DELETE", url: ticket.url, headers: headersFor(ticket, {}) }))
      assert.strictEqual(deleted.status, 405)
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
    })
  )

  it.live("symlinks in assets/ lead nowhere: downloads through them are refused", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const outside = yield* outsideFolder
      yield* io(async () => {
        await symlink(path.join(outside, "secret.txt"), path.join(session.assets, "link.txt"))
        await symlink(outside, path.join(session.assets, "linked-dir"))
      })
      for (const through of ["link.txt", "linked-dir/secret.txt"]) {
        const code = yield* failureCode(session.download(through))
        assert.strictEqual(code, "ASSET_PATH_INVALID", through)
      }
      // A real file swapped for a link after its ticket was issued: checked again when it is read.
      const ticket = yield* session.upload("swap.txt", hello.length)
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
      const download = yield* session.download("swap.txt")
      yield* io(async () => {
        await rm(path.join(session.assets, "swap.txt"))
        await symlink(path.join(outside, "secret.txt"), path.join(session.assets, "swap.txt"))
      })
      const read = yield* get(download)
      assert.deepStrictEqual(refusalOf(read), { status: 400, code: "ASSET_PATH_INVALID" })
      assert.notInclude(read.body.toString("utf8"), "outside secret")
      // The same for a folder on the way.
      yield* io(() => mkdir(path.join(session.assets, "real")))
      const inFolder = yield* session.upload("real/file.txt", hello.length)
      assert.strictEqual((yield* put(inFolder, hello)).status, 201)
      const folderTicket = yield* session.download("real/file.txt")
      yield* io(async () => {
        await rename(path.join(session.assets, "real"), path.join(session.assets, "moved"))
        await writeFile(path.join(outside, "file.txt"), "outside file\n")
        await symlink(outside, path.join(session.assets, "real"))
      })
      const viaFolder = yield* get(folderTicket)
      assert.deepStrictEqual(refusalOf(viaFolder), { status: 400, code: "ASSET_PATH_INVALID" })
      assert.notInclude(viaFolder.body.toString("utf8"), "outside file")
    })
  )

  it.live("symlinks in assets/ lead nowhere: uploads through them are refused and nothing outside changes", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const outside = yield* outsideFolder
      yield* io(async () => {
        await symlink(path.join(outside, "secret.txt"), path.join(session.assets, "link.txt"))
        await symlink(outside, path.join(session.assets, "linked-dir"))
      })
      for (const through of ["link.txt", "linked-dir/new.txt", "linked-dir/secret.txt"]) {
        const code = yield* failureCode(session.upload(through, hello.length))
        assert.strictEqual(code, "ASSET_PATH_INVALID", through)
      }
      // A folder swapped for a link after the ticket was issued: checked again before a byte is written.
      yield* io(() => mkdir(path.join(session.assets, "sub")))
      const ticket = yield* session.upload("sub/new.txt", hello.length)
      yield* io(async () => {
        await rm(path.join(session.assets, "sub"), { recursive: true })
        await symlink(outside, path.join(session.assets, "sub"))
      })
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello)), { status: 400, code: "ASSET_PATH_INVALID" })
      assert.deepStrictEqual(yield* listing(outside), ["secret.txt"])
      assert.strictEqual(yield* io(() => readFile(path.join(outside, "secret.txt"), "utf8")), "outside secret\n")
      assert.deepStrictEqual(yield* listing(session.tmp), [])
      // The assets folder itself replaced by a link to elsewhere.
      yield* io(async () => {
        await rm(session.assets, { recursive: true })
        await symlink(outside, session.assets)
      })
      assert.strictEqual(yield* failureCode(session.upload("any.txt", hello.length)), "ASSET_PATH_INVALID")
      assert.strictEqual(yield* failureCode(session.download("secret.txt")), "ASSET_PATH_INVALID")
      assert.strictEqual(
        yield* failureCode(client["asset.list"]({ origin: ORIGIN, sessionId: session.sessionId })),
        "ASSET_PATH_INVALID"
      )
      assert.deepStrictEqual(yield* listing(outside), ["secret.txt"])
    })
  )

  it.live("a page of another origin gets no CORS allowance and its request is refused before anything is written", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("cors.txt", hello.length)
      for (const origin of [OTHER_ORIGIN, "http://127.0.0.1:5174", "null", undefined]) {
        const reply = yield* put(ticket, hello, { origin })
        assert.deepStrictEqual(refusalOf(reply), { status: 403, code: "ASSET_UNAUTHORIZED" }, String(origin))
        assert.isUndefined(reply.headers["access-control-allow-origin"], String(origin))
        // Nor does its preflight pass.
        const preflight = yield* io(() =>
          send({
            method: "OPTIONS",
            url: ticket.url,
            headers: {
              ...(origin === undefined ? {} : { origin }),
              "access-control-request-method": "PUT",
              "access-control-request-headers": `${ASSET_TICKET_HEADER}, content-type`,
              "access-control-request-private-network": "true"
            }
          })
        )
        assert.strictEqual(preflight.status, 403)
        assert.isUndefined(preflight.headers["access-control-allow-origin"])
        assert.isUndefined(preflight.headers["access-control-allow-private-network"])
      }
      assert.deepStrictEqual(yield* listing(session.assets), [])
      assert.deepStrictEqual(yield* listing(session.tmp), [])
      // The session's own page still can.
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
    })
  )

  it.live("the CORS and Private Network Access preflight is answered for the session's origin", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("pna.txt", hello.length)
      const preflight = (method: string) =>
        io(() =>
          send({
            method: "OPTIONS",
            url: ticket.url,
            headers: {
              origin: ORIGIN,
              "access-control-request-method": method,
              "access-control-request-headers": `content-type,${ASSET_TICKET_HEADER}`,
              "access-control-request-private-network": "true"
            }
          })
        )
      const answered = yield* preflight("PUT")
      assert.strictEqual(answered.status, 204)
      assert.strictEqual(answered.headers["access-control-allow-origin"], ORIGIN)
      assert.strictEqual(answered.headers["access-control-allow-methods"], "PUT")
      assert.include(answered.headers["access-control-allow-headers"], ASSET_TICKET_HEADER)
      assert.include(answered.headers["access-control-allow-headers"], "content-type")
      assert.strictEqual(answered.headers["access-control-allow-private-network"], "true")
      assert.strictEqual(answered.headers.vary, "Origin")
      // Only the ticket's method.
      assert.strictEqual((yield* preflight("GET")).status, 403)
      // A preflight carries no token and uses nothing up.
      assert.strictEqual((yield* put(ticket, hello)).status, 201)
      // Without the PNA question, no PNA answer.
      const download = yield* session.download("pna.txt")
      const plain = yield* io(() =>
        send({
          method: "OPTIONS",
          url: download.url,
          headers: { origin: ORIGIN, "access-control-request-method": "GET" }
        })
      )
      assert.strictEqual(plain.status, 204)
      assert.strictEqual(plain.headers["access-control-allow-methods"], "GET")
      assert.isUndefined(plain.headers["access-control-allow-private-network"])
    })
  )

  it.live("a Host other than the server's own address is refused (DNS rebinding), before the ticket is looked at", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("host.txt", MiB)
      const { port } = new URL(ticket.url)
      const data = payload(MiB)
      for (const host of [`localhost:${port}`, `evil.example:${port}`, "127.0.0.1", `127.0.0.1:${Number(port) + 1}`]) {
        const reply = yield* put(ticket, data.stream, { host })
        assert.deepStrictEqual(refusalOf(reply), { status: 421, code: "ASSET_UNAUTHORIZED" }, host)
        assert.isUndefined(reply.headers["access-control-allow-origin"])
      }
      assert.deepStrictEqual(yield* listing(session.assets), [])
      const reply = yield* put(ticket, data.stream)
      assert.strictEqual(reply.status, 201)
      const download = yield* session.download("host.txt")
      assert.strictEqual((yield* get(download, { host: `localhost:${port}` })).status, 421)
      const read = yield* get(download, {}, true)
      assert.strictEqual(read.sha256, data.sha256)
    })
  )

  it.live("over the limit: ASSET_TOO_LARGE, and nothing is left in tmp/ or assets/", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      // More than 100 MiB cannot even get a ticket.
      assert.isTrue(yield* refusedAtRpc(session.upload("huge.bin", ASSET_LIMITS.maxUploadBytes + 1)))
      // A 100 MiB ticket and a Content-Length one byte over: refused before the body is read.
      const ticket = yield* session.upload("huge.bin", ASSET_LIMITS.maxUploadBytes)
      const declared = yield* io(() =>
        send({
          method: "PUT",
          url: ticket.url,
          headers: headersFor(ticket, {}, { "content-length": String(ASSET_LIMITS.maxUploadBytes + 1) }),
          body: payload(ASSET_LIMITS.maxUploadBytes + 1).stream,
          abandonBody: true
        })
      )
      assert.deepStrictEqual(refusalOf(declared), { status: 413, code: "ASSET_TOO_LARGE" })
      // A chunked body that runs past its ticket: refused the moment it does, the temp file removed.
      const small = yield* session.upload("chunked.bin", MiB)
      const overrun = yield* put(small, payload(3 * MiB).stream, {}, true)
      assert.deepStrictEqual(refusalOf(overrun), { status: 413, code: "ASSET_TOO_LARGE" })
      assert.strictEqual(overrun.headers["access-control-allow-origin"], ORIGIN)
      assert.deepStrictEqual(yield* listing(session.assets), [])
      yield* io(() =>
        waitUntil(
          "an empty tmp/",
          () => readdir(session.tmp),
          (names) => names.length === 0
        )
      )
    })
  )

  it.live("a body shorter or longer than the ticket's bytes is refused and leaves no file", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const longer = yield* put(yield* session.upload("long.txt", hello.length - 1), hello)
      assert.deepStrictEqual(refusalOf(longer), { status: 413, code: "ASSET_TOO_LARGE" })
      const shorter = yield* put(yield* session.upload("short.txt", hello.length + 1), hello)
      assert.deepStrictEqual(refusalOf(shorter), { status: 400, code: "INVALID_INPUT" })
      const chunkedShort = yield* put(yield* session.upload("short2.bin", 2 * MiB), payload(MiB).stream)
      assert.deepStrictEqual(refusalOf(chunkedShort), { status: 400, code: "INVALID_INPUT" })
      const empty = yield* put(yield* session.upload("empty.txt", 0), Buffer.alloc(0))
      assert.strictEqual(empty.status, 201)
      assert.deepStrictEqual(yield* listing(session.assets), ["empty.txt"])
      assert.deepStrictEqual(yield* listing(session.tmp), [])
      const read = yield* get(yield* session.download("empty.txt"))
      assert.strictEqual(read.status, 200)
      assert.strictEqual(read.bytes, 0)
    })
  )

  it.live("an upload cut off mid-body leaves nothing behind", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("cut.bin", 8 * MiB)
      const data = payload(2 * MiB)
      yield* io(
        () =>
          new Promise<void>((resolve) => {
            const target = new URL(ticket.url)
            const req = request({
              host: target.hostname,
              port: target.port,
              path: target.pathname,
              method: "PUT",
              headers: headersFor(ticket, {}, { "content-length": String(8 * MiB) }),
              agent: false
            })
            req.on("error", () => resolve())
            req.on("close", () => resolve())
            const source = Readable.from(data.stream())
            source.on("end", () => setTimeout(() => req.destroy(), 100))
            source.pipe(req, { end: false })
          })
      )
      yield* io(() =>
        waitUntil(
          "an empty tmp/",
          () => readdir(session.tmp),
          (names) => names.length === 0
        )
      )
      assert.deepStrictEqual(yield* listing(session.assets), [])
      // The ticket was used by the cut-off attempt.
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello)), { status: 410, code: "ASSET_TICKET_EXPIRED" })
    })
  )
})

describe("asset tickets expire", () => {
  const shortLived = coreForFile({ env: { PEDELEC_ASSET_TICKET_MS: "1500" } })

  it.live("an expired ticket is ASSET_TICKET_EXPIRED for upload and download", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(shortLived.info)
      const session = yield* assetSession(client)
      const ticket = yield* session.upload("slow.txt", hello.length)
      assert.approximately(ticket.expiresAt, Date.now() + 1_500, 1_000)
      const fresh = yield* session.upload("fresh.txt", hello.length)
      assert.strictEqual((yield* put(fresh, hello)).status, 201)
      const download = yield* session.download("fresh.txt")
      yield* Effect.sleep(2_000)
      assert.deepStrictEqual(refusalOf(yield* put(ticket, hello)), { status: 410, code: "ASSET_TICKET_EXPIRED" })
      assert.deepStrictEqual(refusalOf(yield* get(download)), { status: 410, code: "ASSET_TICKET_EXPIRED" })
      assert.deepStrictEqual(yield* listing(session.assets), ["fresh.txt"])
    })
  )
})
