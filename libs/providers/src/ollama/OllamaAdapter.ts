/**
 * OllamaAdapter — the `ollama` provider: Pedelec's own agent loop (`pedelec-agent`, apps/cli) against an
 * Ollama-compatible server, one warm process per session in the session's workspace (WarmProcess), each turn one
 * `AgentLoopRequest` line on its stdin and a stop SIGINT to its group (the agent then exits; the next turn resumes
 * the saved conversation in a new one). The process starts with the session (Core starts the session process when
 * the session opens) and is given a warm-up request at once: it connects to Core, lists the page's tools and asks
 * the model's window while the page waits for its user, and answers with the conversation the first turn then
 * continues. The connection (address, key, silence timeout) is read from the settings when a session starts and
 * given to the agent on stdin, never in argv or env. Detection asks the server for its version. The loop itself
 * (tools, rounds, context window, what it keeps between turns) is pedelec-agent's.
 */

import type { LocalProvider } from "@pedelec/contracts/Desktop"
import { AgentLoopRequest } from "@pedelec/contracts/node/AgentLoop"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortSupport } from "@pedelec/contracts/Provider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AgentProcess } from "../AgentProcess.ts"
import type { CliAdapterOptions } from "../CliAdapter.ts"
import {
  type EffortAllowList,
  NO_EFFORT_PROFILES,
  type ProviderAdapter,
  type SessionProcess,
  type SessionProcessOptions,
  type TurnInput
} from "../Provider.ts"
import { makeWarmProcess } from "../WarmProcess.ts"
import { AgentLoopDecoder } from "./OllamaEvents.ts"

const PROVIDER = "ollama"
const NAME = "Ollama (pedelec-agent)"
/** An idle pedelec-agent holds about 50 MB; a session quiet this long starts a new one (0.2–0.4 s on 2 cores) next turn. */
const IDLE_TIMEOUT_MS = 10 * 60_000
/** pedelec-agent exits within milliseconds of SIGINT; it is killed if it takes longer. */
const INTERRUPT_GRACE_MS = 1_000
const VERSION_TIMEOUT_MS = 3_000

const EFFORT: EffortSupport = {
  supported: true,
  note:
    "Ollama's `think` option: a profile holds --think=low|medium|high (gpt-oss) or --think=true|false (other " +
    "thinking models); models without thinking reject it, so no level sets it by default. A profile may also pick " +
    "a model per level."
}
export const OLLAMA_EFFORT_ALLOW_LIST: EffortAllowList = { argv: [/^--think=(low|medium|high|true|false)$/], env: [] }

/** What the settings say about the server, read when a session starts (and for each detection). */
export interface OllamaConnection {
  readonly baseUrl: string
  readonly timeoutMs: number
  /** From secrets.json; undefined when the user has not set one. */
  readonly apiKey: string | undefined
}

export interface OllamaAdapterOptions extends Pick<CliAdapterOptions, "agentProcess"> {
  /** The `pedelec-agent` command (next to pedelec-cli); undefined when this install has none. */
  readonly agentCommand: string | undefined
  readonly connection: Effect.Effect<OllamaConnection, PedelecError>
}

const encodeRequest = Schema.encodeSync(Schema.fromJsonString(AgentLoopRequest))

const MISSING_AGENT =
  "pedelec-agent, Pedelec's agent loop for Ollama, is missing from this install. Reinstall Pedelec (or run `npm run build` in a checkout)."

const keyRequired = () =>
  PedelecError.fromCode("OLLAMA_API_KEY_REQUIRED", "provider", { details: { provider: PROVIDER } })

const versionOf = (connection: OllamaConnection): Effect.Effect<string, PedelecError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${connection.baseUrl.replace(/\/+$/, "")}/api/version`, {
        headers: { authorization: `Bearer ${connection.apiKey ?? ""}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(VERSION_TIMEOUT_MS)])
      })
      if (response.status === 401 || response.status === 403) throw "auth"
      const body = (await response.json()) as { version?: unknown }
      if (!response.ok || typeof body.version !== "string") throw "invalid"
      return body.version
    },
    catch: (cause) =>
      cause === "auth"
        ? PedelecError.fromCode("OLLAMA_AUTH_FAILED", "provider")
        : cause === "invalid"
          ? PedelecError.fromCode("OLLAMA_RESPONSE_INVALID", "provider", { details: { baseUrl: connection.baseUrl } })
          : PedelecError.fromCode("OLLAMA_UNAVAILABLE", "provider", { details: { baseUrl: connection.baseUrl } })
  })

