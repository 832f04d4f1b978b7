import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortSupport } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import { AgentProcess } from "../AgentProcess.ts"
import { detected } from "../Discovery.ts"
import {
  type EffortAllowList,
  effortProfilesOf,
  type ProviderAdapter,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { type CliAdapterOptions, makeTurnProcess } from "../TurnProcess.ts"
import { ClaudeTurnDecoder } from "./ClaudeEvents.ts"

const PROVIDER = "claude"
const NAME = "Claude Code"
/** After `result`, how long claude gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
/** claude kills a shell command after 2 minutes by default; a page tool call may legitimately last its longest. */
const BASH_TIMEOUT_MS = TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000
const LEAST_PRIVILEGE_TOOLS = "Bash,Read,Edit,Write,Glob,Grep"
const ALLOWED_COMMANDS = ["Bash(pedelec-cli:*)", "Bash(pedelec-deno:*)"]

const EFFORT: EffortSupport = {
  supported: true,
  note:
    "Claude Code's --effort (low, medium, high, xhigh, max; claude's default is high) sets the model's reasoning " +
    "effort. A profile holds it as one token, e.g. --effort=low, or as CLAUDE_CODE_EFFORT_LEVEL; " +
    "MAX_THINKING_TOKENS caps thinking on models without adaptive effort."
}
const LEVEL = "(low|medium|high|xhigh|max)"
/** One-token forms only: a bare "low" would reach claude as a prompt argument. */
export const CLAUDE_EFFORT_ALLOW_LIST: EffortAllowList = {
  argv: [new RegExp(`^--effort=${LEVEL}$`)],
  env: ["CLAUDE_CODE_EFFORT_LEVEL", "MAX_THINKING_TOKENS"]
}

const startFailed = (reason: string) =>
  PedelecError.fromCode("PROVIDER_START_FAILED", "provider", { details: { provider: PROVIDER, reason } })

const NOT_FOUND =
  "Claude Code (the `claude` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g @anthropic-ai/claude-code`), sign in once by running `claude`, then rescan providers."

const isRoot = () => process.getuid?.() === 0

/** The argv for one turn; exported for tests and the docs. */
export const claudeArgs = (session: SessionProcessOptions, turn: TurnInput): Array<string> => [
  "-p",
  "--output-format",
  "stream-json",
  "--verbose",
  "--include-partial-messages",
  ...(session.fullAccess
    ? ["--permission-mode", "bypassPermissions"]
    : [
        "--tools",
        LEAST_PRIVILEGE_TOOLS,
        "--permission-mode",
        "acceptEdits",
        "--setting-sources",
        "user",
        "--allowedTools",
        ...ALLOWED_COMMANDS
      ]),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...(turn.providerSessionId === undefined ? [] : ["--resume", turn.providerSessionId]),
  ...session.effort.argv
]

/** The environment on top of the session's: quiet (no update checks, no telemetry) and long shell timeouts. */
export const claudeEnv = (session: SessionProcessOptions): Record<string, string> => ({
  ...session.env,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  BASH_DEFAULT_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
  BASH_MAX_TIMEOUT_MS: String(BASH_TIMEOUT_MS)
})

export const makeClaudeAdapter = (options: CliAdapterOptions = {}): ProviderAdapter => {
  const { detect, cli: located } = detected(
    { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
    { commands: ["claude"], versionArgs: ["--version"] },
    NOT_FOUND,
    options.env
  )

  const startSession = Effect.fn("ClaudeAdapter.start")(function* (session: SessionProcessOptions) {
    const cli = yield* located
    if (cli === undefined) return yield* Effect.fail(startFailed(NOT_FOUND))
    if (session.fullAccess && isRoot() && session.env.IS_SANDBOX !== "1") {
      return yield* Effect.fail(
        startFailed(
          "Claude Code refuses full access (bypassPermissions) when run as root. Run Pedelec as a normal user, " +
            "take this origin off full access, or set IS_SANDBOX=1 for Pedelec if this machine is a disposable sandbox."
        )
      )
    }
    return yield* makeTurnProcess({
      provider: PROVIDER,
      label: "claude",
      spawn: (turn: TurnInput) => ({
        command: cli.path,
        args: claudeArgs(session, turn),
        cwd: session.workspace,
        env: claudeEnv(session),
        inheritEnv: true,
        stdin: turn.prompt
      }),
      decoder: () => new ClaudeTurnDecoder(),
      exitWaitMs: EXIT_WAIT_MS,
      // Without a `result` line claude did not finish: exit 0 alone completes nothing.
      cleanExitCompletes: false
    })
  })
  const start = (session: SessionProcessOptions) =>
    startSession(session).pipe(Effect.provide(options.agentProcess ?? AgentProcess.layer))

  return {
    code: PROVIDER,
    name: NAME,
    experimental: false,
    effort: EFFORT,
    effortAllowList: CLAUDE_EFFORT_ALLOW_LIST,
    defaultEffort: effortProfilesOf((level) => `--effort=${level}`),
    detect,
    start
  }
}

/** The `claude` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const ClaudeAdapter: ProviderAdapter = makeClaudeAdapter()
