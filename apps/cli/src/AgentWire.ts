/**
 * AgentWire — the agent commands' link to Core without effect at run time: one Unix socket (node:net) speaking
 * effect/rpc's NDJSON wire format by hand. Requests are `{"_tag":"Request","id","tag","payload","headers"}`, any
 * number at a time (`pedelec-cli mcp` keeps one wire for a whole session), each answer routed by its request id;
 * replies are decoded strictly (`Exit` with `Success`, or a `Failure` cause of `Fail`/`Die`/`Interrupt`; `Pong` is
 * skipped; `Defect`, `ClientProtocolError` and anything else are a PROTOCOL_ERROR, in Reach's words).
 */
import net from "node:net"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ErrorDetails } from "@pedelec/contracts/PedelecError"
import type { ToolError } from "@pedelec/contracts/Tool"
import { TextLineSplitter } from "@pedelec/core-client/TextLines"
import { dropped, type Endpoint, garbled, OPEN_TIMEOUT_MS, openFailure, type Refusal, refusal } from "./Reach.ts"

export type Answer =
  | { readonly _tag: "Success"; readonly value: unknown }
  /** Core refused the request itself (a `PedelecError`): its code, words and details. */
  | { readonly _tag: "CoreError"; readonly error: ToolError }
  | { readonly _tag: "Refusal"; readonly refusal: Refusal }

export interface Wire {
  /**
   * Sends one request and waits for its Exit; `timeout` answers with its refusal when Core stays silent. `signal`
   * interrupts this request alone (Core cancels it, as for `cancel`) and keeps the wire open for the others.
   */
  readonly request: (
    tag: string,
    payload: unknown,
    headers: ReadonlyArray<readonly [string, string]>,
    timeout?: { readonly ms: number; readonly refusal: Refusal },
    signal?: AbortSignal
  ) => Promise<Answer>
  /** Interrupts every pending request (Core cancels them) and closes the socket once that is written. */
  readonly cancel: () => Promise<void>
  readonly close: () => void
}

const MAX_LINE = 16 * 1024 * 1024

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A `ToolError`, or an encoded `PedelecError` read as one: only code, message and details are kept. */
export const decodeToolError = (u: unknown): ToolError | undefined => {
  if (!isRecord(u) || typeof u.code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(u.code)) return undefined
  if (typeof u.message !== "string" || (u.details !== undefined && !isRecord(u.details))) return undefined
  const code = u.code as ErrorCode
  return u.details === undefined
    ? { code, message: u.message }
    : { code, message: u.message, details: u.details as ErrorDetails }
}

/** One line from Core: the request it answers (undefined when it names none) and how; undefined for `Pong`. */
export const decodeReply = (
  line: string,
  at: Endpoint
): { readonly requestId: string | undefined; readonly answer: Answer } | undefined => {
  const bad = (cause: string) => ({
    requestId: undefined,
    answer: { _tag: "Refusal", refusal: garbled(at, cause) } as Answer
  })
  let message: unknown
  try {
    message = JSON.parse(line)
  } catch {
    return bad(`not JSON: ${line.slice(0, 200)}`)
  }
  if (!isRecord(message)) return bad(`not a message: ${line.slice(0, 200)}`)
  if (message._tag === "Pong") return undefined
  if (message._tag !== "Exit") return bad(`unexpected ${String(message._tag)}: ${line.slice(0, 200)}`)
  return { requestId: String(message.requestId), answer: exitAnswer(message.exit, line, at) }
}

const exitAnswer = (exit: unknown, line: string, at: Endpoint): Answer => {
  const bad = (cause: string): Answer => ({ _tag: "Refusal", refusal: garbled(at, cause) })
  if (isRecord(exit) && exit._tag === "Success" && "value" in exit) return { _tag: "Success", value: exit.value }
  if (!isRecord(exit) || exit._tag !== "Failure" || !Array.isArray(exit.cause) || exit.cause.length === 0)
    return bad(`a malformed exit: ${line.slice(0, 200)}`)
  const parts: Array<unknown> = exit.cause
  const fail = parts.find((part) => isRecord(part) && part._tag === "Fail")
  if (fail !== undefined) {
    const error = decodeToolError((fail as { error?: unknown }).error)
    return error === undefined ? bad(`an unreadable error: ${line.slice(0, 200)}`) : { _tag: "CoreError", error }
  }
  const die = parts.find((part) => isRecord(part) && part._tag === "Die")
  if (die !== undefined) return bad(`Core died: ${JSON.stringify((die as { defect?: unknown }).defect)}`)
  if (parts.every((part) => isRecord(part) && part._tag === "Interrupt"))
    return { _tag: "Refusal", refusal: dropped(at, "Core interrupted the request") }
  return bad(`a malformed cause: ${line.slice(0, 200)}`)
}

/** One line from Core, for the request `id`: its answer, or undefined for a line to skip (`Pong`). */
export const decodeLine = (line: string, id: string, at: Endpoint): Answer | undefined => {
  const reply = decodeReply(line, at)
  if (reply === undefined || reply.requestId === undefined || reply.requestId === id) return reply?.answer
  return { _tag: "Refusal", refusal: garbled(at, `an answer to request ${reply.requestId}, not ${id}`) }
}

