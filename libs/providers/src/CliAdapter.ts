/**
 * CliAdapter — a ProviderAdapter for an installed agent CLI, made from what differs between CLIs: who it is, how
 * Discovery finds it, the advice when it is missing, its effort knobs, and the session process over the copy found
 * (a TurnProcess or a WarmProcess the adapter builds). Shared here: finding the CLI before a session starts, failing
 * PROVIDER_START_FAILED with that advice, providing the process spawner, and the sign-in error a CLI's stderr implies.
 */
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode, ProviderInfo } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { type AgentExit, AgentProcess } from "./AgentProcess.ts"
import { type CliSpec, type DiscoveryEnv, detected, type FoundCli } from "./Discovery.ts"
import {
  type DefaultEffortProfiles,
  type EffortAllowList,
  type ProviderAdapter,
  type SessionProcess,
  type SessionProcessOptions,
  startFailed
} from "./Provider.ts"

/** What an adapter of an installed CLI can be given; tests pass their own. */
export interface CliAdapterOptions {
  /** Where the CLI is looked for; this process's environment by default. */
  readonly env?: DiscoveryEnv
  /** `AgentProcess.layer` by default. */
  readonly agentProcess?: Layer.Layer<AgentProcess>
}

export interface CliAdapterSpec {
  readonly about: Omit<ProviderInfo, "available" | "version" | "error">
  readonly find: CliSpec
  /** What to do when the CLI is missing: how to install it and sign in. */
  readonly notFound: string
  readonly effortAllowList: EffortAllowList
  readonly defaultEffort: DefaultEffortProfiles
  /** Whether the CLI is given the page's tools over MCP too (PedelecMcp), and how it lists them to the model. */
  readonly toolsAsMcp?: { readonly listedAs: string }
  /** The session's process over the copy Discovery found; fails PROVIDER_START_FAILED when it cannot run. */
  readonly sessionProcess: (
    cli: FoundCli,
    session: SessionProcessOptions
  ) => Effect.Effect<SessionProcess, PedelecError, AgentProcess | Scope.Scope>
}

export const makeCliAdapter = (spec: CliAdapterSpec, options: CliAdapterOptions = {}): ProviderAdapter => {
  const { detect, cli: located } = detected(spec.about, spec.find, spec.notFound, options.env)
  const startSession = Effect.fn("CliAdapter.start")(function* (session: SessionProcessOptions) {
    const cli = yield* located
    if (cli === undefined) return yield* Effect.fail(startFailed(spec.about.code, spec.notFound))
    return yield* spec.sessionProcess(cli, session)
  })
  return {
    ...spec.about,
    effortAllowList: spec.effortAllowList,
    defaultEffort: spec.defaultEffort,
    ...(spec.toolsAsMcp === undefined ? {} : { toolsAsMcp: spec.toolsAsMcp }),
    detect,
    start: (session) => startSession(session).pipe(Effect.provide(options.agentProcess ?? AgentProcess.layer))
  }
}

/** How much of stderr a sign-in error quotes. */
const STDERR_QUOTED = 2_000

/** An unfinished exit whose stderr asks for a sign-in: PROVIDER_AUTH_REQUIRED in the CLI's own words. */
export const signInFromStderr =
  (provider: ProviderCode, asksForSignIn: RegExp) =>
  (exit: AgentExit, stderr: string): ReadonlyArray<ProviderEvent> | undefined =>
    asksForSignIn.test(stderr)
      ? [
          {
            type: "error",
            code: "PROVIDER_AUTH_REQUIRED",
            message: stderr.trim().slice(-STDERR_QUOTED),
            details: { provider, exitCode: exit.code ?? null }
          }
        ]
      : undefined
