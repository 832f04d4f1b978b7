/**
 * Args — turns pedelec-cli's argv and environment into one tagged command, or a usage error that says what is
 * wrong. Pure and effect-free: it runs before anything else is loaded, so `--help`, `--version` and usage errors
 * answer at plain-node speed. It checks shapes only (flags, arity, JSON arguments); ids and names are decoded with
 * the contracts' schemas by the commands, and nothing here talks to Core.
 */

import { MAX_JSON_DEPTH } from "@pedelec/contracts/Wire"
import { BROWSERS, type Browser, isBrowser, isExtensionId } from "@pedelec/host-registration/Browsers"
import type { JsonObject } from "effect/Schema"

/** The commands that talk to Core; `Program` runs them. */
export type CoreCommand =
  | { readonly _tag: "ToolList"; readonly threadId: string }
  | { readonly _tag: "ToolSpec"; readonly threadId: string; readonly name: string }
  | { readonly _tag: "ToolCall"; readonly threadId: string; readonly name: string; readonly args: JsonObject }
  /** A stdio MCP server of the session's tools, on one connection to Core (`Mcp` runs it). */
  | { readonly _tag: "Mcp"; readonly threadId: string }
  | { readonly _tag: "SettingsGet"; readonly json: boolean }
  | { readonly _tag: "SettingsSet"; readonly json: boolean; readonly key: string; readonly value: string }
  | { readonly _tag: "Providers"; readonly json: boolean; readonly rescan: boolean }

/** Commands that change this machine and never talk to Core; `browsers` undefined means the default. */
export type LocalCommand =
  | {
      readonly _tag: "InstallNativeHost"
      readonly json: boolean
      readonly browsers: ReadonlyArray<Browser> | undefined
      readonly extensionIds: ReadonlyArray<string>
    }
  | {
      readonly _tag: "UninstallNativeHost"
      readonly json: boolean
      readonly browsers: ReadonlyArray<Browser> | undefined
    }

export type Command = CoreCommand | LocalCommand

export type Parsed =
  | Command
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  /** `json`: answer with the JSON line (agent commands, `--json`) rather than text on stderr. */
  | { readonly _tag: "UsageError"; readonly message: string; readonly json: boolean }

export const USAGE = "pedelec-cli [--thread-id <id>] tool-list | tool-spec <name> | tool-call <name> '<json>' | mcp"

export const HELP = `pedelec-cli: the command an agent runs to use the tools of the web page that started its Pedelec session.

Agent commands print exactly one JSON line: {"ok":true,"result":…} or {"ok":false,"error":{"code","message","details"}}.
  pedelec-cli [--thread-id <id>] tool-list                   list the session's tools
  pedelec-cli [--thread-id <id>] tool-spec <name>            print one tool's description and argument schema
  pedelec-cli [--thread-id <id>] tool-call <name> '<json>'   call a tool with a JSON object of arguments
  --thread-id defaults to $PEDELEC_THREAD_ID; the session's capability is read from $PEDELEC_SESSION_CAP.
  A result over 32 KiB arrives as {"ok":true,"resultFile":…,"bytes":…,"preview":…}: read that file for all of it.

  pedelec-cli [--thread-id <id>] mcp                         serve the session's tools as an MCP server on stdio
  For an agent CLI's MCP configuration (same thread id and capability): one connection to Pedelec for the whole
  session. tools/list gives each tool's argument schema and hints; tools/call answers with the page's result as
  JSON text, or with the line tool-call would print (the resultFile form, or isError with the coded error and what
  to do); notifications/cancelled cancels the page's handler. stdout carries MCP only. When the session cannot be
  reached at start it prints "pedelec-cli: <what to do> [<CODE>]" on stderr and exits 2 or 3 (see below) without
  serving; it exits 0 when stdin closes.

User commands (for machines without the desktop app; text output, or the JSON line with --json):
  pedelec-cli settings get
  pedelec-cli settings set <key> <value>   keys: defaultProvider, defaultEffortLevel, defaultModels.<provider>,
                                           effortProfiles.<provider>.<low|medium|high>, ollama.baseUrl,
                                           ollama.timeoutMs, ollama.defaultModel, fullAccessOrigins
                                           (value: JSON if it parses, else text; null clears; "-" reads stdin)
  printf '%s' "$KEY" | pedelec-cli settings set ollama.apiKey -
                                           the Ollama API key, from stdin only: any local process can read a
                                           command's arguments (/proc/<pid>/cmdline); \`… ollama.apiKey null\` clears it
  pedelec-cli providers [--rescan]
  pedelec-cli install-native-host [--browser chrome|chromium|edge|brave|all]… [--extension-id <id>]…
                                           register the native host for the browsers (default: those found for
                                           this user, else all) and extension ids (default: the published one)
  pedelec-cli uninstall-native-host [--browser …]…   remove what install-native-host wrote (default: all browsers)

Exit codes: 0 ok, 1 the tool call failed, 2 usage error, 3 Pedelec cannot be used here (Core not running, unknown
or ended session, bad capability, a sandbox that blocks local sockets); the line says which and what to do.
Also: --help, --version. PEDELEC_HOME overrides ~/.pedelec.
`

