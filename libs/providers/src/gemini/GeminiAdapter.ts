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
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortSupport, ProviderInfo } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { type AgentHandle, AgentProcess } from "../AgentProcess.ts"
import { type DiscoveryEnv, discover, type FoundCli } from "../Discovery.ts"
import type { EffortAllowList, ProviderAdapter, SessionProcess, SessionProcessOptions, TurnInput } from "../Provider.ts"
import { GeminiTurnDecoder } from "./GeminiEvents.ts"

const PROVIDER = "gemini"
const NAME = "Gemini CLI"
/** After `result`, how long gemini gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 2_000
const STDERR_IN_MESSAGE = 2_000
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
toolName = ["web_fetch", "google_web_search"]
decision = "deny"
priority = 100
denyMessage = "Pedelec runs this agent with least privilege: no web access."
`

const startFailed = (reason: string) =>
  PedelecError.fromCode("PROVIDER_START_FAILED", "provider", { details: { provider: PROVIDER, reason } })

const NOT_FOUND =
  "Gemini CLI (the `gemini` command) was not found on PATH or in the usual install folders. Install it " +
  "(`npm install -g @google/gemini-cli`), sign in once by running `gemini`, then rescan providers."

/** The argv for one turn; `policyFile` is the least-privilege policy (unused with full access). Exported for tests. */
export const geminiArgs = (session: SessionProcessOptions, turn: TurnInput, policyFile: string): Array<string> => [
  // An empty -p makes the run headless; the prompt itself comes on stdin, so argv never carries page text.
  "-p",
  "",
  "--output-format",
  "stream-json",
  "--skip-trust",
  ...(session.fullAccess
    ? ["--approval-mode", "yolo"]
    : ["--approval-mode", "auto_edit", "--admin-policy", policyFile]),
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
export const geminiEnv = (session: SessionProcessOptions): Record<string, string> => ({
  ...session.env,
  ...session.effort.env
})

export interface GeminiAdapterOptions {
  /** Where the CLI is looked for; this process's environment by default. */
  readonly env?: DiscoveryEnv
  /** Tests may pass their own; `AgentProcess.layer` by default. */
  readonly agentProcess?: Layer.Layer<AgentProcess>
}

/** The policy lives outside the workspace, where the agent cannot rewrite it, for the life of the session. */
const policyDir = Effect.acquireRelease(
  Effect.tryPromise({
    try: async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-gemini-"))
      await writeFile(path.join(dir, POLICY_FILE_NAME), GEMINI_POLICY, { mode: 0o600 })
      return dir
    },
    catch: (error) => startFailed(`could not write gemini's policy file: ${String(error)}`)
  }),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

export const makeGeminiAdapter = (options: GeminiAdapterOptions = {}): ProviderAdapter => {
  let found: FoundCli | undefined
  const find = Effect.suspend(() => discover({ commands: ["gemini"], versionArgs: ["--version"] }, options.env)).pipe(
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

  const startSession = Effect.fn("GeminiAdapter.start")(function* (session: SessionProcessOptions) {
    const agent = yield* AgentProcess
    const cli = found ?? (yield* find)
    if (cli === undefined) return yield* Effect.fail(startFailed(NOT_FOUND))
    const policyFile = session.fullAccess ? "" : path.join(yield* policyDir, POLICY_FILE_NAME)
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
        if (exit.code === EXIT_AUTH) {
          // No result line, but gemini said why on stderr: missing or refused credentials.
          const message = stderr === "" ? "Gemini CLI has no usable credentials; sign in by running `gemini`." : stderr
          return Stream.make<Array<ProviderEvent>>({
            type: "error",
            code: "PROVIDER_AUTH_REQUIRED",
            message: message.slice(-STDERR_IN_MESSAGE),
            details: { provider: PROVIDER, exitCode: exit.code }
          })
        }
        return Stream.fail(
          PedelecError.fromCode("PROVIDER_FAILED", "provider", {
            details: {
              provider: PROVIDER,
              reason: `gemini ended without finishing the turn (${exit.description}; ${shown})`,
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
            args: geminiArgs(session, turn, policyFile),
            cwd: session.workspace,
            env: geminiEnv(session),
            inheritEnv: true,
            stdin: turn.prompt
          })
          active.set(handle, { interrupted: false })
          yield* Effect.addFinalizer(() => Effect.sync(() => active.delete(handle)))
          const decoder = new GeminiTurnDecoder()
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
              : Effect.logDebug("gemini output lines not used", { ...decoder.counts })
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
    effortAllowList: GEMINI_EFFORT_ALLOW_LIST,
    detect,
    start
  }
}

/** The `gemini` adapter as Core registers it: Discovery over this process's environment, Node's process spawner. */
export const GeminiAdapter: ProviderAdapter = makeGeminiAdapter()
