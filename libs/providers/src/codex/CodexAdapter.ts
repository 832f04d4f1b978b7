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
 */
import type { EffortSupport } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { type CliAdapterOptions, makeCliAdapter } from "../CliAdapter.ts"
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

/** The argv for one turn; exported for tests and the docs. The prompt itself goes on stdin (`-`). */
export const codexArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "exec",
  ...(turn.providerSessionId === undefined ? [] : ["resume"]),
  "--json",
  // `exec resume` has no `-s`; the config key means the same for both and keeps the two invocations alike.
  ...(session.fullAccess
    ? ["--dangerously-bypass-approvals-and-sandbox"]
    : ["-c", "sandbox_mode=workspace-write", "-c", "sandbox_workspace_write.network_access=true"]),
  ...["-c", "allow_login_shell=false", "--skip-git-repo-check"],
  ...["-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"],
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
      sessionProcess: (cli, session) =>
        makeTurnProcess({
          provider: PROVIDER,
          label: "codex",
          spawn: (turn: TurnInput) => ({
            command: cli.path,
            args: codexArgs(session, turn),
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
    },
    options
  )

/** The `codex` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const CodexAdapter: ProviderAdapter = makeCodexAdapter()
