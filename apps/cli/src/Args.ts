/**
 * Args — turns pedelec-cli's argv and environment into one tagged command, or a usage error that says what is
 * wrong. Pure and effect-free: it runs before anything else is loaded, so `--help`, `--version` and usage errors
 * answer at plain-node speed. It checks shapes only (flags, arity, JSON arguments); ids and names are decoded with
 * the contracts' schemas by the commands, and nothing here talks to Core.
 */
import type { JsonObject } from "effect/Schema"

/** The commands that talk to Core; `Program` runs them. */
export type CoreCommand =
  | { readonly _tag: "ToolList"; readonly threadId: string }
  | { readonly _tag: "ToolSpec"; readonly threadId: string; readonly name: string }
  | { readonly _tag: "ToolCall"; readonly threadId: string; readonly name: string; readonly args: JsonObject }
  | { readonly _tag: "SettingsGet"; readonly json: boolean }
  | { readonly _tag: "SettingsSet"; readonly json: boolean; readonly key: string; readonly value: string }
  | { readonly _tag: "Providers"; readonly json: boolean; readonly rescan: boolean }

export type Parsed =
  | CoreCommand
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  /** `json`: answer with the JSON line (agent commands, `--json`) rather than text on stderr. */
  | { readonly _tag: "UsageError"; readonly message: string; readonly json: boolean }

export const USAGE = "pedelec-cli [--thread-id <id>] tool-list | tool-spec <name> | tool-call <name> '<json>'"

export const HELP = `pedelec-cli: the command an agent runs to use the tools of the web page that started its Pedelec session.

Agent commands print exactly one JSON line: {"ok":true,"result":…} or {"ok":false,"error":{"code","message","details"}}.
  pedelec-cli [--thread-id <id>] tool-list                   list the session's tools
  pedelec-cli [--thread-id <id>] tool-spec <name>            print one tool's description and argument schema
  pedelec-cli [--thread-id <id>] tool-call <name> '<json>'   call a tool with a JSON object of arguments
  --thread-id defaults to $PEDELEC_THREAD_ID; the session's capability is read from $PEDELEC_SESSION_CAP.
  A result over 32 KiB arrives as {"ok":true,"resultFile":…,"bytes":…,"preview":…}: read that file for all of it.

User commands (for machines without the desktop app; text output, or the JSON line with --json):
  pedelec-cli settings get
  pedelec-cli settings set <key> <value>   keys: defaultProvider, defaultEffortLevel, defaultModels.<provider>,
                                           effortProfiles.<provider>.<low|medium|high>, ollama.baseUrl,
                                           ollama.timeoutMs, ollama.defaultModel, fullAccessOrigins, ollama.apiKey
                                           (value: JSON if it parses, else text; null clears; "-" reads stdin)
  pedelec-cli providers [--rescan]

Exit codes: 0 ok, 1 the tool call failed, 2 usage error, 3 Pedelec cannot be used here (Core not running, unknown
or ended session, bad capability, a sandbox that blocks local sockets); the line says which and what to do.
Also: --help, --version. PEDELEC_HOME overrides ~/.pedelec.
`

const AGENT_COMMANDS = new Set(["tool-list", "tool-spec", "tool-call"])
const VALUE_FLAGS = new Set(["--thread-id"])
const BOOLEAN_FLAGS = new Set(["--json", "--rescan"])

interface Scan {
  readonly positionals: Array<string>
  readonly flags: Map<string, string | true>
  readonly error: string | undefined
}

// Flags may come before or after the command: agents write both.
const scan = (argv: ReadonlyArray<string>): Scan => {
  const positionals: Array<string> = []
  const flags = new Map<string, string | true>()
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
      if (value === undefined || value === "") return { positionals, flags, error: `${name} needs a value` }
      flags.set(name, value)
    } else if (BOOLEAN_FLAGS.has(name) && eq === -1) {
      flags.set(name, true)
    } else {
      return { positionals, flags, error: `Unknown flag ${arg}` }
    }
  }
  return { positionals, flags, error: undefined }
}

const usage = (message: string, json = true): Parsed => ({ _tag: "UsageError", message, json })

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
  if (scanned.flags.has("--thread-id")) return usage(`--thread-id is for the agent commands, not ${command}`, json)
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

export const parseArgs = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): Parsed => {
  const end = argv.indexOf("--")
  const options = end === -1 ? argv : argv.slice(0, end)
  if (options.includes("--help") || options.includes("-h")) return { _tag: "Help" }
  if (options.includes("--version") || options.includes("-V")) return { _tag: "Version" }
  const scanned = scan(argv)
  const [command, ...rest] = scanned.positionals
  const json = command === undefined || AGENT_COMMANDS.has(command) || scanned.flags.has("--json")
  if (scanned.error !== undefined) return usage(scanned.error, json)
  if (command === undefined) return usage("No command given")
  if (command === "settings" || command === "providers") return userCommand(command, rest, scanned)
  if (!AGENT_COMMANDS.has(command)) return usage(`Unknown command ${JSON.stringify(command)}`)
  // `--json` is what agent commands always do, so it is accepted and changes nothing.
  if (scanned.flags.has("--rescan")) return usage("--rescan belongs to the providers command")
  const flag = scanned.flags.get("--thread-id")
  const threadId = typeof flag === "string" ? flag : env.PEDELEC_THREAD_ID
  if (threadId === undefined || threadId === "")
    return usage("No thread id: pass --thread-id <id> or set PEDELEC_THREAD_ID (Pedelec sets it in the agent's shell)")
  return agentCommand(command, rest, threadId)
}
