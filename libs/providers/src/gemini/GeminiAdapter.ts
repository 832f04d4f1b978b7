/**
 * GeminiAdapter — the `gemini` provider (Gemini CLI, verified with 0.61.0): one headless `gemini -p ""` process per
 * turn through AgentProcess, the prompt on stdin (gemini reads piped stdin and puts it before the empty `-p` text),
 * stdout decoded by GeminiEvents. It owns the invocation: approval mode and policy, resume, model and environment.
 * Finding the CLI is Discovery's; stall timeouts, tool routing and session events are Core's.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): `--approval-mode auto_edit` plus a Pedelec policy file passed as `--admin-policy`
 *   (the admin tier outranks user and workspace settings, so `tools.allowed` in a workspace's .gemini/settings.json
 *   cannot widen it; verified). The shell (`run_shell_command`) runs only commands starting with `pedelec-cli` or
 *   `pedelec-deno`; every other command, and any compound (`&&`, `;`, `$(…)`) with another command in it, is denied
 *   and the model is told why. web_fetch and google_web_search are denied (not even offered to the model). gemini's
 *   file tools read anywhere in the workspace and, under auto_edit, write and edit there; paths outside the workspace
 *   are refused by gemini ("Path not in workspace"). Everything was verified against gemini 0.61.0.
 * - Full access (a per-origin opt-in in the desktop app): `--approval-mode yolo` with no Pedelec policy; every tool,
 *   every command, everything the user can do.
 * Both pass `--skip-trust`: headless gemini refuses an untrusted folder (exit 55), and Pedelec picked the workspace.
 *
 * The page's tools also reach gemini as the MCP server `pedelec` (`pedelec-cli mcp`, PedelecMcp), the model seeing
 * them as `mcp_pedelec_<name>`: a settings file Pedelec owns in the workspace for the session (GeminiMcp says why
 * there and how it is kept Pedelec's), trusted so headless gemini runs its tools without asking, and allowed by the
 * policy in least privilege. There `--allowed-mcp-server-names pedelec` also keeps out any other server, the user's
 * or one the agent planted in a workspace settings file; with full access the user's servers stay as they are.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { EffortSupport } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { type CliAdapterOptions, makeCliAdapter } from "../CliAdapter.ts"
import { PEDELEC_MCP_NAME, pedelecMcpServer } from "../PedelecMcp.ts"
import {
  type EffortAllowList,
  NO_EFFORT_PROFILES,
  type ProviderAdapter,
  type SessionProcessOptions,
  startFailed,
  type TurnInput
} from "../Provider.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { GeminiTurnDecoder } from "./GeminiEvents.ts"
import { geminiMcpFile } from "./GeminiMcp.ts"

const PROVIDER = "gemini"
const NAME = "Gemini CLI"
/** After `result`, how long gemini gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
/** gemini's exit code when it has no usable credentials (no key, a refused login). */
const EXIT_AUTH = 41

const EFFORT: EffortSupport = {
  supported: false,
  note:
    "Gemini CLI 0.61.0 has no effort or thinking flag: the thinking budget lives only in gemini's own settings.json " +
    "(modelConfigs). A profile can still pick a model, e.g. gemini-2.5-flash for low and gemini-2.5-pro for high."
}
export const GEMINI_EFFORT_ALLOW_LIST: EffortAllowList = { argv: [], env: [] }

const POLICY_FILE_NAME = "pedelec-least-privilege.toml"
/**
 * gemini's policy engine: the highest priority matching rule wins, and a shell rule is checked again for every
 * command of a compound. The catch-all deny sits below the allow, so it holds for everything else.
 */
export const GEMINI_POLICY = `# Written by Pedelec for one session; removed when the session ends.
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 100
denyMessage = "Pedelec runs this agent with least privilege: the shell runs only pedelec-cli and pedelec-deno."

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["pedelec-cli", "pedelec-deno"]
decision = "allow"
priority = 200

[[rule]]
mcpName = "pedelec"
toolName = "*"
decision = "allow"
priority = 200

[[rule]]
toolName = ["web_fetch", "google_web_search"]
decision = "deny"
priority = 100
denyMessage = "Pedelec runs this agent with least privilege: no web access."
`

