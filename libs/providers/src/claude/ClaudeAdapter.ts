/**
 * ClaudeAdapter — Claude Code as a provider: where `claude` is found, its effort knob, and its session process: one
 * warm `claude -p --input-format stream-json` per session (WarmProcess), spawned with the session's privilege flags,
 * model and effort and resuming the provider session a turn continues, each turn one stream-json user message on its
 * stdin and a stop a `control_request` interrupt. Decoding claude's output is ClaudeEvents'.
 *
 * The page's tools also reach claude as the MCP server `pedelec` (`pedelec-cli mcp`, PedelecMcp), given inline by
 * `--mcp-config` and allowed by `--allowedTools mcp__pedelec` (the whole server) in least privilege; the tools the
 * model has otherwise stay as they are. claude starts stdio servers with its own environment, so the session's
 * PEDELEC_* variables reach the server without being written on an argv.
 */
import type { EffortSupport } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
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
  startFailed,
  type TurnInput
} from "../Provider.ts"
import { makeWarmProcess } from "../WarmProcess.ts"
import { ClaudeTurnDecoder } from "./ClaudeEvents.ts"

const PROVIDER = "claude"
const NAME = "Claude Code"
/** An idle claude holds about 190 MB; a session quiet this long starts a new one (about 1.5 s) for its next turn. */
const IDLE_TIMEOUT_MS = 10 * 60_000
/** claude answers its interrupt with the turn's `result` within about 60 ms; it is killed if it takes longer. */
const INTERRUPT_GRACE_MS = 2_000
/** claude kills a shell command after 2 minutes by default; a page tool call may legitimately last its longest. */
const BASH_TIMEOUT_MS = TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000
const LEAST_PRIVILEGE_TOOLS = "Bash,Read,Edit,Write,Glob,Grep"
const ALLOWED_COMMANDS = ["Bash(pedelec-cli:*)", "Bash(pedelec-deno:*)"]
/** A permission rule naming a server alone allows every tool it has. */
const ALLOWED_MCP = `mcp__${PEDELEC_MCP_NAME}`

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

const NOT_FOUND =
  "Claude Code (the `claude` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g @anthropic-ai/claude-code`), sign in once by running `claude`, then rescan providers."

const isRoot = () => process.getuid?.() === 0
const ROOT_REFUSES_FULL_ACCESS =
  "Claude Code refuses full access (bypassPermissions) when run as root. Run Pedelec as a normal user, " +
  "take this origin off full access, or set IS_SANDBOX=1 for Pedelec if this machine is a disposable sandbox."

/** `--mcp-config`'s inline JSON registering `server` as `pedelec`; none without a server. */
export const claudeMcpArgs = (server: PedelecMcpServer | undefined): Array<string> =>
  server === undefined
    ? []
    : ["--mcp-config", JSON.stringify({ mcpServers: { [PEDELEC_MCP_NAME]: { type: "stdio", ...server } } })]

/**
 * The argv of a session's claude, continuing `providerSessionId` when one is given, with `mcp` as its `pedelec` MCP
 * server; exported for tests, the docs and the bench. Turns arrive on stdin (`claudeUserMessage`); closing stdin
 * after one message makes it a one-turn run.
 */
export const claudeArgs = (
  session: SessionProcessOptions,
  resume: { readonly providerSessionId: string | undefined },
  mcp: PedelecMcpServer | undefined = undefined
): Array<string> => [
  "-p",
  "--input-format",
  "stream-json",
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
        ...ALLOWED_COMMANDS,
        ...(mcp === undefined ? [] : [ALLOWED_MCP])
      ]),
  ...claudeMcpArgs(mcp),
  ...(session.model === undefined ? [] : ["--model", session.model]),
  ...(resume.providerSessionId === undefined ? [] : ["--resume", resume.providerSessionId]),
  ...session.effort.argv
]

/** One turn as claude's stream-json input takes it: a user message with one text block (one line of JSON). */
export const claudeUserMessage = (prompt: string): string =>
  JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text: prompt }] } })

/**
 * Asks claude to stop its running turn: it answers with a `control_response`, cancels the tool or model call, records
 * the interruption and ends the turn with a `result` (`error_during_execution`), staying alive for the next one.
 */
export const claudeInterruptRequest = (requestId: string): string =>
  JSON.stringify({ type: "control_request", request_id: requestId, request: { subtype: "interrupt" } })

/** The environment on top of the session's: quiet (no update checks, no telemetry) and long shell timeouts. */
export const claudeEnv = (session: SessionProcessOptions): Record<string, string> => ({
  ...session.env,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  BASH_DEFAULT_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
  BASH_MAX_TIMEOUT_MS: String(BASH_TIMEOUT_MS),
  // The same for a call to an MCP tool: a page tool call through the pedelec server may last as long.
  MCP_TOOL_TIMEOUT: String(PEDELEC_MCP_TOOL_TIMEOUT_MS)
})

/** Where claude is looked for; its process goes through Node's spawner (see WarmProcess). */
export const makeClaudeAdapter = (options: CliAdapterOptions = {}): ProviderAdapter =>
  makeCliAdapter(
    {
      about: { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT },
      find: { commands: ["claude"], versionArgs: ["--version"] },
      notFound: NOT_FOUND,
      effortAllowList: CLAUDE_EFFORT_ALLOW_LIST,
      defaultEffort: effortProfilesOf((level) => `--effort=${level}`),
      toolsAsMcp: { listedAs: "mcp__pedelec__<name>" },
      sessionProcess: (cli, session) => {
        if (session.fullAccess && isRoot() && session.env.IS_SANDBOX !== "1") {
          return Effect.fail(startFailed(PROVIDER, ROOT_REFUSES_FULL_ACCESS))
        }
        let interrupts = 0
        const mcp = pedelecMcpServer(session.env)
        return makeWarmProcess({
          provider: PROVIDER,
          label: "claude",
          spawn: (providerSessionId) => ({
            command: cli.path,
            args: claudeArgs(session, { providerSessionId }, mcp),
            cwd: session.workspace,
            env: claudeEnv(session),
            inheritEnv: true
          }),
          message: (turn: TurnInput) => claudeUserMessage(turn.prompt),
          interruptMessage: () => claudeInterruptRequest(`pedelec-interrupt-${++interrupts}`),
          decoder: () => new ClaudeTurnDecoder(),
          idleTimeoutMs: IDLE_TIMEOUT_MS,
          interruptGraceMs: INTERRUPT_GRACE_MS
        })
      }
    },
    options
  )

/** The `claude` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const ClaudeAdapter: ProviderAdapter = makeClaudeAdapter()
