// Core IPC before and around the hello, on a real Core's socket with raw NDJSON (what any local process could send):
// unauthenticated long lines cost Core little and are cut off, idle sockets close at the hello deadline, no more than
// MAX_UNGREETED wait at once, a request before the hello is refused with a code, a failed hello closes the
// connection, and a payload that does not decode or a tag Core does not have is a coded failure, never a Die; a
// stream's chunks do not wait for the client's Acks, and many streams held back by a client that does not read wait
// their turn to write, not as listeners piling up on the socket.

import { readFile } from "node:fs/promises"
import net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import { script } from "@pedelec/providers/scripted/Script"
import { coreForFile, hostClient } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const HELLO_TIMEOUT_MS = 1_500
const core = coreForFile({ env: { PEDELEC_HELLO_TIMEOUT_MS: String(HELLO_TIMEOUT_MS) } })

const MIB = 1024 * 1024
const figure = (line: string) => process.stderr.write(`${line}\n`)

interface Raw {
  readonly lines: Array<Record<string, unknown>>
  /** When the socket closed, or undefined while open. */
  closedAt: number | undefined
  readonly write: (text: string) => void
  readonly next: (timeoutMs?: number) => Promise<Record<string, unknown>>
  readonly closed: (timeoutMs?: number) => Promise<boolean>
  readonly destroy: () => void
  /** Stops reading the socket (what Core writes piles up in its buffers), and reads on again. */
  readonly pause: () => void
  readonly resume: () => void
}

/** A socket to Core that records every line it gets and when it closed. */
const raw = (): Promise<Raw> =>
  new Promise((resolve, reject) => {
    const socket = net.createConnection(core.info.socketPath)
    let buffered = ""
    let taken = 0
    const wakers = new Set<() => void>()
    const wake = () => {
      for (const waker of wakers) waker()
    }
    const until = <A>(check: () => A | undefined, timeoutMs: number, fallback: A) =>
      new Promise<A>((done) => {
        const attempt = () => {
          const value = check()
          if (value === undefined) return
          finish(value)
        }
        const finish = (value: A) => {
          clearTimeout(timer)
          wakers.delete(attempt)
          done(value)
        }
        const timer = setTimeout(() => finish(fallback), timeoutMs)
        wakers.add(attempt)
        attempt()
      })
    const handle: Raw = {
      lines: [],
      closedAt: undefined,
      write: (text) => socket.write(text),
      next: (timeoutMs = 10_000) =>
        until(() => handle.lines[taken] && handle.lines[taken++], timeoutMs, { _tag: "none within the timeout" }),
      closed: (timeoutMs = 10_000) => until(() => (handle.closedAt === undefined ? undefined : true), timeoutMs, false),
      destroy: () => socket.destroy(),
      pause: () => socket.pause(),
      resume: () => socket.resume()
    }
    socket.on("data", (chunk) => {
      buffered += chunk.toString("utf8")
      for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
        handle.lines.push(JSON.parse(buffered.slice(0, newline)))
        buffered = buffered.slice(newline + 1)
      }
      wake()
    })
    socket.on("error", () => undefined)
    socket.on("close", () => {
      handle.closedAt = Date.now()
      wake()
    })
    socket.once("connect", () => resolve(handle))
    socket.once("error", reject)
  })

const request = (id: string, tag: string, payload: unknown, headers: ReadonlyArray<[string, string]> = []) =>
  `${JSON.stringify({ _tag: "Request", id, tag, payload, headers })}\n`
const hello = (id: string, version = "test") =>
  request(id, "core.hello", { protocolVersion: PROTOCOL_VERSION, component: "native-host", version })
const proven = (): ReadonlyArray<[string, string]> => [["x-pedelec-launch-secret", core.info.launchSecret]]

/** The code of an Exit's `Fail`, or a description of what came instead (a Die, a Defect). */
const codeOf = (line: Record<string, unknown>): string => {
  const exit = line.exit as { _tag: string; cause?: Array<Record<string, unknown>> } | undefined
  if (line._tag === "Defect") return `Defect ${(line.defect as { code?: string } | undefined)?.code}`
  if (exit?._tag === "Success") return "Success"
  const fail = exit?.cause?.find((reason) => reason._tag === "Fail")
  return fail === undefined ? JSON.stringify(line).slice(0, 300) : String((fail.error as { code: string }).code)
}

