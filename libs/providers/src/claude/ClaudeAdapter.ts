/**
 * ClaudeAdapter — the `claude` provider (Claude Code, verified with 2.1.197): one `claude -p` process per turn
 * through AgentProcess, the prompt on stdin (`-p` with no prompt argument reads it), stdout decoded by
 * ClaudeEvents. It owns the invocation: permissions, resume, model, effort and environment. Finding the CLI is
 * Discovery's; stall timeouts, tool routing and session events are Core's.
 *
 * Permission modes (this text is the docs' provider table row):
 * - Least privilege (default): `--tools Bash,Read,Edit,Write,Glob,Grep` (no web, subagent, MCP or other tools),
 *   `--permission-mode acceptEdits`, `--allowedTools Bash(pedelec-cli:*) Bash(pedelec-deno:*)`, and
 *   `--setting-sources user` (settings files inside the workspace cannot widen this). Read, Edit, Write, Glob and
 *   Grep work only inside the workspace (the cwd): claude refuses them elsewhere, e.g. reading /etc/hostname. The
 *   shell runs `pedelec-cli …` and `pedelec-deno …`, plus what claude itself treats as safe inside the workspace
 *   (read-only commands such as ls, cat, echo; and, under acceptEdits, mkdir, touch, rm, mv there); every other
 *   command (node, curl, env, sed -i, anything touching paths outside the workspace) is refused with "This command
 *   requires approval" and the model is told so. The file tools are deliberately not in `--allowedTools`: an
 *   unscoped `Read` rule lets claude read any file on the machine (verified). The cwd alone is the boundary;
 *   `--add-dir` would widen it to more folders, so it is not passed.
 * - Full access (a per-origin opt-in in the desktop app): `--permission-mode bypassPermissions` with claude's
 *   default tools; everything the user can do. Claude Code refuses this mode for root unless IS_SANDBOX=1, a
 *   declaration that the machine is a disposable sandbox. Pedelec does not make that declaration for the user: as
 *   root, full access runs only if the user's own environment sets IS_SANDBOX=1; otherwise the turn fails with
 *   PROVIDER_START_FAILED saying so.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortSupport, ProviderInfo } from "@pedelec/contracts/Provider"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { type AgentHandle, AgentProcess } from "../AgentProcess.ts"
import { type DiscoveryEnv, discover, type FoundCli } from "../Discovery.ts"
import type { EffortAllowList, ProviderAdapter, SessionProcess, SessionProcessOptions, TurnInput } from "../Provider.ts"
import { ClaudeTurnDecoder } from "./ClaudeEvents.ts"

const PROVIDER = "claude"
const NAME = "Claude Code"
/** After `result`, how long claude gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
const STDERR_IN_MESSAGE = 2_000
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

export interface ClaudeAdapterOptions {
  /** Where the CLI is looked for; this process's environment by default. */
  readonly env?: DiscoveryEnv
  /** Tests may pass their own; `AgentProcess.layer` by default. */
  readonly agentProcess?: Layer.Layer<AgentProcess>
}

