/**
 * Reach — every way of not reaching Core, as the line the agent reads: core.json missing or unreadable, a refused or
 * blocked connect (ENOENT/ECONNREFUSED, EPERM/EACCES from a sandbox), a stale pid, a silent hello, a protocol
 * mismatch, a garbled or dropped reply, and Core's refusals that need agent advice. Effect-free, so the agent
 * commands' wire client (AgentWire) and the effect client of the host commands (ToCore) share the same words.
 */
import { readFileSync } from "node:fs"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ErrorDetails } from "@pedelec/contracts/PedelecError"
import type { ToolError } from "@pedelec/contracts/Tool"
import { AUTH_HEADERS, PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import { type ExitCode, exitFor, toolError } from "./Output.ts"

/** From the effect-free modules of contracts and core-client: the agent path loads no Schema and restates nothing. */
export { PROTOCOL_VERSION }
export const SESSION_CAP_HEADER = AUTH_HEADERS.sessionCap

/** Where the running Core announces itself, for this process's PEDELEC_HOME. */
export const runtimeFile = (): string => resolveCorePaths().runtimeFile

/**
 * How long Core may take to answer the hello before the CLI calls it unresponsive. The connection was accepted, so
 * Core is alive: 50 sessions' agents on 2 cores starve it for seconds (8 of 1,000 calls missed a 10 s hello), and a
 * busy Core must slow callers down, never refuse them; the agent's own command timeout still bounds the wait.
 */
export const HELLO_TIMEOUT_MS = 30_000
export const OPEN_TIMEOUT_MS = 5_000

/** A refusal as the line and exit code; ToCore wraps it in a CliFailure. */
export interface Refusal {
  readonly error: ToolError
  readonly exit: ExitCode
}

export const refusal = (code: ErrorCode, message: string, details?: ErrorDetails): Refusal => ({
  error: toolError(code, message, details),
  exit: exitFor(code)
})

/** Where the CLI tried to reach Core, from core.json. */
export interface Endpoint {
  readonly socketPath: string
  readonly pid: number
}

const unavailable = (message: string, details: ErrorDetails) => refusal("CORE_RUNTIME_UNAVAILABLE", message, details)

const START_CORE = "Ask the user to start the Pedelec desktop app (or the headless `pedelec-core`), then retry."
const SANDBOX_FIX =
  "allow network/local-socket access for this agent, e.g. codex `-c sandbox_workspace_write.network_access=true`"

export const errnoOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && typeof (u as { code?: unknown }).code === "string"
    ? (u as { code: string }).code
    : undefined

export const mismatch = (actual: number): Refusal =>
  refusal(
    "PROTOCOL_VERSION_MISMATCH",
    `pedelec-cli speaks protocol ${PROTOCOL_VERSION} but the running Pedelec speaks ${actual}. Tell the user to update Pedelec so the CLI and the desktop app are the same release.`,
    { expected: PROTOCOL_VERSION, actual }
  )

/** No core.json: no Core. */
export const noRuntime = (file: string): Refusal =>
  unavailable(`Pedelec is not running: there is no ${file}. ${START_CORE}`, { runtimeFile: file })

/** core.json is there but this user cannot read it (`why`: the errno, or what the reader said). */
export const unreadableRuntime = (file: string, why: string): Refusal =>
  unavailable(
    `Cannot read ${file} (${why}). Run the agent as the user who runs Pedelec, or ask the user to restart Pedelec.`,
    { runtimeFile: file }
  )

/**
 * Reads `run/core.json` as JSON for the effect-free agent path (the host commands decode it with core-client's
 * RuntimeFile): no file means no Core. Checks the protocol before the rest, which may have changed; the caller
 * checks the fields it uses and answers `invalidRuntime` otherwise. Read synchronously: an asynchronous read waits
 * for libuv's thread pool to start, 3–16 ms of a short-lived command's time measured under load, for one small file.
 */
export const readRuntimeJson = (file: string): { readonly json: unknown } | Refusal => {
  let raw: string
  try {
    raw = readFileSync(file, "utf8")
  } catch (cause) {
    const code = errnoOf(cause)
    return code === "ENOENT" ? noRuntime(file) : unreadableRuntime(file, code ?? String(cause))
  }
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    return invalidRuntime(file)
  }
  const version =
    typeof json === "object" && json !== null ? (json as { protocolVersion?: unknown }).protocolVersion : 0
  if (typeof version === "number" && version !== PROTOCOL_VERSION) return mismatch(version)
  return { json }
}

