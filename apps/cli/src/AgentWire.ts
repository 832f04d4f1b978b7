/**
 * AgentWire — the agent commands' link to Core without effect at run time: one Unix socket (node:net) speaking
 * effect/rpc's NDJSON wire format by hand. Requests are `{"_tag":"Request","id","tag","payload","headers"}`, one at a
 * time; replies are decoded strictly (`Exit` with `Success`, or a `Failure` cause of `Fail`/`Die`/`Interrupt`;
 * `Pong` is skipped; `Defect`, `ClientProtocolError` and anything else are a PROTOCOL_ERROR, in Reach's words).
 */
import net from "node:net"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ErrorDetails } from "@pedelec/contracts/PedelecError"
import type { ToolError } from "@pedelec/contracts/Tool"
import { TextLineSplitter } from "@pedelec/core-client/TextLines"
import { dropped, type Endpoint, garbled, OPEN_TIMEOUT_MS, openFailure, type Refusal } from "./Reach.ts"

export type Answer =
  | { readonly _tag: "Success"; readonly value: unknown }
  /** Core refused the request itself (a `PedelecError`): its code, words and details. */
  | { readonly _tag: "CoreError"; readonly error: ToolError }
  | { readonly _tag: "Refusal"; readonly refusal: Refusal }

export interface Wire {
  /** Sends one request and waits for its Exit; `timeout` answers with its refusal when Core stays silent. */
  readonly request: (
    tag: string,
    payload: unknown,
    headers: ReadonlyArray<readonly [string, string]>,
    timeout?: { readonly ms: number; readonly refusal: Refusal }
  ) => Promise<Answer>
  /** Interrupts the pending request (Core cancels it) and closes the socket once that is written. */
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

/** One line from Core, for the request `id`: its answer, or undefined for a line to skip (`Pong`). */
export const decodeLine = (line: string, id: string, at: Endpoint): Answer | undefined => {
  const bad = (cause: string): Answer => ({ _tag: "Refusal", refusal: garbled(at, cause) })
  let message: unknown
  try {
    message = JSON.parse(line)
  } catch {
    return bad(`not JSON: ${line.slice(0, 200)}`)
  }
  if (!isRecord(message)) return bad(`not a message: ${line.slice(0, 200)}`)
  if (message._tag === "Pong") return undefined
  if (message._tag !== "Exit") return bad(`unexpected ${String(message._tag)}: ${line.slice(0, 200)}`)
  if (String(message.requestId) !== id) return bad(`an answer to request ${String(message.requestId)}, not ${id}`)
  const exit = message.exit
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

/** Connects to Core's socket; a failed connect is a refusal that says why (Reach.openFailure). */
export const connect = (at: Endpoint): Promise<Wire | Refusal> =>
  new Promise((resolveConnect) => {
    const socket = net.createConnection({ path: at.socketPath })
    const openTimer = setTimeout(() => {
      socket.destroy()
      resolveConnect(openFailure("Timeout", new Error(`connect timed out after ${OPEN_TIMEOUT_MS} ms`), at))
    }, OPEN_TIMEOUT_MS)
    let connected = false
    let nextId = 0
    const lines = new TextLineSplitter(MAX_LINE)
    let pending: { readonly id: string; readonly settle: (answer: Answer) => void } | undefined
    const settle = (answer: Answer) => {
      const current = pending
      pending = undefined
      current?.settle(answer)
    }
    const lost = (cause: string) => settle({ _tag: "Refusal", refusal: dropped(at, cause) })
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      const pushed = lines.push(chunk)
      if (pushed._tag === "TooLong") return settle({ _tag: "Refusal", refusal: garbled(at, "a line over 16 MiB") })
      for (const line of pushed.lines) {
        if (line === "") continue
        if (pending === undefined) return lost(`an unasked message: ${line.slice(0, 200)}`)
        const answer = decodeLine(line, pending.id, at)
        if (answer !== undefined) settle(answer)
      }
    })
    socket.once("connect", () => {
      connected = true
      clearTimeout(openTimer)
      socket.on("error", (error) => lost(error.message))
      socket.on("close", () => lost("the socket closed"))
      resolveConnect({
        request: (tag, payload, headers, timeout) =>
          new Promise<Answer>((resolve) => {
            const id = String(nextId++)
            const timer =
              timeout === undefined
                ? undefined
                : setTimeout(() => settle({ _tag: "Refusal", refusal: timeout.refusal }), timeout.ms)
            pending = {
              id,
              settle: (answer) => {
                clearTimeout(timer)
                resolve(answer)
              }
            }
            socket.write(`${JSON.stringify({ _tag: "Request", id, tag, payload, headers })}\n`)
          }),
        cancel: () =>
          new Promise<void>((resolve) => {
            const current = pending
            pending = undefined
            const closed = () => {
              socket.destroy()
              resolve()
            }
            if (current === undefined || socket.destroyed) return closed()
            const done = setTimeout(closed, 1_000)
            socket.end(`${JSON.stringify({ _tag: "Interrupt", requestId: current.id })}\n`, () => {
              clearTimeout(done)
              closed()
            })
          }),
        close: () => {
          pending = undefined
          socket.destroy()
        }
      })
    })
    socket.once("error", (error) => {
      if (connected) return
      clearTimeout(openTimer)
      resolveConnect(openFailure("Unknown", error, at))
    })
  })
