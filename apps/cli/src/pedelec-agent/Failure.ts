/**
 * AgentFailure — why pedelec-agent could not finish a turn: a contract code, the details its message needs, and the
 * message the user reads (the catalog's, unless Core already worded it). main.ts prints it as the turn's one
 * `error` event; the loop throws it from wherever the turn broke.
 */
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import { type ErrorDetails, PedelecError } from "@pedelec/contracts/PedelecError"

export class AgentFailure extends Error {
  readonly code: ErrorCode
  readonly details: ErrorDetails

  constructor(code: ErrorCode, details: ErrorDetails, reason?: string, worded?: string) {
    const all = reason === undefined ? details : { ...details, reason }
    super(worded ?? PedelecError.fromCode(code, "provider", { details: all }).message)
    this.code = code
    this.details = all
  }
}

/** The turn was cancelled (SIGINT/SIGTERM): nothing more is printed. */
export class Cancelled extends Error {}

/**
 * Core cancelled the turn's page tool call, so the turn is over for Core: nothing is printed for it, and the process
 * waits for its interrupt (or the next turn).
 */
export class TurnOver extends Error {}
