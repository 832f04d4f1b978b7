/**
 * ScriptedAdapter — the `scripted` provider: runs the test agent (dist/scripted-agent.mjs) one process per turn
 * through AgentProcess and decodes its JSON lines strictly into ProviderEvents, skipping and counting what it cannot
 * read. It refuses to run unless PEDELEC_ENABLE_SCRIPTED=1. Stall timeouts, tool routing and session events are
 * Core's; what the agent does with a script is agent.ts's.
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import type { LocalProvider } from "@pedelec/contracts/Desktop"
import { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { ProviderSessionId } from "@pedelec/contracts/node/ProviderEvent"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentProcess } from "../AgentProcess.ts"
import type { OutputLine } from "../OutputLines.ts"
import {
  NO_EFFORT_PROFILES,
  type ProviderAdapter,
  type SessionProcessOptions,
  startFailed,
  type TurnInput
} from "../Provider.ts"
import type { LineCounts } from "../TurnProcess.ts"
import { makeTurnProcess } from "../TurnProcess.ts"
import { SCRIPTED_AGENT_VERSION } from "./Script.ts"

const PROVIDER = "scripted"
const NAME = "Scripted test agent"
/** After `done`, how long the agent gets to exit on its own before the scope's kill sequence runs. */
const EXIT_WAIT_MS = 1_000
const EFFORT = { supported: false, note: "The scripted test agent follows its script; effort levels change nothing." }

const Text = Schema.String
/** The agent's own event format (agent.ts), one JSON object per line. */
const AgentEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("session"), id: ProviderSessionId }),
  Schema.Struct({ type: Schema.Literals(["delta", "message"]), text: Text }),
  Schema.Struct({ type: Schema.Literal("tool"), name: Text, detail: Schema.optionalKey(Text) }),
  Schema.Struct({ type: Schema.Literal("error"), code: Text, message: Text }),
  Schema.Struct({ type: Schema.Literal("done") })
])
type AgentEvent = typeof AgentEvent.Type
const KNOWN_TYPES = new Set(["session", "delta", "message", "tool", "error", "done"])

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))
const decodeEnvelope = Schema.decodeUnknownOption(Schema.Struct({ type: Schema.String }))
const decodeEvent = Schema.decodeUnknownOption(AgentEvent)
const isErrorCode = Schema.is(ErrorCode)

const toProviderEvent = (event: AgentEvent): ProviderEvent => {
  switch (event.type) {
    case "session":
      return { type: "session", providerSessionId: event.id }
    case "delta":
    case "message":
      return { type: event.type, text: event.text }
    case "tool":
      return event.detail === undefined
        ? { type: "tool_activity", name: event.name.slice(0, 256) }
        : { type: "tool_activity", name: event.name.slice(0, 256), detail: event.detail.slice(0, 4096) }
    case "error":
      return isErrorCode(event.code)
        ? { type: "error", code: event.code, message: event.message.slice(0, 8192) }
        : {
            type: "error",
            code: "PROVIDER_FAILED",
            message: event.message.slice(0, 8192),
            details: { provider: PROVIDER, agentCode: event.code.slice(0, 256) }
          }
    case "done":
      return { type: "completed" }
  }
}

/** One stdout line to at most one event; anything unreadable is counted, never fatal. */
export const decodeAgentLine = (line: OutputLine, counts: LineCounts): ProviderEvent | undefined => {
  if (line._tag === "Invalid") {
    counts.skipped++
    return undefined
  }
  if (line.text.trim() === "") return undefined
  const json = decodeJson(line.text)
  const envelope = Option.flatMap(json, decodeEnvelope)
  if (Option.isNone(json) || Option.isNone(envelope)) {
    counts.skipped++
    return undefined
  }
  if (!KNOWN_TYPES.has(envelope.value.type)) {
    counts.ignored++
    return undefined
  }
  const event = decodeEvent(json.value)
  if (Option.isNone(event)) {
    counts.skipped++
    return undefined
  }
  return toProviderEvent(event.value)
}

