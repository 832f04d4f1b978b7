/**
 * CliFailure — why a command printed an error instead of a result: the contract `ToolError` its line carries and
 * the exit code. Local to the CLI and never serialised: ToCore raises it for Core's refusals and for every way of
 * not reaching Core, commands raise it for bad input, and Program prints it through Output.
 */
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ErrorDetails } from "@pedelec/contracts/PedelecError"
import type { ToolError } from "@pedelec/contracts/Tool"
import * as Data from "effect/Data"
import { EXIT, type ExitCode, exitFor, toolError } from "./Output.ts"

export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly error: ToolError
  readonly exit: ExitCode
}> {
  static of(code: ErrorCode, message: string, details?: ErrorDetails): CliFailure {
    return new CliFailure({ error: toolError(code, message, details), exit: exitFor(code) })
  }

  /** A usage error (exit 2): the input can never work, whatever Core says. */
  static usage(code: ErrorCode, message: string, details?: ErrorDetails): CliFailure {
    return new CliFailure({ error: toolError(code, message, details), exit: EXIT.usage })
  }
}