const AGENT_COMMANDS = new Set(["tool-list", "tool-spec", "tool-call"])
const VALUE_FLAGS = new Set(["--thread-id", "--browser", "--extension-id"])
const NATIVE_HOST_COMMANDS = new Set(["install-native-host", "uninstall-native-host"])
const NATIVE_HOST_FLAGS = ["--browser", "--extension-id"]
const BOOLEAN_FLAGS = new Set(["--json", "--rescan"])

interface Scan {
  readonly positionals: Array<string>
  readonly flags: Map<string, string | true>
  /** Every value of a value flag, in order, for the flags that may repeat. */
  readonly values: Map<string, Array<string>>
  readonly error: string | undefined
}

// Flags may come before or after the command: agents write both.
const scan = (argv: ReadonlyArray<string>): Scan => {
  const positionals: Array<string> = []
  const flags = new Map<string, string | true>()
  const values = new Map<string, Array<string>>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = eq === -1 ? arg : arg.slice(0, eq)
    if (VALUE_FLAGS.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1)
      if (value === undefined || value === "") return { positionals, flags, values, error: `${name} needs a value` }
      flags.set(name, value)
      values.set(name, [...(values.get(name) ?? []), value])
    } else if (BOOLEAN_FLAGS.has(name) && eq === -1) {
      flags.set(name, true)
    } else {
      return { positionals, flags, values, error: `Unknown flag ${arg}` }
    }
  }
  return { positionals, flags, values, error: undefined }
}

const usage = (message: string, json = true): Parsed => ({ _tag: "UsageError", message, json })

/**
 * The JSON pointer of the first value nested deeper than the contracts' limit, or undefined. Iterative: what it
 * guards against is a stack that recursion (Schema, encoders) would exhaust. The contracts' own walker loads Schema,
 * which the agent's fast path must not.
 */
const tooDeep = (value: unknown): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly pointer: string; readonly depth: number }> = [
    { value, pointer: "", depth: 0 }
  ]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue
    if (next.depth >= MAX_JSON_DEPTH) return next.pointer
    for (const [key, child] of Object.entries(next.value)) {
      const pointer = `${next.pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`
      stack.push({ value: child, pointer, depth: next.depth + 1 })
    }
  }
  return undefined
}

const parseObject = (text: string): JsonObject | string => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return `The tool arguments are not valid JSON (${reason}). Pass one JSON object in single quotes, e.g. '{"query":"x"}'`
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `The tool arguments must be a JSON object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}. Pass e.g. '{"query":"x"}'`
  const pointer = tooDeep(value)
  if (pointer !== undefined)
    return `The tool arguments are nested deeper than ${MAX_JSON_DEPTH} levels (at ${pointer}). Pass flatter arguments`
  return value as JsonObject
}

const unexpected = (command: string, arg: string) =>
  usage(`Unexpected argument ${JSON.stringify(arg)} after ${command}`)

const agentCommand = (command: string, rest: ReadonlyArray<string>, threadId: string): Parsed => {
  const [name, second, third] = rest
  if (command === "tool-list") return name === undefined ? { _tag: "ToolList", threadId } : unexpected(command, name)
  if (name === undefined) return usage(`${command} needs a tool name (run tool-list to see them)`)
  if (command === "tool-spec")
    return second === undefined ? { _tag: "ToolSpec", threadId, name } : unexpected(command, second)
  if (third !== undefined)
    return usage(
      `Unexpected argument ${JSON.stringify(third)}: pass all tool arguments as one JSON object in single quotes`
    )
  const args = second === undefined ? {} : parseObject(second)
  return typeof args === "string" ? usage(args) : { _tag: "ToolCall", threadId, name, args }
}

const userCommand = (command: string, rest: ReadonlyArray<string>, scanned: Scan): Parsed => {
  const json = scanned.flags.has("--json")
  if (scanned.flags.has("--thread-id")) return usage(`--thread-id is for the agent commands, not ${command}`)
  if (command === "providers") {
    if (rest[0] !== undefined) return usage(`Unexpected argument ${JSON.stringify(rest[0])} after providers`, json)
    return { _tag: "Providers", json, rescan: scanned.flags.has("--rescan") }
  }
  if (scanned.flags.has("--rescan")) return usage("--rescan belongs to the providers command", json)
  const [action, key, value, ...more] = rest
  if (action === "get" && rest.length === 1) return { _tag: "SettingsGet", json }
  if (action === "set" && key !== undefined && value !== undefined && more.length === 0)
    return { _tag: "SettingsSet", json, key, value }
  return usage("Use `pedelec-cli settings get` or `pedelec-cli settings set <key> <value>`", json)
}

