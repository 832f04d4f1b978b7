/**
 * Fuzzed requests to the asset server of a real built Core: 10,000 seeded raw HTTP/1.1 requests, 32 connections at
 * a time, each of a method (the server's, others, malformed), a path (the ticket route, `../`, `%2e%2e`, NUL,
 * overlong, unicode, absolute-form), a Host, an Origin, a ticket header and a ticket drawn from real tickets (usable
 * ones for a file, for files swapped for a hard or symbolic link to a secret outside the workspace after their ticket
 * was issued, another session's, expired, used up) and bogus ones, Range and huge headers, and bodies (on GET too,
 * chunked, declared sizes that lie). Expected: every request answered with an HTTP status; every JSON refusal
 * carries a contracts code; no 5xx; the secret's bytes never served nor written; Core alive and serving after.
 * Raw sockets, a request each, because undici refuses much of what is sent here. It does not probe slow or silent
 * connections (apps/core-daemon/test/assets-bounds.test.ts).
 */
import { randomBytes } from "node:crypto"
import { link, readFile, rm, symlink, writeFile } from "node:fs/promises"
import net from "node:net"
import path from "node:path"
import { ASSET_TICKET_HEADER, type AssetPath, type AssetTicket } from "@pedelec/contracts/Assets"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import {
  hostClient,
  ORIGIN,
  OTHER_ORIGIN,
  openSession,
  removeHome,
  startCore,
  stopCore,
  tempDir
} from "@pedelec/test-kit/core/Harness"
import { isContractsCode } from "@pedelec/test-kit/faults/Codes"
import { casesOf, faultSeed } from "@pedelec/test-kit/faults/Hostile"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import fc from "fast-check"
import { afterAll, beforeAll, expect, test } from "vitest"
import { fuzzRow, record, tallier, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const IN_FLIGHT = 32
const ANSWER_MS = 10_000
const TICKET_MS = 4_000
const seed = faultSeed()
const SECRET = `outside-secret-${randomBytes(8).toString("hex")}`
const INSIDE = Buffer.from("inside bytes\n")

let core: Awaited<ReturnType<typeof startCore>>
let outside: string
let pool: { readonly tickets: ReadonlyArray<AssetTicket>; readonly host: string }

/** Runs a scoped Effect with a host client of the file's Core. */
const withClient = <A, E>(use: (client: HostClient) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(hostClient(core.info), use)))

const uploadTicket = (client: HostClient, sessionId: string, name: string, bytes: number) =>
  client["asset.upload_ticket"]({
    origin: ORIGIN,
    sessionId: sessionId as never,
    path: name as AssetPath,
    bytes,
    contentType: "text/plain"
  })

