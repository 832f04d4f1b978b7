/**
 * Output — what pedelec-cli prints and the exit code that goes with it. Agent commands (and `--json`) print exactly
 * one JSON line on stdout, the contracts' `CliOutput`; the user commands print text. Human detail goes to stderr,
 * never a stack trace to stdout. Effect-free, so the fast path (help, version, usage errors) uses it too; the one
 * place that chooses an exit code from an error code.
 */
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { CLI_EXIT, CliOutput } from "@pedelec/contracts/node/CliOutput"
import type { ToolError } from "@pedelec/contracts/Tool"
import { USAGE } from "./Args.ts"

export const EXIT: typeof CLI_EXIT = { ok: 0, toolFailed: 1, usage: 2, unavailable: 3 }
export type ExitCode = (typeof CLI_EXIT)[keyof typeof CLI_EXIT]

/** Codes that mean Pedelec cannot be used from here at all, rather than that this one call failed. */
const UNAVAILABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "CORE_RUNTIME_UNAVAILABLE",
  "UNAUTHORIZED",
  "SESSION_NOT_FOUND",
  "SESSION_ENDED",
  "SESSION_ACCESS_DENIED",
  "PROTOCOL_VERSION_MISMATCH",
  "PROTOCOL_ERROR"
])

export const exitFor = (code: ErrorCode): ExitCode => (UNAVAILABLE.has(code) ? EXIT.unavailable : EXIT.toolFailed)

/** Everything one run prints: `stdout` is the JSON line or the user command's text. */
export interface Outcome {
  readonly exit: ExitCode
  readonly stdout: string
  readonly stderr?: string
}

export const jsonLine = (output: CliOutput): string => `${JSON.stringify(output)}\n`

/** A `ToolError` without an absent `details` key, so the line has no `"details":undefined` surprises. */
export const toolError = (code: ErrorCode, message: string, details?: ToolError["details"]): ToolError =>
  details === undefined ? { code, message } : { code, message, details }

export const printed = (output: CliOutput, exit?: ExitCode): Outcome => ({
  exit: exit ?? (output.ok ? EXIT.ok : exitFor(output.error.code)),
  stdout: jsonLine(output)
})

/** A result Core decoded for us (tool summaries, a spec, settings): plain JSON data, printed as the ok line. */
export const succeeded = (result: unknown): Outcome => ({
  exit: EXIT.ok,
  stdout: `${JSON.stringify({ ok: true, result })}\n`
})

/** A failure as the line (agent commands, `--json`) or as text on stderr (user commands). */
export const failed = (error: ToolError, options: { readonly exit?: ExitCode; readonly json: boolean }): Outcome => {
  const exit = options.exit ?? exitFor(error.code)
  return options.json
    ? { exit, stdout: jsonLine({ ok: false, error }) }
    : { exit, stdout: "", stderr: `pedelec-cli: ${error.message} [${error.code}]\n` }
}

export const usageError = (message: string, json: boolean): Outcome => {
  const hint = json ? ` Usage: ${USAGE}` : " Run `pedelec-cli --help` for the commands."
  const sentence = /[.!?)]$/.test(message) ? message : `${message}.`
  return failed(toolError("INVALID_INPUT", `${sentence}${hint}`), { exit: EXIT.usage, json })
}

export const text = (body: string): Outcome => ({ exit: EXIT.ok, stdout: body.endsWith("\n") ? body : `${body}\n` })

const write = (stream: NodeJS.WriteStream, chunk: string): Promise<void> =>
  chunk === "" ? Promise.resolve() : new Promise((resolve) => stream.write(chunk, () => resolve()))

/** Prints the outcome and resolves once stdout has taken it, so exiting right after loses nothing. */
export const emit = async (outcome: Outcome): Promise<ExitCode> => {
  process.exitCode = outcome.exit
  await write(process.stderr, outcome.stderr ?? "")
  await write(process.stdout, outcome.stdout)
  return outcome.exit
}