const coreMemory = async () => {
  const status = await readFile(`/proc/${core.info.pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024
  return { rss: kb("VmRSS"), peak: kb("VmHWM") }
}

/** A legitimate client still gets in and is served. */
const served = () =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    return (yield* client["session.list"]({})).length >= 0
  }).pipe(Effect.scoped, Effect.runPromise)

describe("Core IPC bounds", () => {
  it("20 parallel unauthenticated 15 MiB lines: each cut off at the pre-hello cap, Core's peak RSS stays low", async () => {
    const before = await coreMemory()
    const sockets = await Promise.all(Array.from({ length: 20 }, raw))
    const line = Buffer.alloc(15 * MIB, 0x61)
    for (const socket of sockets) socket.write(line.toString("latin1"))
    const closed = await Promise.all(sockets.map((socket) => socket.closed(20_000)))
    const after = await coreMemory()
    figure(
      `20 × 15 MiB before hello: ${closed.filter(Boolean).length}/20 closed, Core peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MB`
    )
    assert.deepStrictEqual(closed, Array(20).fill(true))
    assert.strictEqual(codeOf(sockets[0]!.lines[0] ?? {}), "Defect MESSAGE_TOO_LARGE")
    assert.isBelow(after.peak, before.peak + 150)
    assert.isTrue(await served())
  })

  it("idle unauthenticated sockets are closed at the hello deadline; a legitimate client is served meanwhile", async () => {
    const started = Date.now()
    const idle = await Promise.all(Array.from({ length: 100 }, raw))
    assert.isTrue(await served(), "served while 100 idle sockets wait")
    const closed = await Promise.all(idle.map((socket) => socket.closed(HELLO_TIMEOUT_MS + 5_000)))
    const latest = Math.max(...idle.map((socket) => (socket.closedAt ?? Number.NaN) - started))
    figure(
      `100 idle sockets: ${closed.filter(Boolean).length}/100 closed, the last after ${latest} ms (deadline ${HELLO_TIMEOUT_MS} ms)`
    )
    assert.deepStrictEqual(closed, Array(100).fill(true))
    const codes = new Set(idle.map((socket) => codeOf(socket.lines[0] ?? {})))
    assert.deepStrictEqual([...codes], ["Defect PROTOCOL_ERROR"], "evicted or late, each told why")
    assert.isBelow(latest, HELLO_TIMEOUT_MS + 3_000)
  })

  it("a request before the hello is PROTOCOL_ERROR; after the hello it is served on the same connection", async () => {
    const socket = await raw()
    socket.write(request("1", "session.list", {}, proven()))
    assert.strictEqual(codeOf(await socket.next()), "PROTOCOL_ERROR")
    socket.write(hello("2"))
    assert.strictEqual(codeOf(await socket.next()), "Success")
    socket.write(request("3", "session.list", {}, proven()))
    assert.strictEqual(codeOf(await socket.next()), "Success")
    socket.destroy()
  })

  it("a failed hello is answered, then the connection is closed: version mismatch, a version that does not decode", async () => {
    const mismatch = await raw()
    mismatch.write(
      request("1", "core.hello", { protocolVersion: PROTOCOL_VERSION + 1, component: "native-host", version: "x" })
    )
    assert.strictEqual(codeOf(await mismatch.next()), "PROTOCOL_VERSION_MISMATCH")
    assert.isTrue(await mismatch.closed(2_000), "closed after the mismatch")

    const long = await raw()
    long.write(hello("1", "v".repeat(65)))
    const answer = await long.next()
    assert.strictEqual(codeOf(answer), "INVALID_INPUT", JSON.stringify(answer))
    assert.include(JSON.stringify(answer), "/version")
    assert.isTrue(await long.closed(2_000))
  })

  it("after the hello: a payload that does not decode is INVALID_INPUT with its pointer, an unknown tag PROTOCOL_ERROR", async () => {
    // Refused before any session is looked up: the id need only be well-formed.
    const sessionId = "A".repeat(22)
    const socket = await raw()
    socket.write(hello("1"))
    assert.strictEqual(codeOf(await socket.next()), "Success")
    const ticket = { origin: "http://127.0.0.1:5173", sessionId, path: "../x" }
    socket.write(request("2", "asset.download_ticket", ticket, proven()))
    const invalid = await socket.next()
    assert.strictEqual(codeOf(invalid), "INVALID_INPUT", JSON.stringify(invalid))
    assert.include(JSON.stringify(invalid), "/path")
    socket.write(request("3", "settings.set", { settings: {} }, proven()))
    assert.strictEqual(codeOf(await socket.next()), "PROTOCOL_ERROR")
    socket.write(request("4", "session.list", {}, proven()))
    assert.strictEqual(codeOf(await socket.next()), "Success", "the connection is still served")
    socket.destroy()
  })

  it("a stream's chunks do not wait for the client's Ack of the one before: a client that never acks sees a whole turn", async () => {
    const origin = "http://127.0.0.1:5173"
    const socket = await raw()
    socket.write(hello("1"))
    assert.strictEqual(codeOf(await socket.next()), "Success")
    const input = { provider: "scripted", autoEndOnDisconnect: false }
    socket.write(request("2", "session.create", { origin, input }, proven()))
    const created = await socket.next()
    assert.strictEqual(codeOf(created), "Success", JSON.stringify(created))
    const { sessionId } = (created.exit as { value: { sessionId: string } }).value
    socket.write(request("3", "session.subscribe", { origin, sessionId, afterSeq: 0, claimTools: false }, proven()))
    socket.write(request("4", "session.send_text", { origin, sessionId, text: script("say one", "say two") }, proven()))
    // Each event of the turn is published on its own (the agent's lines come one by one), so they span chunks; with
    // Acks awaited, Core would send the first chunk and then nothing more to this client.
    const types: Array<string> = []
    while (!types.includes("turn_completed")) {
      const line = await socket.next()
      if (line._tag === "none within the timeout") break
      if (line._tag === "Chunk") types.push(...(line.values as Array<{ type: string }>).map((event) => event.type))
    }
    assert.include(types, "turn_completed", `events seen without an Ack: ${types.join(", ")}`)
    socket.write(request("5", "session.end", { origin, sessionId }, proven()))
    socket.destroy()
  })

  it("a client that stops reading holds back its streams' writes one at a time: no listener pile-up, nothing lost", async () => {
    const origin = "http://127.0.0.1:5173"
    const SESSIONS = 12
    const socket = await raw()
    socket.write(hello("1"))
    assert.strictEqual(codeOf(await socket.next()), "Success")
    const input = { provider: "scripted", autoEndOnDisconnect: false }
    const sessionIds: Array<string> = []
    for (let i = 0; i < SESSIONS; i++) {
      socket.write(request(`c${i}`, "session.create", { origin, input }, proven()))
      const created = await socket.next()
      assert.strictEqual(codeOf(created), "Success", JSON.stringify(created))
      sessionIds.push((created.exit as { value: { sessionId: string } }).value.sessionId)
    }
    const subscribe = { afterSeq: 0, claimTools: false }
    for (const [i, sessionId] of sessionIds.entries())
      socket.write(request(`s${i}`, "session.subscribe", { origin, sessionId, ...subscribe }, proven()))
    socket.pause()
    // 12 turns of 8 deltas of 64 KB: far more than the socket's buffers hold while nobody reads.
    const text = script(...Array.from({ length: 8 }, () => `delta ${"d".repeat(64 * 1024)}`))
    for (const [i, sessionId] of sessionIds.entries())
      socket.write(request(`t${i}`, "session.send_text", { origin, sessionId, text }, proven()))
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    socket.resume()
    const completed = new Set<string>()
    while (completed.size < SESSIONS) {
      const line = await socket.next()
      if (line._tag === "none within the timeout") break
      if (line._tag !== "Chunk") continue
      for (const event of line.values as Array<{ type: string; sessionId: string }>)
        if (event.type === "turn_completed") completed.add(event.sessionId)
    }
    assert.strictEqual(completed.size, SESSIONS, "every stream's turn reached the client")
    assert.notInclude(core.stderr(), "MaxListenersExceededWarning")
    for (const [i, sessionId] of sessionIds.entries())
      socket.write(request(`e${i}`, "session.end", { origin, sessionId }, proven()))
    socket.destroy()
  })
})
