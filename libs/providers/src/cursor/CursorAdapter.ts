/**
 * CursorAdapter — the `cursor` provider (Cursor's CLI `cursor-agent`; its generic `agent` alias is not looked for,
 * another program may carry that name), EXPERIMENTAL: written from Cursor's published docs
 * (https://cursor.com/docs/cli/headless, /cli/reference/parameters, /cli/reference/output-format,
 * /cli/reference/permissions, /agent/tools/terminal; read 2026) and third-party captures of cursor-agent
 * 2026.07–2026.08, never run here. One `cursor-agent -p` process per turn through AgentProcess, the prompt on stdin
 * (print mode reads piped stdin), stdout decoded by CursorEvents. It owns the invocation; finding the CLI is
 * Discovery's; stall timeouts, tool routing and session events are Core's.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): no `--force`, `--sandbox enabled`. In print mode without --force, file writes are
 *   only proposed, not applied (docs). Shell commands run in Cursor's sandbox (workspace and /tmp writable, the
 *   rest read-only, no network); where the platform has no sandbox, a command needs an approval print mode cannot
 *   give. Commands in the user's own `permissions.allow` (~/.cursor/cli-config.json) run without asking: a user who
 *   adds `Shell(pedelec-cli)` and `Shell(pedelec-deno)` there lets page tools work, since the sandbox's network
 *   block most likely also stops pedelec-cli reaching Core's socket. `--approve-mcps` is never passed: it would
 *   approve the user's own MCP servers too (their tokens, for a page's agent), so this mode has no MCP server.
 * - Full access (a per-origin opt-in in the desktop app): `--force --sandbox disabled`; every tool call runs.
 * Both pass `--trust`: headless cursor stops at the workspace trust question, and Pedelec picked the workspace.
 * Unverified: that stdin carries the prompt on every build, what print mode does with a non-allowlisted command,
 * whether allowlisted commands run outside the sandbox, and that `.cursor/cli.json` written into the workspace by
 * the agent cannot widen the next turn (Cursor reads project permissions from there; nothing here turns that off).
 * `--sandbox enabled` aborts on Windows ("Sandbox requires macOS or Linux", a third-party capture).
 *
 * With full access the page's tools also reach cursor as the MCP server `pedelec` (`pedelec-cli mcp`, PedelecMcp):
 * cursor reads servers only from `~/.cursor/mcp.json` and the project's `.cursor/mcp.json` (docs: /cli/mcp, /mcp),
 * so Pedelec writes the project file for the session into a workspace without a `.cursor` of its own (never the
 * user's), rewritten before each turn and removed at the end (PedelecMcp's workspaceMcpFile), and passes
 * `--approve-mcps`, the print-mode approval of MCP servers (docs: /cli/reference/parameters). The file names the
 * PEDELEC_* variables as `${env:NAME}`, which cursor interpolates (docs: /mcp "config interpolation"), so the
 * capability is never written. From the docs only, never run: the file and flag being honoured in print mode, the
 * interpolation in `env`, and the tool name the model sees. Cursor documents no MCP tool timeout to raise.
 */