const NOT_FOUND =
  "Gemini CLI (the `gemini` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g @google/gemini-cli`), sign in once by running `gemini`, then rescan providers."

/**
 * The argv for one turn; `policyFile` is the least-privilege policy (unused with full access), `mcp` whether the
 * session's settings file gives gemini the `pedelec` server. Exported for tests.
 */
export const geminiArgs = (
  session: SessionProcessOptions,
  turn: TurnInput,
  policyFile: string,
  mcp = false
): Array<string> => [
  // An empty -p makes the run headless; the prompt itself comes on stdin, so argv never carries page text.
  "-p",
  "",
  "--output-format",
  "stream-json",
  "--skip-trust",
  ...(session.fullAccess
    ? ["--approval-mode", "yolo"]
    : [
        ...["--approval-mode", "auto_edit", "--admin-policy", policyFile],
        ...(mcp ? ["--allowed-mcp-server-names", PEDELEC_MCP_NAME] : [])
      ]),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["--resume", turn.providerSessionId]),
  ...session.effort.argv
]

/**
 * The session's environment (and a profile's, always empty for gemini). gemini's shell passes it on to `pedelec-cli`
 * (verified), except when gemini redacts variables: under GitHub Actions (GITHUB_SHA set) it drops every unlisted one
 * (verified), and with the user's `security.environmentVariableRedaction.enabled` it drops secret-looking names. The
 * fix is the user's `security.environmentVariableRedaction.allowed`; gemini refuses a defaults file under /tmp.
 */
export const geminiEnv = (session: SessionProcessOptions, mcp = false): Record<string, string> => ({
  ...session.env,
  ...session.effort.env,
  // --skip-trust is applied after gemini has read its settings, which then leaves a workspace file's MCP server
  // disabled ("Disabled" in `gemini mcp list`, verified); the variable trusts the workspace before they are read.
  ...(mcp ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : {})
})

/** The policy lives outside the workspace, where the agent cannot rewrite it, for the life of the session. */
const policyDir = Effect.acquireRelease(
  Effect.tryPromise({
    try: async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-gemini-"))
      await writeFile(path.join(dir, POLICY_FILE_NAME), GEMINI_POLICY, { mode: 0o600 })
      return dir
    },
    catch: (error) => startFailed(PROVIDER, `could not write gemini's policy file: ${String(error)}`)
  }),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

export const makeGeminiAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
      find: { commands: ["gemini"], versionArgs: ["--version"] },
      notFound: NOT_FOUND,
      effortAllowList: GEMINI_EFFORT_ALLOW_LIST,
      defaultEffort: NO_EFFORT_PROFILES,
      toolsAsMcp: { listedAs: "mcp_pedelec_<name>" },
      sessionProcess: (cli, session) =>
        Effect.gen(function* () {
          const policyFile = session.fullAccess ? "" : path.join(yield* policyDir, POLICY_FILE_NAME)
          const mcpFile = yield* geminiMcpFile(session.workspace, pedelecMcpServer(session.env))
          return yield* makeTurnProcess({
            provider: PROVIDER,
            label: "gemini",
            spawn: (turn: TurnInput) => {
              const mcp = mcpFile?.refresh() === true
              return {
                command: cli.path,
                args: geminiArgs(session, turn, policyFile, mcp),
                cwd: session.workspace,
                env: geminiEnv(session, mcp),
                inheritEnv: true,
                stdin: turn.prompt
              }
            },
            decoder: () => new GeminiTurnDecoder(),
            exitWaitMs: EXIT_WAIT_MS,
            cleanExitCompletes: false,
            // No result line, but gemini said why on stderr: missing or refused credentials.
            explainExit: (exit, stderr) =>
              exit.code === EXIT_AUTH
                ? [
                    {
                      type: "error",
                      code: "PROVIDER_AUTH_REQUIRED",
                      message: (stderr === ""
                        ? "Gemini CLI has no usable credentials; sign in by running `gemini`."
                        : stderr
                      ).slice(-2_000),
                      details: { provider: PROVIDER, exitCode: exit.code }
                    }
                  ]
                : undefined
          })
        })
    },
    options
  )

/** The `gemini` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const GeminiAdapter: ProviderAdapter = makeGeminiAdapter()
