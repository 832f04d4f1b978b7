/**
 * OpencodeAdapter — the `opencode` provider (verified with opencode 1.18.33): one `opencode run --format json`
 * process per turn (TurnProcess, through CliAdapter), the prompt on stdin (as argv, a prompt with spaces reaches the
 * model wrapped in quotes with its inner quotes escaped), always `--dir <workspace>` (a resume run elsewhere hangs
 * after the model call), `-s <sessionID>` to resume, `-m provider/model` and `--variant=<name>` (effort) when set;
 * stdout decoded by OpencodeEvents. It owns the invocation: permissions, resume, model, effort and environment.
 * Finding the CLI is Discovery's; stall timeouts, tool routing and session events are Core's.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): opencode runs as agent `pedelec`, defined in OPENCODE_CONFIG_CONTENT with the
 *   permission rules `*: deny`, then `read`, `edit` (write and edit), `glob`, `grep`, `list`, `todowrite` allowed,
 *   `external_directory: deny`, and `bash` denied except `pedelec-cli *` and `pedelec-deno *`. opencode parses shell
 *   commands, so `pedelec-cli x && other` and `pedelec-cli $(other)` are refused too; file tools work inside the
 *   workspace only; web fetch, subagents, skills and MCP tools other than `pedelec_*` (below) are not offered. Agent
 *   rules come after the user's
 *   own top-level `permission` rules and the last matching rule wins, so the user's looser rules cannot widen this
 *   (top-level rules would merge key by key and could). OPENCODE_DISABLE_PROJECT_CONFIG=1 keeps the workspace's
 *   `opencode.json` and `.opencode/` out: a plugin written there would otherwise run inside opencode next turn.
 *   Denied calls fail with opencode's "The user has specified a rule which prevents you…", which the model reads;
 *   `ask` would be refused too (run is non-interactive), `deny` says so plainly.
 * - Full access (a per-origin opt-in in the desktop app): opencode's default agent with `--auto`, which approves
 *   every request the user's own config does not explicitly deny; project config loads as usual.
 * The user's global config and login (providers, keys, default model) apply in both modes.
 *
 * The page's tools also reach opencode as the MCP server `pedelec` (`pedelec-cli mcp`, PedelecMcp), the model seeing
 * them as `pedelec_<name>`: `mcp.pedelec` in OPENCODE_CONFIG_CONTENT in both modes, which opencode merges over the
 * user's config (their own servers stay), so no file is written. opencode starts a local server with its own
 * environment (verified), so the PEDELEC_* variables reach it without being named in the config. Its one `timeout`
 * bounds the server's start and every request, a page tool call included, so it is the longest page tool call.
 */
