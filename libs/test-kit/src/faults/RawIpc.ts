/**
 * RawIpc — Core IPC spoken by hand: a Unix socket connection that writes effect/rpc's NDJSON messages (or any line
 * at all) and files every answer by request id, so a fuzzer can send what no typed client would (wrong payloads,
 * wrong tags, missing proofs, garbage) and see exactly what came back: an Exit (success, a coded failure, a `Die`),
 * stream chunks, a connection-level `Defect`, or nothing before the socket closed. It decides nothing about which
 * answer is right; the wire format is effect/rpc's own (RpcMessage's encoded forms).
 */
import { connect, type Socket } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { AUTH_HEADERS } from "@pedelec/contracts/Wire"
import { safeStringify } from "./Hostile.ts"

export type Answer =
  | { readonly _tag: "Exit"; readonly exit: unknown }
  | { readonly _tag: "Chunk"; readonly values: ReadonlyArray<unknown> }

export interface RawConnection {
  /** Sends one request; `headers` default to the launch secret's proof. */
  readonly request: (id: string, tag: string, payload: unknown, headers?: ReadonlyArray<[string, string]>) => void
  /** Ends a stream a request opened (what a client does when it stops listening). */
  readonly interrupt: (id: string) => void
  /** Writes `line` and a newline as they are. */
  readonly line: (line: string | Buffer) => void
  /** The first answer to `id`, or undefined after `timeoutMs` or when the socket closed first. */
  readonly answer: (id: string, timeoutMs?: number) => Promise<Answer | undefined>
  /** Connection-level `Defect` messages received so far. */
  readonly defects: Array<unknown>
  readonly closed: () => boolean
  readonly close: () => void
}

const POLL_MS = 5

/** The proof a host- or desktop-role request carries. */
export const proofOf = (launchSecret: string): ReadonlyArray<[string, string]> => [
  [AUTH_HEADERS.launchSecret, launchSecret]
]

const fileMessage = (answers: Map<string, Answer>, defects: Array<unknown>, message: Record<string, unknown>) => {
  const id = String(message.requestId)
  if (message._tag === "Exit" && !answers.has(id)) answers.set(id, { _tag: "Exit", exit: message.exit })
  else if (message._tag === "Chunk" && !answers.has(id))
    answers.set(id, { _tag: "Chunk", values: message.values as ReadonlyArray<unknown> })
  else if (message._tag === "Defect") defects.push(message.defect)
}

/** Connects to Core's socket; resolves once connected (rejects if it cannot). */
export const rawConnect = (socketPath: string, launchSecret: string): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const socket: Socket = connect(socketPath)
    const answers = new Map<string, Answer>()
    const defects: Array<unknown> = []
    let closed = false
    let buffered = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      buffered += chunk
      let newline = buffered.indexOf("\n")
      while (newline >= 0) {
        const text = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (text !== "") fileMessage(answers, defects, JSON.parse(text) as Record<string, unknown>)
        newline = buffered.indexOf("\n")
      }
    })
    socket.on("close", () => {
      closed = true
    })
    socket.on("error", (error) => {
      if (!closed && socket.connecting) reject(error)
      closed = true
    })
    const write = (text: string | Buffer) => {
      if (!closed) socket.write(text)
    }
    const connection: RawConnection = {
      // The payload through safeStringify: it may nest deeper than JSON.stringify recurses.
      request: (id, tag, payload, headers = proofOf(launchSecret)) =>
        write(
          `{"_tag":"Request","id":${JSON.stringify(id)},"tag":${JSON.stringify(tag)},"payload":${safeStringify(payload)},"headers":${JSON.stringify(headers)}}\n`
        ),
      interrupt: (id) => write(`${JSON.stringify({ _tag: "Interrupt", requestId: id, interruptors: [] })}\n`),
      line: (line) => write(Buffer.concat([Buffer.isBuffer(line) ? line : Buffer.from(line), Buffer.from("\n")])),
      answer: async (id, timeoutMs = 10_000) => {
        for (let waited = 0; waited < timeoutMs; waited += POLL_MS) {
          const found = answers.get(id)
          if (found !== undefined || closed) return found
          await sleep(POLL_MS)
        }
        return answers.get(id)
      },
      defects,
      closed: () => closed,
      close: () => socket.destroy()
    }
    socket.once("connect", () => resolve(connection))
  })

/** The failure an encoded Exit carries: a `Fail`'s error, a `Die`'s defect, or undefined for a success. */
export const failureOfExit = (
  exit: unknown
):
  | { readonly _tag: "Success" }
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown } => {
  const encoded = exit as { readonly _tag?: string; readonly cause?: ReadonlyArray<Record<string, unknown>> }
  if (encoded._tag === "Success") return { _tag: "Success" }
  const fail = encoded.cause?.find((reason) => reason._tag === "Fail")
  if (fail !== undefined) return { _tag: "Fail", error: fail.error }
  const die = encoded.cause?.find((reason) => reason._tag === "Die")
  return { _tag: "Die", defect: die?.defect ?? encoded.cause }
}
