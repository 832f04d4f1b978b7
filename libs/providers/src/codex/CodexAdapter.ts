/**
 * CodexAdapter — the `codex` provider (Codex CLI, verified with 0.171.0): one `codex exec --json` process per turn
 * (TurnProcess, through CliAdapter), `codex exec resume <thread id>` for later turns, the prompt on stdin (the prompt
 * argument `-` makes codex read it, byte for byte), stdout decoded by CodexEvents. It owns the invocation: sandbox,
 * resume, model, effort and environment. Finding the CLI is Discovery's; stall timeouts, tool routing and session
 * events are Core's.
 *
 * Why a process per turn and not the warm `codex app-server`: exec is codex's documented non-interactive mode and
 * was verified end to end here (text, tools under the sandbox, errors, resume across processes and folders, cancel).
 * app-server (marked experimental) also ran five turns in one process with text deltas and faster turns, but it
 * warned that it could not find bubblewrap on PATH, so its sandbox is not yet known to match exec's; and Core
 * already turns a whole message into one delta.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): codex's own sandbox in `workspace-write` mode (`-c sandbox_mode=workspace-write`;
 *   exec never stops to ask for approval). Commands the model runs may read any file the user can read, write only
 *   in the workspace (the cwd) and in codex's default temp roots (/tmp and $TMPDIR), and use the network
 *   (`sandbox_workspace_write.network_access=true`): pedelec-cli must reach Core's socket, and codex 0.171 on Linux
 *   has no working per-socket allowance, so without it the connect fails with EPERM. Writes elsewhere fail with
 *   "Read-only file system". `allow_login_shell=false` runs commands with `bash -c`, so Debian's /etc/profile cannot
 *   reset PATH and pedelec-cli plus the PEDELEC_* variables reach them.
 * - Full access (a per-origin opt-in in the desktop app): `--dangerously-bypass-approvals-and-sandbox`; no sandbox,
 *   everything the user can do.
 *
 * The page's tools also reach codex as the MCP server `pedelec` (`pedelec-cli mcp`, PedelecMcp), given by `-c
 * mcp_servers.pedelec.*` overrides so the user's config.toml is left alone. codex starts MCP servers with a scrubbed
 * environment, so `env_vars` names what passes through (the capability never goes on an argv). The server runs
 * outside the command sandbox, as codex runs every MCP server; it only reaches Core's socket, as pedelec-cli does from
 * the shell.
 */