import type { EffortSupport } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import { type CliAdapterOptions, makeCliAdapter } from "../CliAdapter.ts"
import {
  PEDELEC_MCP_NAME,
  PEDELEC_MCP_TOOL_TIMEOUT_MS,
  type PedelecMcpServer,
  pedelecMcpServer
} from "../PedelecMcp.ts"
import {
  type EffortAllowList,
  effortProfilesOf,
  type ProviderAdapter,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { OpencodeTurnDecoder } from "./OpencodeEvents.ts"

const PROVIDER = "opencode"
const NAME = "opencode"
/** After the last step, how long opencode gets to exit on its own (it is still saving the session). */
const EXIT_WAIT_MS = 5_000
/** opencode kills a shell command after 2 minutes by default; a page tool call may legitimately last its longest. */
const BASH_TIMEOUT_MS = TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000
export const OPENCODE_AGENT = "pedelec"

const EFFORT: EffortSupport = {
  supported: true,
  note:
    "opencode's --variant picks a model variant, the provider's reasoning effort (e.g. minimal, low, medium, high, " +
    "max, as the model defines them). A profile holds it as one token, e.g. --variant=high; opencode ignores a " +
    "variant the model does not have."
}
/** One-token form only: a bare "high" would reach opencode as a prompt argument. */
export const OPENCODE_EFFORT_ALLOW_LIST: EffortAllowList = {
  argv: [/^--variant=[a-z][a-z0-9_-]{0,31}$/],
  env: []
}

/** The least-privilege agent; see the header for what each rule is for. */
export const LEAST_PRIVILEGE_CONFIG = {
  $schema: "https://opencode.ai/config.json",
  agent: {
    [OPENCODE_AGENT]: {
      mode: "primary",
      description: "A web page's agent through Pedelec: workspace files and pedelec-cli / pedelec-deno only.",
      permission: {
        "*": "deny",
        read: "allow",
        edit: "allow",
        glob: "allow",
        grep: "allow",
        list: "allow",
        todowrite: "allow",
        // The page's tools through the pedelec server: as allowed as `pedelec-cli … tool-call` from the shell.
        [`${PEDELEC_MCP_NAME}_*`]: "allow",
        external_directory: "deny",
        bash: { "*": "deny", "pedelec-cli *": "allow", "pedelec-deno *": "allow" }
      }
    }
  }
}

const NOT_FOUND =
  "opencode (the `opencode` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g opencode-ai`), set up a provider once by running `opencode auth login`, then rescan providers."

/** The argv for one turn; exported for tests and the docs. */
export const opencodeArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "run",
  "--format",
  "json",
  "--dir",
  session.workspace,
  ...(session.fullAccess ? ["--auto"] : ["--agent", OPENCODE_AGENT]),
  ...(session.model === undefined ? [] : ["-m", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["-s", turn.providerSessionId]),
  ...session.effort.argv
]

/** The config that registers `server` as opencode's MCP server `pedelec`; none without a server. */
export const opencodeMcpConfig = (server: PedelecMcpServer | undefined) =>
  server === undefined
    ? {}
    : {
        mcp: {
          [PEDELEC_MCP_NAME]: {
            type: "local",
            command: [server.command, ...server.args],
            enabled: true,
            timeout: PEDELEC_MCP_TOOL_TIMEOUT_MS
          }
        }
      }

/**
 * The environment on top of the session's: no updates or sharing, long shell timeouts, the mode's config and `mcp`
 * as the `pedelec` MCP server (none without it).
 */
export const opencodeEnv = (
  session: SessionProcessOptions,
  mcp: PedelecMcpServer | undefined = undefined
): Record<string, string> => {
  const config = { ...(session.fullAccess ? {} : LEAST_PRIVILEGE_CONFIG), ...opencodeMcpConfig(mcp) }
  return {
    ...session.env,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    // A page's conversation is never published to opencode's share service.
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
    ...(Object.keys(config).length === 0 ? {} : { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) }),
    ...(session.fullAccess ? {} : { OPENCODE_DISABLE_PROJECT_CONFIG: "1" })
  }
}

export const makeOpencodeAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
      find: { commands: ["opencode"], versionArgs: ["--version"] },
      notFound: NOT_FOUND,
      effortAllowList: OPENCODE_EFFORT_ALLOW_LIST,
      defaultEffort: effortProfilesOf((level) => `--variant=${level}`),
      toolsAsMcp: { listedAs: "pedelec_<name>" },
      sessionProcess: (cli, session) => {
        const env = opencodeEnv(session, pedelecMcpServer(session.env))
        return makeTurnProcess({
          provider: PROVIDER,
          label: "opencode",
          spawn: (turn: TurnInput) => ({
            command: cli.path,
            args: opencodeArgs(session, turn),
            cwd: session.workspace,
            env,
            inheritEnv: true,
            stdin: turn.prompt
          }),
          decoder: () => new OpencodeTurnDecoder(),
          exitWaitMs: EXIT_WAIT_MS,
          // opencode prints a step_finish before a clean exit; exit 0 without one still finished the turn.
          cleanExitCompletes: true
        })
      }
    },
    options
  )

/** The `opencode` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const OpencodeAdapter: ProviderAdapter = makeOpencodeAdapter()