export const makeClaudeAdapter = (options: ClaudeAdapterOptions = {}): ProviderAdapter => {
  let found: FoundCli | undefined
  const find = Effect.suspend(() => discover({ commands: ["claude"], versionArgs: ["--version"] }, options.env)).pipe(
    Effect.tap((cli) => Effect.sync(() => (found = cli)))
  )

  const detect = Effect.map(
    find,
    (cli): ProviderInfo => ({
      code: PROVIDER,
      name: NAME,
      available: cli !== undefined,
      version: cli?.version ?? null,
      error: cli === undefined ? NOT_FOUND : null,
      experimental: false,
      effort: EFFORT
    })
  )

  const startSession = Effect.fn("ClaudeAdapter.start")(function* (session: SessionProcessOptions) {
    const agent = yield* AgentProcess
    const cli = found ?? (yield* find)
    if (cli === undefined) return yield* Effect.fail(startFailed(NOT_FOUND))
    if (session.fullAccess && isRoot() && session.env.IS_SANDBOX !== "1") {
      return yield* Effect.fail(
        startFailed(
          "Claude Code refuses full access (bypassPermissions) when run as root. Run Pedelec as a normal user, " +
            "take this origin off full access, or set IS_SANDBOX=1 for Pedelec if this machine is a disposable sandbox."
        )
      )
    }
    // Turns still running when the session closes are stopped with it: no process outlives its session.
    const active = new Map<AgentHandle, { interrupted: boolean }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...active.keys()], (handle) => handle.terminate, { concurrency: "unbounded", discard: true })
    )

    const finish = (handle: AgentHandle, terminal: boolean) =>
      Effect.gen(function* () {
        if (terminal) {
          yield* Effect.timeoutOption(handle.exit, EXIT_WAIT_MS)
          return Stream.empty
        }
        const exit = yield* handle.exit
        // An interrupted turn ends quietly: Core asked for it and reports the cancellation itself.
        if (active.get(handle)?.interrupted === true || exit.code === 0) return Stream.empty
        const stderr = yield* handle.stderrTail
        const shown = stderr === "" ? "it printed nothing on stderr" : `stderr: ${stderr.slice(-STDERR_IN_MESSAGE)}`
        return Stream.fail(
          PedelecError.fromCode("PROVIDER_FAILED", "provider", {
            details: {
              provider: PROVIDER,
              reason: `claude ended without finishing the turn (${exit.description}; ${shown})`,
              exitCode: exit.code ?? null,
              stderr
            }
          })
        )
      })

    const send = (turn: TurnInput): Stream.Stream<ProviderEvent, PedelecError> =>
      Stream.unwrap(
        Effect.gen(function* () {
          const handle = yield* agent.spawn({
            provider: PROVIDER,
            command: cli.path,
            args: claudeArgs(session, turn),
            cwd: session.workspace,
            env: claudeEnv(session),
            inheritEnv: true,
            stdin: turn.prompt
          })
          active.set(handle, { interrupted: false })
          yield* Effect.addFinalizer(() => Effect.sync(() => active.delete(handle)))
          const decoder = new ClaudeTurnDecoder()
          let terminal = false
          const isTerminal = (event: ProviderEvent) => event.type === "completed" || event.type === "error"
          const events = handle.lines.pipe(
            Stream.flatMap((line) => Stream.fromIterable(decoder.decode(line))),
            Stream.tap((event) =>
              Effect.sync(() => {
                terminal ||= isTerminal(event)
              })
            ),
            Stream.takeUntil(isTerminal)
          )
          const ending = Stream.unwrap(Effect.suspend(() => finish(handle, terminal)))
          const report = Effect.suspend(() =>
            decoder.counts.skipped + decoder.counts.ignored === 0
              ? Effect.void
              : Effect.logDebug("claude output lines not used", { ...decoder.counts })
          )
          return Stream.concat(events, ending).pipe(Stream.ensuring(report))
        })
      )

    const interrupt = Effect.suspend(() =>
      Effect.forEach(
        [...active.entries()],
        ([handle, flags]) =>
          Effect.andThen(
            Effect.sync(() => (flags.interrupted = true)),
            handle.interrupt
          ),
        { discard: true }
      )
    )
    const processes = Effect.suspend(() =>
      Effect.map(
        Effect.forEach([...active.keys()], (handle) => handle.processes),
        (lists) => lists.flat()
      )
    )
    return { send, interrupt, processes } satisfies SessionProcess
  })
  const start = (session: SessionProcessOptions) =>
    startSession(session).pipe(Effect.provide(options.agentProcess ?? AgentProcess.layer))

  return {
    code: PROVIDER,
    name: NAME,
    experimental: false,
    effort: EFFORT,
    effortAllowList: CLAUDE_EFFORT_ALLOW_LIST,
    detect,
    start
  }
}

/** The `claude` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const ClaudeAdapter: ProviderAdapter = makeClaudeAdapter()
