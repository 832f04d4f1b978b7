/**
 * Launcher — the small script a browser starts as the native host: it sets `PEDELEC_HOME` and
 * `PEDELEC_CORE_COMMAND` and runs the host entry with an absolute node, so nothing is looked up on PATH (a browser
 * started from a desktop launcher has a minimal PATH) and the host needs no install-time config file. A `#!/bin/sh`
 * script on Linux and macOS, a `.cmd` on Windows. Pure text; writing it (0755) is Install's job.
 */
import { type Os, pathsFor } from "./Browsers.ts"
import { invalidInput } from "./RegistrationError.ts"

export interface LauncherInput {
  readonly os: Os
  /** The node (or Electron) binary that runs the host. */
  readonly nodePath: string
  /** The native host's built entry (`pedelec-native-host.mjs`). */
  readonly hostEntry: string
  readonly pedelecHome: string
  /** What the host starts when Core is not running (SPEC §5): the headless Core's bin. */
  readonly coreCommand: string
  /** Set `ELECTRON_RUN_AS_NODE=1`, for when `nodePath` is the desktop app's Electron binary. */
  readonly electronRunAsNode?: boolean
}

export const LAUNCHER_NAME = "pedelec-native-host"

export const launcherFileName = (os: Os): string => (os === "win32" ? `${LAUNCHER_NAME}.cmd` : LAUNCHER_NAME)

/** POSIX single quotes: everything is literal except `'` itself, written as `'\''`. */
export const shQuote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`

/**
 * A value for a `.cmd` line inside double quotes: there `&|<>^` are literal, and `!` is too with delayed expansion
 * off. `%` still expands, so it is doubled. A `"` or a line break cannot be carried at all; neither can be in a
 * Windows file name, so rejecting them costs nothing.
 */
export const cmdQuote = (value: string): string => {
  if (/["\r\n\0]/.test(value))
    throw invalidInput("A path in the Windows launcher cannot contain quotes or line breaks", value)
  return `"${value.replaceAll("%", "%%")}"`
}

const checkAbsolute = (input: LauncherInput): void => {
  const { isAbsolute } = pathsFor(input.os)
  const fields = [
    ["node path", input.nodePath],
    ["host entry", input.hostEntry],
    ["PEDELEC_HOME", input.pedelecHome],
    ["core command", input.coreCommand]
  ] as const
  for (const [name, value] of fields) {
    if (value.includes("\0")) throw invalidInput(`The ${name} contains a NUL byte`, value)
    // A relative path would resolve against the browser's chosen cwd, i.e. not where the user meant.
    if (!isAbsolute(value)) throw invalidInput(`The ${name} must be an absolute path`, value)
  }
}

const posix = (input: LauncherInput): string =>
  [
    "#!/bin/sh",
    "# Pedelec native host launcher, written by the Pedelec installer; a browser runs it with the calling",
    "# extension's origin as the argument. Everything is baked in at install time: reinstall to change it.",
    ...(input.electronRunAsNode ? ["ELECTRON_RUN_AS_NODE=1", "export ELECTRON_RUN_AS_NODE"] : []),
    `PEDELEC_HOME=${shQuote(input.pedelecHome)}`,
    "export PEDELEC_HOME",
    `PEDELEC_CORE_COMMAND=${shQuote(input.coreCommand)}`,
    "export PEDELEC_CORE_COMMAND",
    `exec ${shQuote(input.nodePath)} ${shQuote(input.hostEntry)} "$@"`,
    ""
  ].join("\n")

// `@echo off` comes first: an echoed command line on stdout would corrupt the native messaging stream.
const windows = (input: LauncherInput): string =>
  [
    "@echo off",
    "rem Pedelec native host launcher, written by the Pedelec installer. Reinstall to change it.",
    "setlocal DisableDelayedExpansion",
    ...(input.electronRunAsNode ? ['set "ELECTRON_RUN_AS_NODE=1"'] : []),
    `set ${cmdQuote(`PEDELEC_HOME=${input.pedelecHome}`)}`,
    `set ${cmdQuote(`PEDELEC_CORE_COMMAND=${input.coreCommand}`)}`,
    `${cmdQuote(input.nodePath)} ${cmdQuote(input.hostEntry)} %*`,
    ""
  ].join("\r\n")

/** The launcher's text; throws RegistrationError on a relative path or one the script cannot carry. */
export const launcherScript = (input: LauncherInput): string => {
  checkAbsolute(input)
  return input.os === "win32" ? windows(input) : posix(input)
}