/** Puts `body` at `name` through the server itself, so the file is the workspace's own. */
const put = (ticket: AssetTicket, body: Buffer) =>
  exchange(
    new URL(ticket.url).host,
    Buffer.concat([
      Buffer.from(
        `PUT ${new URL(ticket.url).pathname} HTTP/1.1\r\nHost: ${new URL(ticket.url).host}\r\nOrigin: ${ORIGIN}\r\n` +
          `${ASSET_TICKET_HEADER}: ${ticket.token}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
      ),
      body
    ])
  )

/** Usable, used-up, expired, swapped-for-a-link and other-session tickets, all real. */
const mintPool = (client: HostClient) =>
  Effect.gen(function* () {
    const { session, sessionId } = yield* openSession(client)
    const other = yield* openSession(client, {}, { origin: OTHER_ORIGIN })
    const assets = path.join(session.workspace.path, ".pedelec-runtime", "assets")
    const download = (sid: string, name: string, origin = ORIGIN) =>
      client["asset.download_ticket"]({ origin, sessionId: sid as never, path: name as AssetPath })
    for (const name of ["ok.txt", "swap-hard.txt", "swap-sym.txt"])
      yield* Effect.promise(async () => put(await Effect.runPromise(uploadTicket(client, sessionId, name, 13)), INSIDE))
    const expired = yield* Effect.forEach(Array.from({ length: 20 }), () => download(sessionId, "ok.txt"))
    yield* Effect.sleep(TICKET_MS + 500)
    const ok = yield* Effect.forEach(Array.from({ length: 300 }), () => download(sessionId, "ok.txt"))
    const swapped = yield* Effect.forEach(Array.from({ length: 100 }), (_, i) =>
      download(sessionId, i % 2 === 0 ? "swap-hard.txt" : "swap-sym.txt")
    )
    const uploads = yield* Effect.forEach(Array.from({ length: 100 }), (_, i) =>
      uploadTicket(client, sessionId, `up-${i}.txt`, i % 20)
    )
    const others = yield* Effect.forEach(Array.from({ length: 20 }), () =>
      download(other.sessionId, "missing.txt", OTHER_ORIGIN).pipe(Effect.catch(() => download(sessionId, "ok.txt")))
    )
    yield* Effect.promise(async () => {
      await rm(path.join(assets, "swap-hard.txt"))
      await link(path.join(outside, "secret.txt"), path.join(assets, "swap-hard.txt"))
      await rm(path.join(assets, "swap-sym.txt"))
      await symlink(path.join(outside, "secret.txt"), path.join(assets, "swap-sym.txt"))
    })
    return { tickets: [...ok, ...swapped, ...uploads, ...expired, ...others], host: new URL(ok[0]!.url).host }
  })

beforeAll(async () => {
  core = await startCore({ env: { PEDELEC_ASSET_TICKET_MS: String(TICKET_MS) } })
  outside = await tempDir("pedelec-faults-outside-")
  await writeFile(path.join(outside, "secret.txt"), `${SECRET}\n`)
  pool = await withClient(mintPool)
})
afterAll(async () => {
  await stopCore(core)
  await removeHome(core.home)
  await removeHome(outside)
})

/** Sends `bytes` on a fresh connection and gathers what comes back until the server closes it (`Connection: close`). */
const exchange = (host: string, bytes: Buffer) =>
  new Promise<{ readonly reply: Buffer; readonly timedOut: boolean }>((resolve) => {
    const [hostname, port] = host.split(":")
    const socket = net.createConnection({ host: hostname, port: Number(port) })
    const parts: Array<Buffer> = []
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      socket.destroy()
    }, ANSWER_MS)
    socket.on("data", (chunk: Buffer) => parts.push(chunk))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ reply: Buffer.concat(parts), timedOut })
    })
    // Not a half-close: Node's server drops a request whose client sent its FIN before the answer was written.
    socket.write(bytes)
  })

interface Case {
  readonly method: string
  readonly target: string
  readonly headers: ReadonlyArray<string>
  readonly body: Buffer
  readonly chunked: boolean
}

const ticketAt = (pick: number) => pool.tickets[pick % pool.tickets.length]!
const idOf = (ticket: AssetTicket) => new URL(ticket.url).pathname.slice("/assets/".length)

const METHODS = ["GET", "PUT", "OPTIONS", "HEAD", "POST", "DELETE", "PATCH", "TRACE", "get", "G ET", "PUT\u0000", "FOO"]
const target = (id: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(`/assets/${id}`) },
    fc.constantFrom(
      `/assets/../${id}`,
      `/assets/%2e%2e/%2e%2e/secret.txt`,
      `/assets/..%2f..%2fsecret.txt`,
      `/assets/${id}%00`,
      `/assets/${id}/../../x`,
      `/assets/${id}?x=1`,
      `//assets/${id}`,
      `http://evil.example/assets/${id}`,
      "*",
      "/",
      "/assets/",
      `/assets/${"A".repeat(8_000)}`,
      "/assets/\u00e9\u202e\ud83d\ude00",
      `/assets/${id.slice(0, -1)}`
    ),
    fc.string({ unit: "binary", maxLength: 60 }).map((text) => `/assets/${text}`)
  )

/** `arbitrary` in one case out of `oneIn`, else null (fc.option leans on its value far more than its freq says). */
const rare = <A>(oneIn: number, arbitrary: fc.Arbitrary<A>): fc.Arbitrary<A | null> =>
  fc.tuple(fc.nat(oneIn - 1), arbitrary).map(([roll, value]) => (roll === 0 ? value : null))

/** Header lines: right or wrong Host, Origin and token, Range, huge and odd ones. */
const headers = (ticket: AssetTicket, other: AssetTicket): fc.Arbitrary<ReadonlyArray<string>> =>
  fc
    .tuple(
      fc.constantFrom(`Host: ${pool.host}`, `Host: ${pool.host}`, "Host: localhost", "Host: evil.example", ""),
      fc.constantFrom(`Origin: ${ORIGIN}`, `Origin: ${ORIGIN}`, `Origin: ${OTHER_ORIGIN}`, "Origin: null", ""),
      fc.constantFrom(ticket.token, ticket.token, other.token, "A".repeat(43), "", "x".repeat(5_000)),
      rare(12, fc.constantFrom("bytes=0-3", "bytes=-1", "bytes=999999-", "bytes=a-b", "bytes=0-0,2-3")),
      rare(
        40,
        fc.constantFrom(20_000, 70_000).map((n) => `X-Pad: ${"p".repeat(n)}`)
      ),
      rare(12, fc.constantFrom("Access-Control-Request-Method: PUT", "Expect: 100-continue", "Connection: keep-alive"))
    )
    .map(([host, origin, token, range, pad, extra]) =>
      [
        host,
        origin,
        token === "" ? "" : `${ASSET_TICKET_HEADER}: ${token}`,
        range && `Range: ${range}`,
        pad,
        extra
      ].filter((line): line is string => typeof line === "string" && line !== "")
    )

const caseOf: fc.Arbitrary<Case> = fc.tuple(fc.nat(), fc.nat()).chain(([pick, otherPick]) => {
  const ticket = ticketAt(pick)
  return fc.record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constant(ticket.method) }, fc.constantFrom(...METHODS)),
    target: target(idOf(ticket)),
    headers: headers(ticket, ticketAt(otherPick)),
    body: fc.oneof(
      fc.constant(Buffer.alloc(0)),
      fc.constant(Buffer.alloc(INSIDE.length, 0x61)),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes))
    ),
    chunked: fc.boolean()
  })
})