export interface ScriptedAdapterOptions {
  /** Where PEDELEC_ENABLE_SCRIPTED and PEDELEC_SCRIPTED_AGENT are read; this process's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Tests may pass their own; `AgentProcess.layer` by default. */
  readonly agentProcess?: Layer.Layer<AgentProcess>
}

/** The bundled agent: PEDELEC_SCRIPTED_AGENT, else the package's `./scripted-agent` export; undefined if not built. */
export const resolveAgentPath = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const override = env.PEDELEC_SCRIPTED_AGENT
  if (override !== undefined && override !== "") return existsSync(override) ? override : undefined
  try {
    const resolved = createRequire(import.meta.url).resolve("@pedelec/providers/scripted-agent")
    return existsSync(resolved) ? resolved : undefined
  } catch {
    return undefined
  }
}

const unavailableReason = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (env.PEDELEC_ENABLE_SCRIPTED !== "1") {
    return "The scripted test agent is disabled; it is enabled only with PEDELEC_ENABLE_SCRIPTED=1 (tests, --self-test)."
  }
  return resolveAgentPath(env) === undefined
    ? "The scripted agent is not built; run `npm run build -w @pedelec/providers` or set PEDELEC_SCRIPTED_AGENT."
    : undefined
}

/** The adapter; each session's processes are spawned through AgentProcess (its Node layer unless one is given). */
export const makeScriptedAdapter = (options: ScriptedAdapterOptions = {}): ProviderAdapter => {
  const env = () => options.env ?? process.env

  const detect = Effect.sync((): LocalProvider => {
    const reason = unavailableReason(env())
    return {
      code: PROVIDER,
      name: NAME,
      available: reason === undefined,
      version: reason === undefined ? SCRIPTED_AGENT_VERSION : null,
      error: reason ?? null,
      experimental: false,
      effort: EFFORT,
      location: reason === undefined ? (resolveAgentPath(env()) ?? null) : null
    }
  })

  const startSession = Effect.fn("ScriptedAdapter.start")(function* (session: SessionProcessOptions) {
    const reason = unavailableReason(env())
    const agentPath = resolveAgentPath(env())
    if (reason !== undefined || agentPath === undefined)
      return yield* Effect.fail(startFailed(PROVIDER, reason ?? "not built"))
    return yield* makeTurnProcess({
      provider: PROVIDER,
      label: "the agent",
      spawn: (turn: TurnInput) => ({
        command: process.execPath,
        args: [agentPath, ...(turn.providerSessionId === undefined ? [] : ["--resume", turn.providerSessionId])],
        cwd: session.workspace,
        // Inherited like a real CLI's; ELECTRON_RUN_AS_NODE makes Electron's execPath behave as node.
        env: { ...session.env, ELECTRON_RUN_AS_NODE: "1" },
        inheritEnv: true,
        stdin: turn.prompt
      }),
      decoder: () => {
        const counts: LineCounts = { skipped: 0, ignored: 0 }
        return {
          counts,
          decode: (line: OutputLine) => {
            const event = decodeAgentLine(line, counts)
            return event === undefined ? [] : [event]
          }
        }
      },
      exitWaitMs: EXIT_WAIT_MS,
      // The agent's `done` is its completion; exit 0 without one (an empty script) still finished the turn.
      cleanExitCompletes: true
    })
  })
  const start = (session: SessionProcessOptions) =>
    startSession(session).pipe(Effect.provide(options.agentProcess ?? AgentProcess.layer))

  return {
    code: PROVIDER,
    name: NAME,
    experimental: false,
    effort: EFFORT,
    effortAllowList: { argv: [], env: [] },
    defaultEffort: NO_EFFORT_PROFILES,
    detect,
    start
  }
}

/** The `scripted` adapter as Core registers it: environment read at each call, Node's process spawner. */
export const ScriptedAdapter: ProviderAdapter = makeScriptedAdapter()