import path from "node:path"
import type { EffortSupport } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { type CliAdapterOptions, makeCliAdapter, signInFromStderr } from "../CliAdapter.ts"
import {
  PEDELEC_MCP_ENV_VARS,
  PEDELEC_MCP_NAME,
  type PedelecMcpServer,
  pedelecMcpServer,
  workspaceMcpFile
} from "../PedelecMcp.ts"
import {
  type EffortAllowList,
  NO_EFFORT_PROFILES,
  type ProviderAdapter,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { CURSOR_AUTH_TEXT, CursorTurnDecoder } from "./CursorEvents.ts"

const PROVIDER = "cursor"
const NAME = "Cursor CLI"
/** After `result`, how long cursor gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
/** How much of stderr an authentication error quotes. */

const EFFORT: EffortSupport = {
  supported: false,
  note:
    "Cursor's CLI documents no effort flag for print mode: the reasoning level is part of the model name " +
    "(e.g. gpt-5.2-high, a -thinking variant). A profile can still pick a model per level."
}
export const CURSOR_EFFORT_ALLOW_LIST: EffortAllowList = { argv: [], env: [] }

const NOT_FOUND =
  "Cursor's CLI (the `cursor-agent` command) was not found on PATH or in the usual install folders. " +
  "Install it (`curl https://cursor.com/install -fsS | bash`), sign in once with `cursor-agent login` (or set " +
  "CURSOR_API_KEY), then rescan providers."

/** The project `.cursor/mcp.json` registering `server` as `pedelec`, its variables by name for cursor to fill in. */
export const cursorMcpConfig = (server: PedelecMcpServer) => ({
  mcpServers: {
    [PEDELEC_MCP_NAME]: {
      command: server.command,
      args: [...server.args],
      env: Object.fromEntries(PEDELEC_MCP_ENV_VARS.map((name) => [name, `\${env:${name}}`]))
    }
  }
})

/**
 * The argv for one turn, `mcp` whether the workspace's `.cursor/mcp.json` is Pedelec's for this turn (full access
 * only); exported for tests and the docs.
 */
export const cursorArgs = (session: SessionProcessOptions, turn: TurnInput, mcp = false): Array<string> => [
  "-p",
  "--output-format",
  "stream-json",
  "--stream-partial-output",
  "--workspace",
  session.workspace,
  "--trust",
  ...(session.fullAccess ? ["--force", "--sandbox", "disabled"] : ["--sandbox", "enabled"]),
  ...(session.fullAccess && mcp ? ["--approve-mcps"] : []),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["--resume", turn.providerSessionId]),
  ...session.effort.argv
]

/** The installer's own folders: `~/.local/bin` (already searched) and `~/.cursor/bin` or `%LOCALAPPDATA%`. */
const cursorDirs = (home: string, platform: NodeJS.Platform): ReadonlyArray<string> =>
  home === ""
    ? []
    : platform === "win32"
      ? [path.win32.join(home, "AppData", "Local", "cursor-agent")]
      : [path.join(home, ".cursor", "bin")]

export const makeCursorAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: true, effort: EFFORT },
      find: { commands: ["cursor-agent"], versionArgs: ["--version"], extraDirs: cursorDirs },
      notFound: NOT_FOUND,
      effortAllowList: CURSOR_EFFORT_ALLOW_LIST,
      defaultEffort: NO_EFFORT_PROFILES,
      toolsAsMcp: { listedAs: "<name> of the pedelec server" },
      sessionProcess: (cli, session) =>
        Effect.gen(function* () {
          const server = session.fullAccess ? pedelecMcpServer(session.env) : undefined
          const mcpFile = yield* workspaceMcpFile(
            session.workspace,
            ".cursor",
            "mcp.json",
            server && cursorMcpConfig(server)
          )
          return yield* makeTurnProcess({
            provider: PROVIDER,
            label: "cursor-agent",
            spawn: (turn: TurnInput) => ({
              command: cli.path,
              args: cursorArgs(session, turn, mcpFile?.refresh() === true),
              cwd: session.workspace,
              env: { ...session.env, ...session.effort.env },
              inheritEnv: true,
              stdin: turn.prompt
            }),
            decoder: () => new CursorTurnDecoder(),
            exitWaitMs: EXIT_WAIT_MS,
            // The docs: success ends with `result`; without one the turn did not finish, whatever the exit code.
            cleanExitCompletes: false,
            // A failure prints no JSON, only stderr; missing or refused credentials are the user's to fix.
            explainExit: signInFromStderr(PROVIDER, CURSOR_AUTH_TEXT)
          })
        })
    },
    options
  )

/** The `cursor` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const CursorAdapter: ProviderAdapter = makeCursorAdapter()
