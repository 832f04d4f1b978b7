/**
 * CodexAdapter — the `codex` provider (Codex CLI, verified with 0.171.0): one `codex exec --json` process per turn
 * through AgentProcess, `codex exec resume <thread id>` for later turns, the prompt on stdin (the prompt argument `-`
 * makes codex read it, byte for byte), stdout decoded by CodexEvents. It owns the invocation: sandbox, resume, model,
 * effort and environment. Finding the CLI is Discovery's; stall timeouts, tool routing and session events are Core's.
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
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortSupport, ProviderInfo } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { type AgentHandle, AgentProcess } from "../AgentProcess.ts"
import { type DiscoveryEnv, discover, type FoundCli } from "../Discovery.ts"
import type { EffortAllowList, ProviderAdapter, SessionProcess, SessionProcessOptions, TurnInput } from "../Provider.ts"
import { CodexTurnDecoder, codexError } from "./CodexEvents.ts"

const PROVIDER = "codex"
const NAME = "Codex CLI"
/** After `turn.completed`, how long codex gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
const STDERR_IN_MESSAGE = 2_000

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

const startFailed = (reason: string) =>
  PedelecError.fromCode("PROVIDER_START_FAILED", "provider", { details: { provider: PROVIDER, reason } })

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

export interface CodexAdapterOptions {
  /** Where the CLI is looked for; this process's environment by default. */
  readonly env?: DiscoveryEnv
  /** Tests may pass their own; `AgentProcess.layer` by default. */
  readonly agentProcess?: Layer.Layer<AgentProcess>
}

export const makeCodexAdapter = (options: CodexAdapterOptions = {}): ProviderAdapter => {
  let found: FoundCli | undefined
  const find = Effect.suspend(() => discover({ commands: ["codex"], versionArgs: ["--version"] }, options.env)).pipe(
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

  const startSession = Effect.fn("CodexAdapter.start")(function* (session: SessionProcessOptions) {
    const agent = yield* AgentProcess
    const cli = found ?? (yield* find)
    if (cli === undefined) return yield* Effect.fail(startFailed(NOT_FOUND))
    // Turns still running when the session closes are stopped with it: no process outlives its session.
    const active = new Map<AgentHandle, { interrupted: boolean }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...active.keys()], (handle) => handle.terminate, { concurrency: "unbounded", discard: true })
    )

    const finish = (handle: AgentHandle, decoder: CodexTurnDecoder, terminal: boolean) =>
      Effect.gen(function* () {
        if (terminal) {
          yield* Effect.timeoutOption(handle.exit, EXIT_WAIT_MS)
          return Stream.empty
        }
        const exit = yield* handle.exit
        // An interrupted turn ends quietly: Core asked for it and reports the cancellation itself.
        if (active.get(handle)?.interrupted === true || exit.code === 0) return Stream.empty
        // codex said why on stdout (an `error` line) but died before `turn.failed`: that is the turn's error.
        if (decoder.lastError !== undefined) return Stream.make<Array<ProviderEvent>>(codexError(decoder.lastError))
        const stderr = yield* handle.stderrTail
        const shown = stderr === "" ? "it printed nothing on stderr" : `stderr: ${stderr.slice(-STDERR_IN_MESSAGE)}`
        return Stream.fail(
          PedelecError.fromCode("PROVIDER_FAILED", "provider", {
            details: {
              provider: PROVIDER,
              reason: `codex ended without finishing the turn (${exit.description}; ${shown})`,
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
            args: codexArgs(session, turn),
            cwd: session.workspace,
            // Inherited: codex needs the user's HOME / CODEX_HOME (login, config) and any provider API keys.
            env: { ...session.env },
            inheritEnv: true,
            stdin: turn.prompt
          })
          active.set(handle, { interrupted: false })
          yield* Effect.addFinalizer(() => Effect.sync(() => active.delete(handle)))
          const decoder = new CodexTurnDecoder()
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
          const ending = Stream.unwrap(Effect.suspend(() => finish(handle, decoder, terminal)))
          const report = Effect.suspend(() =>
            Effect.all(
              [
                decoder.warnings.length === 0
                  ? Effect.void
                  : Effect.logWarning("codex warnings", { warnings: decoder.warnings }),
                decoder.counts.skipped + decoder.counts.ignored === 0
                  ? Effect.void
                  : Effect.logDebug("codex output lines not used", { ...decoder.counts })
              ],
              { discard: true }
            )
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
    effortAllowList: CODEX_EFFORT_ALLOW_LIST,
    detect,
    start
  }
}

/** The `codex` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const CodexAdapter: ProviderAdapter = makeCodexAdapter()