/**
 * The session process once the warm-up is sent: a turn waits for its answer (the process is starting meanwhile), and
 * the first one starting a new conversation continues the one the warm-up began, so it takes the warmed process.
 * A warm-up that failed leaves the turns as they are; their own process start then reports why.
 */
const warmedUp = Effect.fnUntraced(function* (warm: SessionProcess, warmUp: TurnInput) {
  const answered = yield* Deferred.make<string | undefined>()
  let began: string | undefined
  yield* warm.send(warmUp).pipe(
    Stream.runForEach((event) =>
      Effect.sync(() => (began = event.type === "session" ? event.providerSessionId : began))
    ),
    Effect.ignore,
    Effect.ensuring(Effect.suspend(() => Deferred.succeed(answered, began))),
    Effect.forkScoped
  )
  const taken = (turn: TurnInput, conversation: string | undefined): TurnInput => {
    if (turn.providerSessionId !== undefined || conversation === undefined || conversation !== began) return turn
    began = undefined
    return { ...turn, providerSessionId: conversation }
  }
  return {
    send: (turn) => Stream.unwrap(Effect.map(Deferred.await(answered), (id) => warm.send(taken(turn, id)))),
    interrupt: warm.interrupt,
    processes: warm.processes
  } satisfies SessionProcess
})

export const makeOllamaAdapter = (options: OllamaAdapterOptions): ProviderAdapter => {
  const about = { code: PROVIDER, name: NAME, experimental: false, effort: EFFORT } as const

  const detect: Effect.Effect<LocalProvider> = Effect.gen(function* () {
    if (options.agentCommand === undefined)
      return { ...about, available: false, version: null, error: MISSING_AGENT, location: null }
    const connection = yield* options.connection
    if (connection.apiKey === undefined) return yield* Effect.fail(keyRequired())
    const version = yield* versionOf(connection)
    return { ...about, available: true, version, error: null, location: connection.baseUrl }
  }).pipe(
    Effect.catch((error: PedelecError) =>
      Effect.succeed({ ...about, available: false, version: null, error: error.message, location: null })
    )
  )

  const startSession = Effect.fn("OllamaAdapter.start")(function* (session: SessionProcessOptions) {
    const command = options.agentCommand
    if (command === undefined)
      return yield* Effect.fail(
        PedelecError.fromCode("PROVIDER_START_FAILED", "provider", {
          details: { provider: PROVIDER, reason: MISSING_AGENT }
        })
      )
    const connection = yield* options.connection
    const apiKey = connection.apiKey
    if (apiKey === undefined) return yield* Effect.fail(keyRequired())
    // ProviderChoice refuses an ollama session without a model; this only keeps the type honest.
    const model = session.model ?? ""
    // Told apart by identity: the warm-up is the adapter's own, never a turn Core sends.
    const warmUp: TurnInput = { prompt: "", providerSessionId: session.providerSessionId, kind: "prepare" }
    const warm = yield* makeWarmProcess({
      provider: PROVIDER,
      label: "pedelec-agent",
      // Any process could resume any conversation (the request names it), but WarmProcess matches them as for claude.
      spawn: () => ({
        command,
        args: [...session.effort.argv],
        cwd: session.workspace,
        env: session.env,
        inheritEnv: true
      }),
      message: (turn: TurnInput) =>
        encodeRequest({
          prompt: turn.prompt,
          ...(turn.providerSessionId === undefined ? {} : { providerSessionId: turn.providerSessionId }),
          model,
          baseUrl: connection.baseUrl,
          apiKey,
          timeoutMs: connection.timeoutMs,
          ...(turn === warmUp ? { warmUp: true as const } : {})
        }),
      decoder: () => new AgentLoopDecoder(),
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      interruptGraceMs: INTERRUPT_GRACE_MS
    })
    return yield* warmedUp(warm, warmUp)
  })

  return {
    ...about,
    effortAllowList: OLLAMA_EFFORT_ALLOW_LIST,
    defaultEffort: NO_EFFORT_PROFILES,
    toolsAsFunctions: true,
    startsWithSession: true,
    detect,
    start: (session) => startSession(session).pipe(Effect.provide(options.agentProcess ?? AgentProcess.layer))
  }
}
