/**
 * pedelec-cli entry: composition only. Parses argv (Args), answers help, version and usage errors on the spot, and
 * loads `Program` (a separate chunk holding effect and the effect/rpc client) only for commands that talk to Core:
 * the CLI is on the agent's hot path, and nothing runs at import.
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
  default:
    void import("./Program.ts").then((program) => program.run(parsed, packageJson.version))
}
