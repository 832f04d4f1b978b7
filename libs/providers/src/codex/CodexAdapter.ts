/**
 * CodexAdapter — the `codex` provider (Codex CLI, verified with 0.171.0): one warm `codex app-server` per session
 * (WarmProcess), its JSON-RPC over stdin/stdout spoken by CodexAppServer: a new process starts (or resumes, by the
 * thread id Core keeps as the provider session id) a thread, then takes each turn as `turn/start`, text streaming as
 * deltas; a stopped turn is asked to stop with `turn/interrupt` and its process closed, so the next turn resumes the
 * thread in a new one. It owns the invocation: sandbox, model, effort and environment. Finding the CLI is
 * Discovery's; stall timeouts, tool routing and session events are Core's. `codex exec --json` (CodexEvents) stays
 * only as the provider bench's bare baseline.
 *
 * Why app-server and no longer a process per turn: a later turn skips codex's start-up; against the scripted model
 * server a later turn takes 0.14–0.29× a bare `codex exec resume` (the spread is the box's load), and `turn/start` is
 * its only request. What is left is codex's own: ~75–90 ms of its CPU a turn (a new HTTP client with its CA roots
 * for every model request, 16–34 ms, openai/codex#29369; its SQLite state; with the fallback metadata of an unknown
 * model, five lookups of ~1 ms), against ~17 ms of Core's for the whole turn.
 * Its sandbox was checked against exec's by hand with bubblewrap installed (/usr/bin/bwrap; the warning that it was
 * missing, which held app-server back before, is gone): the same overrides make a command's write outside the
 * workspace fail with "Read-only file system" under both, writes in the workspace and /tmp succeed, a Unix socket
 * connect succeeds (and fails without network_access), and full access writes anywhere. exec's bypass flag has no
 * app-server form, so full access is its two settings by name (sandbox danger-full-access, approval never). Effort
 * given as `--config` reaches the model on a resumed thread too (checked in the model server's request log).
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): codex's own sandbox in `workspace-write` mode (`-c sandbox_mode=workspace-write`;
 *   approval policy never, so codex never stops to ask, and a request it still sends is refused). Commands the model
 *   runs may read any file the user can read, write only in the workspace (the cwd) and in codex's default temp roots
 *   (/tmp and $TMPDIR), and use the network (`sandbox_workspace_write.network_access=true`): pedelec-cli must reach
 *   Core's socket, and codex 0.171 on Linux has no working per-socket allowance, so without it the connect fails with
 *   EPERM. Writes elsewhere fail with "Read-only file system". `allow_login_shell=false` runs commands with `bash -c`,
 *   so Debian's /etc/profile cannot reset PATH and pedelec-cli plus the PEDELEC_* variables reach them.
 * - Full access (a per-origin opt-in in the desktop app): `sandbox_mode="danger-full-access"` with approval never
 *   (exec's `--dangerously-bypass-approvals-and-sandbox`); no sandbox, everything the user can do.
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
import { makeWarmProcess } from "../WarmProcess.ts"
import { CodexAppServerTurn, type CodexThreadSettings, type RequestIds } from "./CodexAppServer.ts"
import { codexError } from "./CodexEvents.ts"

const PROVIDER = "codex"
const NAME = "Codex CLI"
/**
 * An idle app-server holds about 200 MB (its Node launcher 44 MB, codex itself 150 MB); a session quiet this long
 * gives it back, and its next turn resumes the thread in a new one (about 1 s more).
 */
const IDLE_TIMEOUT_MS = 10 * 60_000
/** codex ends an interrupted turn within about 0.6 s (killing its running command); it is killed if it takes longer. */
const INTERRUPT_GRACE_MS = 2_000

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

/** The sandbox and approval overrides both invocations share, with their meaning written once (see the header). */
const privilegeArgs = (session: SessionProcessOptions): Array<string> =>
  session.fullAccess
    ? ["-c", `sandbox_mode="danger-full-access"`, "-c", `approval_policy="never"`]
    : [
        ...["-c", "sandbox_mode=workspace-write", "-c", "sandbox_workspace_write.network_access=true"],
        ...["-c", `approval_policy="never"`]
      ]

const quietArgs = [
  "-c",
  "allow_login_shell=false",
  "-c",
  "analytics.enabled=false",
  "-c",
  "check_for_update_on_startup=false",
  // codex 0.171's `skill_search` only runs a metrics-only "shadow" comparison of a dozen skill selectors on every
  // turn (it never changes the prompt: the model's requests are byte-for-byte the same without it), 12–16 ms of CPU
  // a turn, about a sixth of a warm turn against the scripted model server.
  "-c",
  "features.skill_search=false"
]

/**
 * The argv of a session's warm `codex app-server`, with `mcp` as its `pedelec` MCP server (none without it); the
 * model goes in each thread's settings (`codexThreadSettings`), turns on stdin as JSON-RPC (CodexAppServer).
 */
export const codexAppServerArgs = (
  session: SessionProcessOptions,
  mcp: PedelecMcpServer | undefined = undefined
): Array<string> => [
  "app-server",
  ...privilegeArgs(session),
  ...quietArgs,
  ...codexMcpArgs(mcp),
  ...session.effort.argv
]

/** What every thread of the session starts or resumes with: app-server's own names for the argv's sandbox. */
export const codexThreadSettings = (session: SessionProcessOptions): CodexThreadSettings => ({
  cwd: session.workspace,
  sandbox: session.fullAccess ? "danger-full-access" : "workspace-write",
  approvalPolicy: "never",
  ...(session.model === undefined ? {} : { model: session.model })
})

/**
 * The argv of one `codex exec --json` turn, the prompt on stdin (`-`): what the provider bench runs as the bare CLI
 * next to Pedelec's warm turns. Full access is exec's own bypass flag, the same sandbox off as app-server's.
 */
export const codexExecArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "exec",
  ...(turn.providerSessionId === undefined ? [] : ["resume"]),
  "--json",
  // `exec resume` has no `-s`; the config key means the same for both and keeps the two invocations alike.
  ...(session.fullAccess ? ["--dangerously-bypass-approvals-and-sandbox"] : privilegeArgs(session)),
  ...quietArgs,
  "--skip-git-repo-check",
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
      toolsAsMcp: { listedAs: "mcp__pedelec__<name>" },
      sessionProcess: (cli, session) => {
        const mcp = pedelecMcpServer(session.env)
        const settings = codexThreadSettings(session)
        const ids: RequestIds = { next: 0 }
        return makeWarmProcess({
          provider: PROVIDER,
          label: "codex",
          spawn: () => ({
            command: cli.path,
            args: codexAppServerArgs(session, mcp),
            cwd: session.workspace,
            // Inherited: codex needs the user's HOME / CODEX_HOME (login, config) and any provider API keys.
            env: { ...session.env },
            inheritEnv: true
          }),
          message: (turn, process) => process.decoder.begin(turn.prompt, process.fresh, turn.providerSessionId),
          interruptMessage: (decoder) => decoder.interrupt(),
          replies: (decoder) => decoder.replies(),
          decoder: () => new CodexAppServerTurn(ids, settings),
          idleTimeoutMs: IDLE_TIMEOUT_MS,
          interruptGraceMs: INTERRUPT_GRACE_MS,
          // codex said why (an `error` notification) but died before `turn/completed`: that is the turn's error.
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
