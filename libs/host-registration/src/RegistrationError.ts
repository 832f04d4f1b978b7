/**
 * RegistrationError — why registering or unregistering the native host failed: bad input (an extension id, a path
 * the launcher cannot carry), a file that could not be written or removed, or a `reg.exe` call that failed. It
 * carries the path or key involved so a caller can say what to fix; printing it is the caller's job.
 */
import * as Data from "effect/Data"

export type RegistrationFailure = "InvalidInput" | "FileSystem" | "Registry"

export class RegistrationError extends Data.TaggedError("RegistrationError")<{
  readonly reason: RegistrationFailure
  readonly message: string
  /** The file, directory or registry key involved, when there is one. */
  readonly target?: string
}> {}

export const invalidInput = (message: string, target?: string): RegistrationError =>
  new RegistrationError(
    target === undefined ? { reason: "InvalidInput", message } : { reason: "InvalidInput", message, target }
  )
