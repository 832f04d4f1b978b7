/**
 * CoreConfig — the knobs of one Core process: its version, where pedelec-cli lives (put first on every agent's
 * PATH), the provider stall timeout, the disconnect lease, the asset ticket lifetime, the pedelec-deno run
 * timeout, and whether the scripted test provider is enabled.
 * Read from the environment once; tests and the headless app override what they need.
 */
import { ASSET_LIMITS } from "@pedelec/contracts/Assets"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

export interface CoreConfigShape {
  readonly version: string
  /** Directory holding `pedelec-cli` (and `pedelec-deno`); undefined leaves the agent's PATH as it is. */
  readonly binDir: string | undefined
  /** A provider silent this long (while no tool call is with the page) is stopped with `PROVIDER_STALLED`. */
  readonly stallTimeoutMs: number
  /** An `autoEndOnDisconnect` session ends this long after its last subscriber left. */
  readonly leaseMs: number
  /** An asset ticket unused this long expires (`PEDELEC_ASSET_TICKET_MS`, for tests; SPEC §8 says 5 minutes). */
  readonly assetTicketMs: number
  /** A pedelec-deno script running longer than this is stopped (`PEDELEC_DENO_TIMEOUT_MS`, default one minute). */
  readonly denoTimeoutMs: number
  /** `PEDELEC_ENABLE_SCRIPTED=1`: the scripted test agent is listed and usable. */
  readonly enableScripted: boolean
}

export const CORE_VERSION = "0.1.0"

const positive = (value: string | undefined, fallback: number) => {
  const parsed = value === undefined ? Number.NaN : Number(value)
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback
}

export const configFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): CoreConfigShape => ({
  version: CORE_VERSION,
  binDir: env.PEDELEC_BIN_DIR && env.PEDELEC_BIN_DIR.length > 0 ? env.PEDELEC_BIN_DIR : undefined,
  stallTimeoutMs: positive(env.PEDELEC_STALL_TIMEOUT_MS, 10 * 60_000),
  leaseMs: positive(env.PEDELEC_LEASE_MS, 10_000),
  assetTicketMs: positive(env.PEDELEC_ASSET_TICKET_MS, ASSET_LIMITS.ticketTtlMs),
  denoTimeoutMs: positive(env.PEDELEC_DENO_TIMEOUT_MS, 60_000),
  enableScripted: env.PEDELEC_ENABLE_SCRIPTED === "1"
})

export class CoreConfig extends Context.Service<CoreConfig, CoreConfigShape>()("pedelec/core/CoreConfig") {
  static readonly layer = Layer.sync(CoreConfig, () => configFromEnv())
  static readonly layerWith = (overrides: Partial<CoreConfigShape>) =>
    Layer.sync(CoreConfig, () => ({ ...configFromEnv(), ...overrides }))
}
