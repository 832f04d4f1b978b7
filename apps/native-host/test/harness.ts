// The built native host as Chrome runs it: stdin/stdout pipes, the launcher's environment (PEDELEC_HOME and
// PEDELEC_CORE_COMMAND pointing at apps/core-daemon's pedelec-core), framed requests in, frames out. Every stdout byte
// is checked to be a frame of at most 1 MiB that decodes as HostToExtension; chunk frames are reassembled. The Core a
// host starts is detached, so stopping it goes by its announced pid (test-kit's CoreProcess).
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { HOST_LIMITS, HostToExtension } from "@pedelec/contracts/link/HostLink"
import { BUILT, plantedPid, stopLiveCore } from "@pedelec/test-kit/core/CoreProcess"
import * as Schema from "effect/Schema"
import { encodeFrame, FrameDecoder } from "../src/Framing.ts"

const here = path.dirname(fileURLToPath(import.meta.url))
export const hostBin = path.resolve(here, "../bin/pedelec-native-host")
export const ORIGIN = "http://127.0.0.1:5173"
export const OTHER_ORIGIN = "https://other.example"

export type Message = Record<string, unknown> & { readonly kind: string }
type Response = {
  readonly kind: "response"
  readonly id: string
  readonly ok: boolean
  readonly result?: unknown
} & {
  readonly error?: {
    readonly code: string
    readonly message: string
    readonly source: string
    readonly details?: Record<string, unknown>
  }
}

const decodeOut = Schema.decodeUnknownSync(HostToExtension)

export const tempHome = async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-nh-")))
export const removeHome = (home: string) => rm(home, { recursive: true, force: true })

/** The pid in the home's run/core.json, even of a stale file a test planted there. */
export const coreInfo = async (home: string): Promise<{ readonly pid: number } | undefined> => {
  const pid = await plantedPid(home)
  return pid === undefined ? undefined : { pid }
}

/** Stops the Core a host started (it is detached, so nothing else will): SIGTERM via core.json's pid. */
export const stopCore = (home: string) => stopLiveCore(home)

export interface Host {
  readonly child: ChildProcess
  /** Every logical message so far, chunked ones reassembled. */
  readonly messages: Array<Message>
  /** Ids of the logical messages that arrived as chunk frames, with their frame count. */
  readonly chunked: Map<string, number>
  readonly stderr: () => string
  readonly writeRaw: (bytes: Buffer) => void
  readonly send: (message: unknown) => void
  readonly next: (predicate: (message: Message) => boolean, timeoutMs?: number) => Promise<Message>
  /** `origin: null` sends none (extension methods, or a broken extension). */
  readonly request: (method: string, params: unknown, origin?: string | null) => Promise<Response>
  /** Closes stdin as Chrome does when the port goes, and resolves with the exit code and how long it took. */
  readonly close: () => Promise<{ readonly code: number | null; readonly ms: number }>
}

let requests = 0

export const startHost = (home: string, env: Record<string, string> = {}): Host => {
  const child = spawn(process.execPath, [hostBin, "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"], {
    env: {
      ...process.env,
      PEDELEC_HOME: home,
      PEDELEC_CORE_COMMAND: BUILT.coreBin,
      PEDELEC_ENABLE_SCRIPTED: "1",
      PEDELEC_BIN_DIR: BUILT.cliBinDir,
      ...env
    },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const messages: Array<Message> = []
  const chunked = new Map<string, number>()
  const pending = new Map<string, Array<string>>()
  const waiters = new Set<() => void>()
  const decoder = new FrameDecoder()
  const deliver = (message: Message) => {
    messages.push(message)
    for (const wake of waiters) wake()
  }
  child.stdout?.on("data", (chunk: Buffer) => {
    for (const frame of decoder.push(chunk)) {
      if (frame._tag !== "Frame") throw new Error("the host wrote a frame over 64 MiB")
      if (Buffer.byteLength(frame.text) > HOST_LIMITS.maxFrameToBrowser) throw new Error("a frame over 1 MiB")
      const message = decodeOut(JSON.parse(frame.text)) as Message
      if (message.kind !== "chunk") {
        deliver(message)
        continue
      }
      const { messageId, index, count, data } = message as unknown as {
        messageId: string
        index: number
        count: number
        data: string
      }
      const parts = pending.get(messageId) ?? []
      if (parts.length !== index) throw new Error(`chunk ${index} of ${messageId} out of order`)
      parts.push(data)
      pending.set(messageId, parts)
      if (parts.length < count) continue
      pending.delete(messageId)
      const whole = decodeOut(JSON.parse(parts.join(""))) as Message
      chunked.set(String(whole.id ?? whole.subscription), count)
      deliver(whole)
    }
  })
  const next = (predicate: (message: Message) => boolean, timeoutMs = 20_000) =>
    new Promise<Message>((resolve, reject) => {
      let from = 0
      const check = () => {
        for (; from < messages.length; from++) {
          const message = messages[from]!
          if (predicate(message)) {
            cleanup()
            return resolve(message)
          }
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`no matching message within ${timeoutMs} ms; host stderr:\n${stderr}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })
  const writeRaw = (bytes: Buffer) => {
    child.stdin?.write(bytes)
  }
  const send = (message: unknown) => writeRaw(encodeFrame(JSON.stringify(message)))
  const request = async (method: string, params: unknown, origin: string | null = ORIGIN) => {
    const id = `r${++requests}`
    send({ kind: "request", id, method, params, ...(origin === null ? {} : { origin }) })
    return (await next((message) => message.kind === "response" && message.id === id)) as unknown as Response
  }
  const close = () =>
    new Promise<{ readonly code: number | null; readonly ms: number }>((resolve) => {
      const started = Date.now()
      if (child.exitCode !== null) return resolve({ code: child.exitCode, ms: 0 })
      child.once("exit", (code) => {
        if (!decoder.idle) throw new Error("stdout ended inside a frame")
        resolve({ code, ms: Date.now() - started })
      })
      child.stdin?.end()
    })
  return { child, messages, chunked, stderr: () => stderr, writeRaw, send, next, request, close }
}

export const eventOf = (message: Message) => message.event as Record<string, unknown> & { readonly type: string }

export const isEvent = (subscription: string, type: string) => (message: Message) =>
  message.kind === "event" && message.subscription === subscription && eventOf(message).type === type
