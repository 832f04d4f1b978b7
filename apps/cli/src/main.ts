/**
 * pedelec-cli entry: composition only. Parses argv (Args), answers help, version and usage errors on the spot, runs
 * the agent commands with the effect-free `Agent` (the CLI is on the agent's hot path), and loads `Program` (a
 * separate chunk holding effect and the effect/rpc client) only for the host and native-host commands, and `Mcp`
 * (the MCP SDK's server, another chunk) only for `mcp`. Nothing runs at import.
 */
import packageJson from "../package.json" with { type: "json" }
import { HELP, parseArgs } from "./Args.ts"
import { emit, text, usageError } from "./Output.ts"

const parsed = parseArgs(process.argv.slice(2), process.env)

switch (parsed._tag) {
  case "Help":
    void emit(text(HELP))
    break
  case "Version":
    void emit(text(packageJson.version))
    break
  case "UsageError":
    void emit(usageError(parsed.message, parsed.json))
    break
  case "ToolList":
  case "ToolSpec":
  case "ToolCall":
    void import("./Agent.ts").then((agent) => agent.run(parsed, packageJson.version))
    break
  case "Mcp":
    void import("./Mcp.ts").then((mcp) => mcp.run(parsed, packageJson.version))
    break
  default:
    void import("./Program.ts").then((program) => program.run(parsed, packageJson.version))
}