import type { EffortSupport } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { type CliAdapterOptions, makeCliAdapter } from "../CliAdapter.ts"
import {
  PEDELEC_MCP_ENV_VARS,
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
import { CodexTurnDecoder, codexError } from "./CodexEvents.ts"

const PROVIDER = "codex"
const NAME = "Codex CLI"
/** After `turn.completed`, how long codex gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000

const EFFORT: EffortSupport = {
  supported: true,
  note:
    "Codex's model_reasoning_effort (none, minimal, low, medium, high, xhigh; which ones a model accepts depends " +
    "on the model) sets the model's reasoning effort. A profile holds it as one token, e.g. " +
    "--config=model_reasoning_effort=low."
}
/** One-token forms only: a bare `model_reasoning_effort=low` would reach codex as a positional argument. */
export const CODEX_EFFORT_ALLOW_LIST: EffortAllowList = {
  argv: [/^--config=model_reasoning_effort=(none|minimal|low|medium|high|xhigh)$/],
  env: []
}

const NOT_FOUND =
  "The Codex CLI (the `codex` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g @openai/codex`), sign in once with `codex login`, then rescan providers."

/** A TOML string or array of strings, as `-c key=value` parses its value (a JSON string is a TOML basic string). */
const toml = (value: string | ReadonlyArray<string>): string =>
  typeof value === "string" ? JSON.stringify(value) : `[${value.map((item) => JSON.stringify(item)).join(",")}]`

/** The `-c` overrides that register `server` as codex's MCP server `pedelec`. */
export const codexMcpArgs = (server: PedelecMcpServer | undefined): Array<string> => {
  if (server === undefined) return []
  const key = `mcp_servers.${PEDELEC_MCP_NAME}`
  return [
    ...["-c", `${key}.command=${toml(server.command)}`, "-c", `${key}.args=${toml(server.args)}`],
    ...["-c", `${key}.env_vars=${toml(PEDELEC_MCP_ENV_VARS)}`],
    // An optional server is given a short grace at startup: on a busy machine codex asked the model without the page
    // tools (1 of 2 conformance runs under load). A required one is waited for, and one that cannot start fails the
    // turn: pedelec-cli mcp refuses to start only for a session it cannot reach, where no page tool would work anyway.
    ...["-c", `${key}.required=true`],
    // exec has no one to ask, so a tool codex would ask about fails ("requires approval, but approval policy is
    // never"); a page tool is as allowed as `pedelec-cli tool-call` from the shell, and Core and the page decide.
    ...["-c", `${key}.default_tools_approval_mode="approve"`],
    // codex gives an MCP tool call 60 s by default; a page tool call may legitimately last much longer.
    ...["-c", `${key}.tool_timeout_sec=${PEDELEC_MCP_TOOL_TIMEOUT_MS / 1000}`]
  ]
}

/**
 * The argv for one turn, with `mcp` as the `pedelec` MCP server (none without it); exported for tests and the docs.
 * The prompt itself goes on stdin (`-`).
 */
export const codexArgs = (
  session: SessionProcessOptions,
  turn: TurnInput,
  mcp: PedelecMcpServer | undefined = undefined
): Array<string> => [
  "exec",
  ...(turn.providerSessionId === undefined ? [] : ["resume"]),
  "--json",
  // `exec resume` has no `-s`; the config key means the same for both and keeps the two invocations alike.
  ...(session.fullAccess
    ? ["--dangerously-bypass-approvals-and-sandbox"]
    : ["-c", "sandbox_mode=workspace-write", "-c", "sandbox_workspace_write.network_access=true"]),
  ...["-c", "allow_login_shell=false", "--skip-git-repo-check"],
  ...["-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"],
  ...codexMcpArgs(mcp),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...session.effort.argv,
  // After `--`, a thread id can never be read as an option.
  "--",
  ...(turn.providerSessionId === undefined ? [] : [turn.providerSessionId]),
  "-"
]

export const makeCodexAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
      find: { commands: ["codex"], versionArgs: ["--version"] },
      notFound: NOT_FOUND,
      effortAllowList: CODEX_EFFORT_ALLOW_LIST,
      defaultEffort: effortProfilesOf((level) => `--config=model_reasoning_effort=${level}`),
      toolsAsMcp: true,
      sessionProcess: (cli, session) => {
        const mcp = pedelecMcpServer(session.env)
        return makeTurnProcess({
          provider: PROVIDER,
          label: "codex",
          spawn: (turn: TurnInput) => ({
            command: cli.path,
            args: codexArgs(session, turn, mcp),
            cwd: session.workspace,
            // Inherited: codex needs the user's HOME / CODEX_HOME (login, config) and any provider API keys.
            env: { ...session.env },
            inheritEnv: true,
            stdin: turn.prompt
          }),
          decoder: () => new CodexTurnDecoder(),
          exitWaitMs: EXIT_WAIT_MS,
          cleanExitCompletes: false,
          // codex said why on stdout (an `error` line) but died before `turn.failed`: that is the turn's error.
          explainExit: (_exit, _stderr, decoder) =>
            decoder.lastError === undefined ? undefined : [codexError(decoder.lastError)],
          report: (decoder) =>
            decoder.warnings.length === 0
              ? Effect.void
              : Effect.logWarning("codex warnings", { warnings: decoder.warnings })
        })
      }
    },
    options
  )

/** The `codex` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const CodexAdapter: ProviderAdapter = makeCodexAdapter()
