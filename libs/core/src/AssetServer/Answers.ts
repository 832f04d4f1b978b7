/**
 * AssetServer/Answers — how the asset server writes what it answers: the HTTP status of each refusal code, the
 * headers every answer carries, CORS for the ticket's own origin only, and a refusal as a JSON `{ code, message }`
 * that the client can read even while it is still sending a body, and the same for a request Node itself could not
 * parse or that ran out of time. It does not decide whether to refuse (the checks
 * are AssetServer's and AssetServer/Transfer's).
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http"
import { ASSET_LIMITS, type AssetRefusal } from "@pedelec/contracts/Assets"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import { PedelecError } from "@pedelec/contracts/PedelecError"

/** After a refusal the rest of a body is read and dropped (so the client reads the answer), up to this much. */
const DISCARD_LIMIT = ASSET_LIMITS.maxUploadBytes + 1024 * 1024

export const COMMON = { "x-content-type-options": "nosniff", "cache-control": "no-store" }

const statusOf = (code: ErrorCode): number => {
  switch (code) {
    case "INVALID_INPUT":
    case "ASSET_PATH_INVALID":
      return 400
    case "ASSET_UNAUTHORIZED":
    case "SESSION_ACCESS_DENIED":
      return 403
    case "ASSET_NOT_FOUND":
    case "SESSION_NOT_FOUND":
      return 404
    case "ASSET_TICKET_EXPIRED":
    case "SESSION_ENDED":
      return 410
    case "ASSET_TOO_LARGE":
      return 413
    default:
      return 500
  }
}

export const refusal = (code: ErrorCode, details: Record<string, string | number>, message?: string) =>
  PedelecError.fromCode(code, "core", message === undefined ? { details } : { details, message })

/** Only for the ticket's own origin: any other page gets no CORS allowance, so its browser hides the answer. */
export const corsHeaders = (origin: string | undefined): Record<string, string> =>
  origin === undefined ? { vary: "Origin" } : { "access-control-allow-origin": origin, vary: "Origin" }

/**
 * Reads and drops what is left of a refused body, then `done`; too much, and it hangs up. A client that is still
 * sending when its answer comes would otherwise find the connection closed (EPIPE) before it read the answer.
 */
const discard = (req: IncomingMessage, done: () => void) => {
  let dropped = 0
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > DISCARD_LIMIT) req.destroy()
  })
  req.once("end", done)
  req.on("error", () => undefined)
  req.resume()
}

export const refuse = (
  req: IncomingMessage,
  res: ServerResponse,
  error: PedelecError,
  corsOrigin: string | undefined,
  status = statusOf(error.code)
) => {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body: AssetRefusal = { code: error.code, message: error.message }
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...COMMON,
    ...corsHeaders(corsOrigin),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text))
  })
  if (req.complete) {
    res.end(text)
    return
  }
  // The whole answer now, the end of the response (and a `Connection: close` hang-up) once the body is dropped.
  // Headers first on their own: to a HEAD, Node ignores the write and would send nothing until the end.
  res.flushHeaders()
  res.write(text)
  discard(req, () => res.end())
}

/** Node's own statuses for a request it gave up on: out of time, headers too big, or not HTTP it can parse. */
const clientErrorStatus = (code: string | undefined) =>
  code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : code === "HPE_HEADER_OVERFLOW" ? 431 : 400

/** The raw bytes of that answer, with the coded body every other refusal has (Node's own has none). */
export const clientErrorAnswer = (error: NodeJS.ErrnoException): string => {
  const status = clientErrorStatus(error.code)
  const failure = refusal("INVALID_INPUT", { reason: `${STATUS_CODES[status]} (${error.code ?? "unparsable"})` })
  const text = JSON.stringify({ code: failure.code, message: failure.message } satisfies AssetRefusal)
  const headers = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    ...Object.entries(COMMON).map(([name, value]) => `${name}: ${value}`),
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(text)}`,
    "connection: close"
  ]
  return `${headers.join("\r\n")}\r\n\r\n${text}`
}
