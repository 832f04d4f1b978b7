/**
 * The provider adapter contract: what Core needs from each agent CLI. An adapter knows how to find its CLI, which
 * effort tokens it allows, and how to run a **session process** (`start`, then `send` per turn, `interrupt`; closing
 * the scope closes it), decoding the CLI's output into `ProviderEvent`s. Adapters do not know about sessions' events,
 * tool routing or stall timeouts: Core owns those.
 */

import type { LocalProvider } from "@pedelec/contracts/Desktop"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { EffortLevel, EffortProfile, EffortSupport, ProviderCode } from "@pedelec/contracts/Provider"
import type { TurnKind } from "@pedelec/contracts/Session"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"

/** Everything a session process is started with; a snapshot taken when the session was created. */
export interface SessionProcessOptions {
  readonly sessionId: SessionId
  /** The agent's cwd. */
  readonly workspace: string
  /** `PEDELEC_THREAD_ID`, `PEDELEC_SESSION_CAP`, `PEDELEC_HOME`, and PATH with pedelec-cli first. */
  readonly env: Readonly<Record<string, string>>
  readonly model: string | undefined
  readonly effort: EffortProfile
  /** The user opted this origin out of the CLI's sandbox (SPEC §12). */
  readonly fullAccess: boolean
  /** The conversation the session's next turn continues, when it has one (for an adapter that starts with it). */
  readonly providerSessionId?: string
}

export interface TurnInput {
  /** The text for the CLI: on a fresh provider session Core has already prepended its rules and tool index. */
  readonly prompt: string
  /** Resume this conversation; undefined starts a fresh one. */
  readonly providerSessionId: string | undefined
  readonly kind: TurnKind
}

/** A process group this session started, with what tells it apart from a later process that reuses the pid. */
export interface ProcessRecord {
  readonly pid: number
  readonly pgid: number
  /** Kernel start time (Linux: /proc/<pid>/stat field 22), so a reaper never kills a stranger with a reused pid. */
  readonly startTime: string
  /**
   * The tag in the environment of the agent CLI this process belongs to (AgentProcess/Tag): a reaper after a crash
   * finds by it what the agent started that no parent link or group names (a setsid process whose parent exited).
   */
  readonly agentTag?: string
}

export interface SessionProcess {
  /**
   * One turn: the CLI's events, ending after `completed` or `error`. The stream fails only when the CLI could not be
   * run or died without saying why (`PROVIDER_START_FAILED`, `PROVIDER_FAILED`). Interrupting the stream stops the
   * turn: the CLI is interrupted, then its process group and every descendant seen are killed.
   */
  readonly send: (turn: TurnInput) => Stream.Stream<ProviderEvent, PedelecError>
  /**
   * Asks the running turn to stop the way the CLI prefers: SIGINT to its group by default, or a warm CLI's own
   * interrupt message, which keeps its process for the next turn.
   */
  readonly interrupt: Effect.Effect<void>
  /** Processes started and still alive, for the session file and the crash reaper. */
  readonly processes: Effect.Effect<ReadonlyArray<ProcessRecord>>
}

/** Which effort tokens a profile may hold for this provider; anything else is `EFFORT_LEVEL_INVALID`. */
export interface EffortAllowList {
  /** Each argv token of a profile must match one of these. */
  readonly argv: ReadonlyArray<RegExp>
  readonly env: ReadonlyArray<string>
}

/** What each effort level runs with when the user's settings hold no profile for it. */
export type DefaultEffortProfiles = Readonly<Record<EffortLevel, EffortProfile>>

/** Default profiles for a CLI whose effort is one argv token per level (built from the adapter's own allow-list). */
export const effortProfilesOf = (token: (level: EffortLevel) => string): DefaultEffortProfiles => ({
  low: { argv: [token("low")], env: {} },
  medium: { argv: [token("medium")], env: {} },
  high: { argv: [token("high")], env: {} }
})

/** For a CLI without an effort knob: every level runs the CLI's own default. */
export const NO_EFFORT_PROFILES: DefaultEffortProfiles = {
  low: { argv: [], env: {} },
  medium: { argv: [], env: {} },
  high: { argv: [], env: {} }
}

/** What `start` fails with when the CLI cannot run: missing, refused by its own rules, or its spawn failed. */
export const startFailed = (provider: ProviderCode, reason: string) =>
  PedelecError.fromCode("PROVIDER_START_FAILED", "provider", { details: { provider, reason } })

export interface ProviderAdapter {
  readonly code: ProviderCode
  readonly name: string
  readonly experimental: boolean
  readonly effort: EffortSupport
  readonly effortAllowList: EffortAllowList
  /** The agent gets the page's tools as function tools (pedelec-agent) rather than pedelec-cli commands. */
  readonly toolsAsFunctions?: boolean
  /**
   * The agent also gets the page's tools as MCP tools of a `pedelec` server (`pedelec-cli mcp`), listed to the model
   * as `listedAs` with `<name>` for the tool's name (each CLI names MCP tools its own way; the prompt says which).
   */
  readonly toolsAsMcp?: { readonly listedAs: string }
  /** Core starts the session process when the session opens, not at its first turn, which then finds it ready. */
  readonly startsWithSession?: boolean
  /** Used for a level the user's settings do not define; each token passes `effortAllowList`. */
  readonly defaultEffort: DefaultEffortProfiles
  /** Finds the CLI (PATH plus the usual install folders) and reports version, availability and where it is. */
  readonly detect: Effect.Effect<LocalProvider>
  /** Acquires a session process in the caller's scope; closing the scope leaves no process behind. */
  readonly start: (options: SessionProcessOptions) => Effect.Effect<SessionProcess, PedelecError, Scope.Scope>
}
