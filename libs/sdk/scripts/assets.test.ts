// The SDK's asset transfers against a real loopback HTTP server standing in for Core's (the ticket comes from the
// fake extension): the body goes straight to the ticket's URL with the ticket's token, a refusal keeps the server's
// code and words, a blocked request (Local Network Access, Core gone) is ASSET_TRANSFER_FAILED saying what to do,
// and what is read back decodes strictly. Here rather than in test/ because the stand-in needs node:http, and test/
// must stay browser-safe like src/.
import http from "node:http"
import type { AddressInfo } from "node:net"
import { ASSET_TICKET_HEADER } from "@pedelec/contracts/Assets"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Pedelec, type PedelecError } from "../src/index.ts"
import { FakeExtension, resetSeq, uninstall } from "../test/FakeExtension.ts"

interface Seen {
  method: string
  url: string
  token: string | undefined
  body: Buffer
}

/** What the stand-in reports as the file's modification time (HTTP dates have whole seconds). */
const MODIFIED = Date.UTC(2026, 0, 2, 3, 4, 5)
let server: http.Server
let base: string
const seen: Array<Seen> = []
/** What the stand-in answers next: status, headers and body. */
let reply: { status: number; type: string; body: Buffer | string } = {
  status: 201,
  type: "application/json",
  body: "{}"
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        token: req.headers[ASSET_TICKET_HEADER.toLowerCase()] as string | undefined,
        body: Buffer.concat(chunks)
      })
      res.writeHead(reply.status, { "content-type": reply.type, "last-modified": new Date(MODIFIED).toUTCString() })
      res.end(reply.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

let chrome: FakeExtension
beforeEach(() => {
  chrome = new FakeExtension().install()
  resetSeq()
  seen.length = 0
  const ticket = (method: "PUT" | "GET") => (request: { params: { path: string } }) => ({
    result: {
      method,
      url: `${base}/t/1`,
      token: "k".repeat(43),
      path: request.params.path,
      expiresAt: Date.now() + 60_000
    }
  })
  chrome.on("asset.upload_ticket", ticket("PUT") as never)
  chrome.on("asset.download_ticket", ticket("GET") as never)
})
afterEach(uninstall)

const session = () => new Pedelec().resumeSession("s".repeat(22))

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause as PedelecError
  )
  expect(error).toBeDefined()
  return error!
}

describe("uploadAsset", () => {
  it("PUTs the file's bytes with the ticket's token and resolves with the path", async () => {
    const s = await session()
    const file = new File(["hello bytes"], "notes.txt", { type: "text/plain" })
    expect(await s.uploadAsset(file, "docs/notes.txt")).toBe("docs/notes.txt")
    const [ticketRequest] = chrome.requests("asset.upload_ticket")
    expect(ticketRequest?.params).toMatchObject({ path: "docs/notes.txt", bytes: 11, contentType: "text/plain" })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ method: "PUT", token: "k".repeat(43) })
    expect(seen[0]?.body.toString()).toBe("hello bytes")
  })

  it("uses the file's name without a target, and accepts the earlier SDK's leading slash", async () => {
    const s = await session()
    expect(await s.uploadAsset(new File(["x"], "a.png"))).toBe("a.png")
    expect(await s.uploadAsset(new File(["x"], "a.png"), "/img/a.png")).toBe("img/a.png")
  })

  it("refuses a bad path or an oversized file before asking for a ticket", async () => {
    const s = await session()
    expect((await failure(s.uploadAsset(new File(["x"], "a"), "../out"))).code).toBe("ASSET_PATH_INVALID")
    expect((await failure(s.uploadAsset(new File(["x"], "a"), "a//b"))).code).toBe("ASSET_PATH_INVALID")
    const huge = { size: 100 * 1024 * 1024 + 1, type: "", name: "big.bin" }
    Object.setPrototypeOf(huge, Blob.prototype)
    expect((await failure(s.uploadAsset(huge as File))).code).toBe("ASSET_TOO_LARGE")
    expect(chrome.requests("asset.upload_ticket")).toHaveLength(0)
  })

  it("keeps the server's code and words when it refuses", async () => {
    const s = await session()
    reply = {
      status: 410,
      type: "application/json",
      body: JSON.stringify({ code: "ASSET_TICKET_EXPIRED", message: "The ticket expired. Retry." })
    }
    const error = await failure(s.uploadAsset(new File(["x"], "a.txt")))
    expect([error.code, error.message]).toEqual(["ASSET_TICKET_EXPIRED", "The ticket expired. Retry."])
    reply = { status: 500, type: "text/plain", body: "boom" }
    expect((await failure(s.uploadAsset(new File(["x"], "a.txt")))).code).toBe("ASSET_TRANSFER_FAILED")
  })

  it("a request that cannot reach the runtime is ASSET_TRANSFER_FAILED and says what to do", async () => {
    const s = await session()
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    chrome.on("asset.upload_ticket", ((request: { params: { path: string } }) => ({
      result: {
        method: "PUT",
        url: `http://127.0.0.1:${port}/t`,
        token: "k".repeat(43),
        path: request.params.path,
        expiresAt: 1
      }
    })) as never)
    const error = await failure(s.uploadAsset(new File(["x"], "a.txt")))
    expect(error.code).toBe("ASSET_TRANSFER_FAILED")
    expect(error.message).toContain("local network access")
  })
})

describe("readAsset and listAssets", () => {
  it("reads text, JSON and a File with its name, type and date", async () => {
    const s = await session()
    reply = { status: 200, type: "application/json", body: '{"answer":42}' }
    expect(await s.readAsset("out/r.json", "text")).toBe('{"answer":42}')
    expect(await s.readAsset<{ answer: number }>("out/r.json", "json")).toEqual({ answer: 42 })
    const file = await s.readAsset("out/r.json", "file")
    expect([file.name, file.type, file.lastModified]).toEqual(["r.json", "application/json", MODIFIED])
    expect(await file.text()).toBe('{"answer":42}')
    expect(seen.every((request) => request.method === "GET")).toBe(true)
  })

  it("text that is not UTF-8, or JSON that does not parse, is ASSET_DECODE_FAILED", async () => {
    const s = await session()
    reply = { status: 200, type: "application/octet-stream", body: Buffer.from([0xff, 0xfe, 0x00]) }
    expect((await failure(s.readAsset("a.bin", "text"))).code).toBe("ASSET_DECODE_FAILED")
    reply = { status: 200, type: "application/json", body: "{not json" }
    const error = await failure(s.readAsset("a.json", "json"))
    expect([error.code, error.message]).toEqual([
      "ASSET_DECODE_FAILED",
      "Asset a.json is not valid json. Read it as a file instead."
    ])
  })

  it("lists through the extension, with the earlier SDK's name and sizeBytes; an ended session refuses", async () => {
    const s = await session()
    const listed = [
      { path: "a.txt", bytes: 1, contentType: "text/plain", modifiedAt: 5 },
      { path: "img/b.png", bytes: 7, contentType: "image/png", modifiedAt: 6 }
    ]
    chrome.on("asset.list", () => ({ result: listed }))
    expect(await s.listAssets()).toEqual([
      { ...listed[0], name: "a.txt", sizeBytes: 1 },
      { ...listed[1], name: "b.png", sizeBytes: 7 }
    ])
    chrome.on("session.end", () => ({ result: {} }))
    await s.end()
    expect((await failure(s.listAssets())).code).toBe("SESSION_ENDED")
    expect((await failure(s.readAsset("a.txt", "text"))).code).toBe("SESSION_ENDED")
  })
})