const bytesOf = ({ method, target, headers, body, chunked }: Case) => {
  const framing = chunked
    ? ["Transfer-Encoding: chunked"]
    : body.length > 0 || method === "PUT"
      ? [`Content-Length: ${body.length}`]
      : []
  const head = [`${method} ${target} HTTP/1.1`, ...headers, ...framing, "Connection: close"].join("\r\n")
  const framed = chunked ? Buffer.from(`${body.length.toString(16)}\r\n${body.toString("latin1")}\r\n0\r\n\r\n`) : body
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), framed])
}

/** The body's contracts code, if it is JSON with one (INTERNAL_ERROR counts as a crash, not a code). */
const codeOf = (body: string): string | undefined => {
  try {
    const code = (JSON.parse(body) as { readonly code?: unknown }).code
    return typeof code === "string" && isContractsCode(code) && code !== "INTERNAL_ERROR" ? code : undefined
  } catch {
    return undefined
  }
}

/** The status, and the code of a JSON body; offenders: no status, an uncoded refusal, a 5xx, the secret served. */
const verdictOf = (item: Case, reply: Buffer, timedOut: boolean): Verdict => {
  const text = reply.toString("latin1")
  const note = `${item.method} ${item.target.slice(0, 60)} ${item.headers.map((line) => line.slice(0, 40)).join("|")}`
  if (text.includes(SECRET)) return { outcome: "secret served", ok: false, note: text.slice(0, 160) }
  // A `100 Continue` comes before the answer to an `Expect: 100-continue`.
  const final = text.replace(/^HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n/, "")
  const status = /^HTTP\/1\.1 (\d{3})/.exec(final)?.[1]
  if (status === undefined) return { outcome: timedOut ? "silent" : "closed unanswered", ok: false, note }
  const [head = "", body = ""] = final.split("\r\n\r\n", 2)
  // A HEAD answer has the headers of its GET and no body to hold a code.
  const json = /content-type: application\/json/i.test(head) && item.method !== "HEAD"
  // Every refusal carries a code, but a HEAD's, whose body is never sent.
  if (!json && Number(status) >= 400 && item.method !== "HEAD") return { outcome: `${status} uncoded`, ok: false, note }
  if (!json || Number(status) < 300) return { outcome: status, ok: Number(status) < 500, note }
  const code = codeOf(body)
  return code === undefined
    ? { outcome: `${status} uncoded`, ok: false, note: `${note} → ${body.slice(0, 100)}` }
    : { outcome: `${status} ${code}`, ok: Number(status) < 500 }
}

const stillServes = () =>
  withClient((client) =>
    Effect.gen(function* () {
      const { sessionId } = yield* openSession(client)
      const ticket = yield* uploadTicket(client, sessionId, "after.txt", INSIDE.length)
      return (yield* Effect.promise(() => put(ticket, INSIDE))).reply.toString("latin1").startsWith("HTTP/1.1 201")
    })
  )

test(`asset server: ${CASES} fuzzed HTTP requests — each answered, coded, no 5xx, nothing outside served (seed ${seed})`, async () => {
  const cases = casesOf(caseOf, seed, CASES)
  const { add, tally } = tallier()
  const started = Date.now()
  let next = 0
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      const { reply, timedOut } = await exchange(pool.host, bytesOf(cases[index]!))
      add(index, verdictOf(cases[index]!, reply, timedOut))
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  const wallMs = Date.now() - started
  const secretKept = (await readFile(path.join(outside, "secret.txt"), "utf8")) === `${SECRET}\n`
  const alive = await stillServes()
  const done = tally()
  const row = fuzzRow("fuzz: asset server requests", done, seed, CASES, "a status each, JSON refusals coded, no 5xx")
  await record(
    {
      ...row,
      pass: row.pass && alive && secretKept,
      figures: { wallMs, perSecond: (CASES * 1000) / wallMs, secretKept: String(secretKept), coreAlive: String(alive) }
    },
    done.offenders
  )
  expect(done.offenders).toEqual([])
  expect(secretKept).toBe(true)
  expect(alive).toBe(true)
})
