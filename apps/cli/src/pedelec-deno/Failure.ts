/**
 * Failure — pedelec-deno's own failures (never the script's): one error code, a message that says what to do, and
 * the exit code that goes with it. They are printed as pedelec-cli prints its failures, one
 * `{"ok":false,"error":{code,message,details}}` line on stdout. Effect-free, like everything on this path.
 */
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ErrorDetails } from "@pedelec/contracts/PedelecError"
import type { ToolError } from "@pedelec/contracts/Tool"
import { EXIT, exitFor, toolError } from "../Output.ts"
import type { Refusal } from "../Reach.ts"

/**
 * Exit codes of pedelec-deno's own failures; any other exit code is the script's. pedelec-cli's codes where they
 * mean the same (2 usage, 3 Pedelec or the runtime cannot be used from here, 1 this script was refused), and 124
 * for a script stopped at its timeout, as timeout(1) does.
 */
export const DENO_EXIT = { refused: EXIT.toolFailed, usage: EXIT.usage, unavailable: EXIT.unavailable, timeout: 124 }

export interface Failure {
  readonly error: ToolError
  readonly exit: number
}

const exitOf = (code: ErrorCode): number => {
  switch (code) {
    case "INVALID_INPUT":
      return DENO_EXIT.usage
    case "DENO_UNAVAILABLE":
      return DENO_EXIT.unavailable
    case "SCRIPT_TIMEOUT":
      return DENO_EXIT.timeout
    default:
      return exitFor(code)
  }
}

export const failure = (code: ErrorCode, message: string, details?: ErrorDetails): Failure => ({
  error: toolError(code, message, details),
  exit: exitOf(code)
})

/** Thrown by the steps of a run, so each step can stop it with the words it knows best. */
export class Refused extends Error {
  readonly failure: Failure
  constructor(failure: Failure) {
    super(failure.error.message)
    this.failure = failure
  }
}

export function refuse(code: ErrorCode, message: string, details?: ErrorDetails): never {
  throw new Refused(failure(code, message, details))
}

/** A refusal of the shared agent path (Reach, Agent) as pedelec-deno's failure. */
export const fromRefusal = (refusal: Refusal): Failure => ({ error: refusal.error, exit: refusal.exit })

export const NO_FALLBACK = "Report this to the user; do not run the script with node, bun or another deno."

export const denoUnavailable = (reason: string, details: ErrorDetails = {}): Failure =>
  failure("DENO_UNAVAILABLE", `pedelec-deno cannot run scripts here: ${reason}. ${NO_FALLBACK}`, details)

export const jsonLine = (failed: Failure): string => `${JSON.stringify({ ok: false, error: failed.error })}\n`
