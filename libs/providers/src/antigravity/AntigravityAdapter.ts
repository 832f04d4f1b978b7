/**
 * AntigravityAdapter — the `antigravity` provider (Google Antigravity CLI, `agy`), EXPERIMENTAL: written from the
 * vendor's docs and notes (https://github.com/google-antigravity/antigravity-cli: docs/reference.md,
 * docs/docs-cli-sandbox.md, docs/docs-cli-commands-permissions.md, CHANGELOG.md, release notes 1.1.8 and 1.1.15 as
 * quoted by integrators) and third-party readings of `agy --help` (1.1.x–1.2.x), never run here. One `agy` process
 * per turn through AgentProcess. The prompt goes on stdin as one `{"event":"user","message":{"content":…}}` line of
 * `--input-format stream-json` (agy 1.1.15+; `-p <prompt>` would put page text on argv); agy runs that turn and
 * exits once stdin is closed. stdout is decoded by AntigravityEvents. Finding the CLI is Discovery's; stall
 * timeouts, tool routing and session events are Core's.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): `--mode accept-edits`, no `--dangerously-skip-permissions`. File edits are accepted
 *   (in the workspace, given as `--add-dir` because agy treats only added dirs and repos as workspace roots); every
 *   other tool agy would ask about (shell, web) gets no answer in headless mode and does not run — unless the
 *   user's own agy permission rules allow it. A user who adds `command(pedelec-cli)` and `command(pedelec-deno)`
 *   with agy's `/permissions` lets page tools work. `--sandbox` is not passed: it restricts the terminal, and
 *   integrators report it denies even allow-listed commands, which would shut pedelec-cli out entirely.
 *   `--disable-slash-commands` keeps a prompt line starting with "/" from running an agy command or skill.
 * - Full access (a per-origin opt-in in the desktop app): `--dangerously-skip-permissions`; every tool runs.
 * Unverified: whether an unanswered ask is denied at once or waits for `--print-timeout` (reports differ; Core's
 * stall timeout ends such a turn), that `--input-format` needs no `-p`, that `--print-timeout` bounds the turn and
 * not the process, and how agy treats a `--conversation` it does not know (one capture: it silently starts a new
 * conversation with another id).
 */
import path from "node:path"
import type { EffortSupport } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import { type CliAdapterOptions, makeCliAdapter, signInFromStderr } from "../CliAdapter.ts"
import {
  type EffortAllowList,
  NO_EFFORT_PROFILES,
  type ProviderAdapter,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { ANTIGRAVITY_AUTH_TEXT, AntigravityTurnDecoder } from "./AntigravityEvents.ts"

const PROVIDER = "antigravity"
const NAME = "Antigravity CLI"
/** After `result`, how long agy gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
/** How much of stderr an authentication error quotes. */
/** agy gives up on a print-mode turn after 5 minutes by default; a page tool call may legitimately last its longest. */
const PRINT_TIMEOUT_S = Math.ceil((TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000) / 1_000)

const EFFORT: EffortSupport = {
  supported: false,
  note:
    "agy's --effort (low, medium, high) exists only for some models and refuses the whole run for others (Claude " +
    "models, and levels a Gemini model lacks), so Pedelec adds nothing by default. A profile may hold it as one " +
    "token, e.g. --effort=high, or pick a model per level."
}
/** One-token form only: a bare "high" would reach agy as an argument. */
export const ANTIGRAVITY_EFFORT_ALLOW_LIST: EffortAllowList = { argv: [/^--effort=(low|medium|high)$/], env: [] }

const NOT_FOUND =
  "Antigravity CLI (the `agy` command) was not found on PATH or in the usual install folders. Install it " +
  "(`curl -fsSL https://antigravity.google/cli/install.sh | bash`, see https://antigravity.google/docs/cli/install), " +
  "sign in with Google once by running `agy`, then rescan providers."

/** The argv for one turn; exported for tests and the docs. */
export const antigravityArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "--output-format",
  "stream-json",
  "--input-format",
  "stream-json",
  "--disable-slash-commands",
  "--add-dir",
  session.workspace,
  "--print-timeout",
  `${PRINT_TIMEOUT_S}s`,
  "--mode",
  "accept-edits",
  ...(session.fullAccess ? ["--dangerously-skip-permissions"] : []),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["--conversation", turn.providerSessionId]),
  ...session.effort.argv
]

/** The one stdin line of a turn, in the shape agy's headless docs give for `--input-format stream-json`. */
export const antigravityInput = (prompt: string): string =>
  `${JSON.stringify({ event: "user", message: { content: prompt } })}\n`

/** The environment on top of the session's: no self-update in the middle of a turn. */
export const antigravityEnv = (session: SessionProcessOptions): Record<string, string> => ({
  ...session.env,
  ...session.effort.env,
  AGY_CLI_DISABLE_AUTO_UPDATE: "1"
})

/** The installer's folders: `~/.local/bin` (already searched) and `%LOCALAPPDATA%\agy\bin` on Windows. */
const agyDirs = (home: string, platform: NodeJS.Platform): ReadonlyArray<string> =>
  platform === "win32" && home !== "" ? [path.win32.join(home, "AppData", "Local", "agy", "bin")] : []

export const makeAntigravityAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: true, effort: EFFORT },
      find: { commands: ["agy"], versionArgs: ["--version"], extraDirs: agyDirs },
      notFound: NOT_FOUND,
      effortAllowList: ANTIGRAVITY_EFFORT_ALLOW_LIST,
      defaultEffort: NO_EFFORT_PROFILES,
      sessionProcess: (cli, session) =>
        makeTurnProcess({
          provider: PROVIDER,
          label: "agy",
          spawn: (turn: TurnInput) => ({
            command: cli.path,
            args: antigravityArgs(session, turn),
            cwd: session.workspace,
            env: antigravityEnv(session),
            inheritEnv: true,
            stdin: antigravityInput(turn.prompt)
          }),
          decoder: () => new AntigravityTurnDecoder(),
          exitWaitMs: EXIT_WAIT_MS,
          // Every turn ends with a `result` event; an exit without one did not finish the turn.
          cleanExitCompletes: false,
          // No result line, but agy said why on stderr: it wants a (new) Google sign-in.
          explainExit: signInFromStderr(PROVIDER, ANTIGRAVITY_AUTH_TEXT)
        })
    },
    options
  )

/** The `antigravity` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const AntigravityAdapter: ProviderAdapter = makeAntigravityAdapter()