/** What a request aborted by its signal answers: the caller stopped waiting, Core was told to cancel. */
const abandoned = (): Answer => ({
  _tag: "Refusal",
  refusal: refusal("TOOL_CANCELLED", "The request was cancelled before Core answered it.")
})

interface Routing {
  readonly pending: Map<string, (answer: Answer) => void>
  /** Requests we stopped waiting for (aborted, timed out): Core may still send their Exit, which is dropped. */
  readonly forgotten: Set<string>
  readonly settle: (id: string, answer: Answer) => void
  /** The socket is gone: every pending request and every later one answers `dropped`. */
  readonly lose: (cause: string) => void
  readonly lost: () => Answer | undefined
  readonly receive: (chunk: string) => void
}

/** Routes each line Core sends to the request it answers; a line it cannot route fails every pending request. */
const routing = (at: Endpoint): Routing => {
  const lines = new TextLineSplitter(MAX_LINE)
  const pending = new Map<string, (answer: Answer) => void>()
  const forgotten = new Set<string>()
  let gone: Answer | undefined
  const settle = (id: string, answer: Answer) => {
    const resolve = pending.get(id)
    pending.delete(id)
    resolve?.(answer)
  }
  const settleAll = (answer: Answer) => {
    for (const id of [...pending.keys()]) settle(id, answer)
  }
  const unreadable = (cause: string) => settleAll({ _tag: "Refusal", refusal: garbled(at, cause) })
  const receive = (chunk: string) => {
    const pushed = lines.push(chunk)
    if (pushed._tag === "TooLong") return unreadable("a line over 16 MiB")
    for (const line of pushed.lines) {
      const reply = line === "" ? undefined : decodeReply(line, at)
      if (reply === undefined || (reply.requestId !== undefined && forgotten.delete(reply.requestId))) continue
      if (reply.requestId === undefined) return settleAll(reply.answer)
      if (!pending.has(reply.requestId)) return unreadable(`an unasked message: ${line.slice(0, 200)}`)
      settle(reply.requestId, reply.answer)
    }
  }
  const lose = (cause: string) => {
    gone ??= { _tag: "Refusal", refusal: dropped(at, cause) }
    settleAll(gone)
  }
  return { pending, forgotten, settle, lose, lost: () => gone, receive }
}

const interruptLine = (requestId: string) => `${JSON.stringify({ _tag: "Interrupt", requestId })}\n`

/** The wire over a connected socket: requests numbered from 0, each settled once (answer, timeout, abort, loss). */
const wireOn = (socket: net.Socket, routes: Routing): Wire => {
  let nextId = 0
  return {
    request: (tag, payload, headers, timeout, signal) =>
      new Promise<Answer>((resolve) => {
        const id = String(nextId++)
        const gone = routes.lost()
        if (gone !== undefined || signal?.aborted) return resolve(gone ?? abandoned())
        const forget = (answer: Answer) => {
          routes.forgotten.add(id)
          routes.settle(id, answer)
        }
        const timer =
          timeout === undefined
            ? undefined
            : setTimeout(() => forget({ _tag: "Refusal", refusal: timeout.refusal }), timeout.ms)
        const onAbort = () => {
          socket.write(interruptLine(id))
          forget(abandoned())
        }
        signal?.addEventListener("abort", onAbort, { once: true })
        routes.pending.set(id, (answer) => {
          clearTimeout(timer)
          signal?.removeEventListener("abort", onAbort)
          resolve(answer)
        })
        socket.write(`${JSON.stringify({ _tag: "Request", id, tag, payload, headers })}\n`)
      }),
    cancel: () =>
      new Promise<void>((resolve) => {
        const ids = [...routes.pending.keys()]
        routes.pending.clear()
        const closed = () => {
          socket.destroy()
          resolve()
        }
        if (ids.length === 0 || socket.destroyed) return closed()
        const done = setTimeout(closed, 1_000)
        socket.end(ids.map(interruptLine).join(""), () => {
          clearTimeout(done)
          closed()
        })
      }),
    close: () => {
      routes.pending.clear()
      socket.destroy()
    }
  }
}

/** Connects to Core's socket; a failed connect is a refusal that says why (Reach.openFailure). */
export const connect = (at: Endpoint): Promise<Wire | Refusal> =>
  new Promise((resolveConnect) => {
    const socket = net.createConnection({ path: at.socketPath })
    const openTimer = setTimeout(() => {
      socket.destroy()
      resolveConnect(openFailure("Timeout", new Error(`connect timed out after ${OPEN_TIMEOUT_MS} ms`), at))
    }, OPEN_TIMEOUT_MS)
    let connected = false
    const routes = routing(at)
    socket.setEncoding("utf8")
    socket.on("data", routes.receive)
    socket.once("connect", () => {
      connected = true
      clearTimeout(openTimer)
      socket.on("error", (error) => routes.lose(error.message))
      socket.on("close", () => routes.lose("the socket closed"))
      resolveConnect(wireOn(socket, routes))
    })
    socket.once("error", (error) => {
      if (connected) return
      clearTimeout(openTimer)
      resolveConnect(openFailure("Unknown", error, at))
    })
  })