const browsersOf = (names: ReadonlyArray<string>): ReadonlyArray<Browser> | string | undefined => {
  if (names.length === 0) return undefined
  const chosen = new Set<Browser>()
  for (const name of names.flatMap((value) => value.split(","))) {
    if (name === "all") for (const browser of BROWSERS) chosen.add(browser)
    else if (isBrowser(name)) chosen.add(name)
    else return `Unknown browser ${JSON.stringify(name)}: use chrome, chromium, edge, brave or all`
  }
  return BROWSERS.filter((browser) => chosen.has(browser))
}

const nativeHostCommand = (command: string, rest: ReadonlyArray<string>, scanned: Scan): Parsed => {
  const json = scanned.flags.has("--json")
  if (rest[0] !== undefined) return usage(`Unexpected argument ${JSON.stringify(rest[0])} after ${command}`, json)
  for (const flag of ["--thread-id", "--rescan"])
    if (scanned.flags.has(flag)) return usage(`${flag} does not belong to ${command}`, json)
  const browsers = browsersOf(scanned.values.get("--browser") ?? [])
  if (typeof browsers === "string") return usage(browsers, json)
  if (command === "uninstall-native-host") {
    if (scanned.flags.has("--extension-id")) return usage("--extension-id belongs to install-native-host", json)
    return { _tag: "UninstallNativeHost", json, browsers }
  }
  const extensionIds = [...new Set(scanned.values.get("--extension-id") ?? [])]
  const bad = extensionIds.find((id) => !isExtensionId(id))
  if (bad !== undefined) return usage(`${JSON.stringify(bad)} is not an extension id (32 letters a-p)`, json)
  return { _tag: "InstallNativeHost", json, browsers, extensionIds }
}

const NO_THREAD_ID =
  "No thread id: pass --thread-id <id> or set PEDELEC_THREAD_ID (Pedelec sets it in the agent's shell)"

const threadIdOf = (scanned: Scan, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const flag = scanned.flags.get("--thread-id")
  const threadId = typeof flag === "string" ? flag : env.PEDELEC_THREAD_ID
  return threadId === "" ? undefined : threadId
}

/** stdout is the MCP stream, so `mcp` says what is wrong as text on stderr (`json: false`). */
const mcpCommand = (
  rest: ReadonlyArray<string>,
  scanned: Scan,
  env: Readonly<Record<string, string | undefined>>
): Parsed => {
  const stray = [...scanned.flags.keys()].find((flag) => flag !== "--thread-id")
  const wrong =
    scanned.error ??
    (rest[0] === undefined ? undefined : `Unexpected argument ${JSON.stringify(rest[0])} after mcp`) ??
    (stray === undefined ? undefined : `${stray} does not belong to mcp`)
  if (wrong !== undefined) return usage(wrong, false)
  const threadId = threadIdOf(scanned, env)
  return threadId === undefined ? usage(NO_THREAD_ID, false) : { _tag: "Mcp", threadId }
}

export const parseArgs = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): Parsed => {
  const end = argv.indexOf("--")
  const options = end === -1 ? argv : argv.slice(0, end)
  if (options.includes("--help") || options.includes("-h")) return { _tag: "Help" }
  if (options.includes("--version") || options.includes("-V")) return { _tag: "Version" }
  const scanned = scan(argv)
  const [command, ...rest] = scanned.positionals
  if (command === "mcp") return mcpCommand(rest, scanned, env)
  // --thread-id only ever comes from an agent's shell, which reads the JSON line whatever the command.
  const json =
    command === undefined ||
    AGENT_COMMANDS.has(command) ||
    scanned.flags.has("--json") ||
    scanned.flags.has("--thread-id")
  if (scanned.error !== undefined) return usage(scanned.error, json)
  if (command === undefined) return usage("No command given")
  if (NATIVE_HOST_COMMANDS.has(command)) return nativeHostCommand(command, rest, scanned)
  const misplaced = NATIVE_HOST_FLAGS.find((flag) => scanned.flags.has(flag))
  if (misplaced !== undefined) return usage(`${misplaced} belongs to install-native-host`, json)
  if (command === "settings" || command === "providers") return userCommand(command, rest, scanned)
  if (!AGENT_COMMANDS.has(command)) return usage(`Unknown command ${JSON.stringify(command)}`)
  // `--json` is what agent commands always do, so it is accepted and changes nothing.
  if (scanned.flags.has("--rescan")) return usage("--rescan belongs to the providers command")
  const threadId = threadIdOf(scanned, env)
  if (threadId === undefined) return usage(NO_THREAD_ID)
  return agentCommand(command, rest, threadId)
}