export const invalidRuntime = (file: string): Refusal =>
  unavailable(`${file} is not a Pedelec runtime file. Ask the user to restart Pedelec.`, { runtimeFile: file })

export const helloTimeout = (at: Endpoint): Refusal =>
  unavailable(
    `The Pedelec runtime at ${at.socketPath} accepted the connection but did not answer within ${HELLO_TIMEOUT_MS / 1000} seconds. Ask the user to restart Pedelec, then retry.`,
    { socketPath: at.socketPath }
  )

/** Core sent something this CLI cannot read. */
export const garbled = (at: Endpoint, cause: string): Refusal =>
  refusal(
    "PROTOCOL_ERROR",
    "The running Pedelec sent a message this pedelec-cli cannot read. Tell the user to update Pedelec so the CLI and the desktop app are the same release.",
    { socketPath: at.socketPath, cause }
  )

/** The request may have reached Core (and a tool call the page) before the connection dropped. */
export const dropped = (at: Endpoint, cause: string): Refusal =>
  unavailable(
    `The connection to the Pedelec runtime at ${at.socketPath} closed before it answered (Core stopped or restarted), so a tool call may or may not have reached the page. Check before repeating a call that changes things; if Pedelec stays unreachable, tell the user.`,
    { socketPath: at.socketPath, cause }
  )

/** Connecting failed: by errno, each message says what to do. */
export const openFailure = (kind: "Unknown" | "Timeout", cause: unknown, at: Endpoint): Refusal => {
  const errno = kind === "Timeout" ? "ETIMEDOUT" : (errnoOf(cause) ?? "UNKNOWN")
  const system = cause instanceof Error ? cause.message : String(cause)
  const details = { socketPath: at.socketPath, errno, syscall: "connect", cause: system }
  switch (errno) {
    case "EPERM":
      return unavailable(
        `Pedelec cannot be reached from here: this agent's sandbox blocks local sockets (connect EPERM on ${at.socketPath}). Tell the user to ${SANDBOX_FIX}, then retry. Do not try to work around it.`,
        { ...details, fix: SANDBOX_FIX }
      )
    case "EACCES":
      return unavailable(
        `Permission denied connecting to the Pedelec runtime at ${at.socketPath}. Either this agent's sandbox blocks local sockets (tell the user to ${SANDBOX_FIX}), or the socket belongs to another user (run the agent as the user who runs Pedelec).`,
        { ...details, fix: SANDBOX_FIX }
      )
    default: {
      const stale = isProcessAlive(at.pid) ? "" : ` (run/core.json is stale: its process ${at.pid} has exited)`
      return unavailable(
        `Pedelec is not running: nothing accepts connections at ${at.socketPath} (${errno})${stale}. ${START_CORE}`,
        { ...details, pid: at.pid }
      )
    }
  }
}

/** Core's own refusals keep Core's words, except where an agent needs other advice than a page would. */
export const agentAdvice = (code: ErrorCode, sessionId: string): string | undefined => {
  switch (code) {
    case "UNAUTHORIZED":
      return `Pedelec refused this agent's capability for session ${sessionId}: the session has ended, or PEDELEC_SESSION_CAP and the thread id belong to different sessions. Use the PEDELEC_THREAD_ID and PEDELEC_SESSION_CAP your shell was started with; if they are unchanged, stop using Pedelec tools and tell the user.`
    case "SESSION_NOT_FOUND":
      return `Pedelec has no session ${sessionId}. Check the thread id (PEDELEC_THREAD_ID); if it is right, the session is gone: tell the user.`
    case "SESSION_ENDED":
      return `Session ${sessionId} has ended, so its tools can no longer be called. Stop using Pedelec tools and tell the user.`
    default:
      return undefined
  }
}
