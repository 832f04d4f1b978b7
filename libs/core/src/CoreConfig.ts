/**
 * CoreConfig — the knobs of one Core process: its version, where pedelec-cli lives (put first on every agent's
 * PATH), the provider stall timeout, the disconnect lease, the grace a pending tool call gets for its page to come
 * back, the asset ticket lifetime, the pedelec-deno run timeout, the Core IPC hello deadline, and whether the
 * scripted test provider is enabled. Read once through Effect's `Config` (the environment, unless a test provides
 * another ConfigProvider); tests and the headless app override what they need. It does not act on any knob: the services that read it do.
 */
import { ASSET_LIMITS } from "@pedelec/contracts/Assets"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import packageJson from "../package.json" with { type: "json" }

export interface CoreConfigShape {
  readonly version: string
  /** Directory holding `pedelec-cli` (and `pedelec-deno`); undefined leaves the agent's PATH as it is. */
  readonly binDir: string | undefined
  /** A provider silent this long (while no tool call is with the page) is stopped with `PROVIDER_STALLED`. */
  readonly stallTimeoutMs: number
  /** An `autoEndOnDisconnect` session ends this long after its last subscriber left. */
  readonly leaseMs: number
  /** How long a pending call waits for a page to claim the tools again before the agent hears `TOOL_OWNER_GONE`. */
  readonly ownerGraceMs: number
  /** An asset ticket unused this long expires (`PEDELEC_ASSET_TICKET_MS`, for tests; SPEC §8 says 5 minutes). */
  readonly assetTicketMs: number
  /** A pedelec-deno script running longer than this is stopped (`PEDELEC_DENO_TIMEOUT_MS`, default one minute). */
  readonly denoTimeoutMs: number
  /** A Core IPC connection without a successful `core.hello` this long is closed (`PEDELEC_HELLO_TIMEOUT_MS`). */
  readonly helloTimeoutMs: number
  /** `PEDELEC_ENABLE_SCRIPTED=1`: the scripted test agent is listed and usable. */
  readonly enableScripted: boolean
}

/** The release, from this package's package.json (tools/release sets every package's version at once). */
export const CORE_VERSION: string = packageJson.version

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/**
 * A duration in milliseconds: `fallback` when unset, and also when set to anything but a positive integer, as Core
 * has always done (a typo in a test's environment must not stop Core from starting).
 */
export const milliseconds = (name: string, fallback: number) =>
  Config.schema(PositiveInt, name).pipe(
    Config.withDefault(fallback),
    Config.orElse(() => Config.succeed(fallback))
  )

/** Unset and empty are the same: the agent's PATH stays as it is. */
const binDir = Config.NonEmptyString("PEDELEC_BIN_DIR").pipe(
  Config.map((dir): string | undefined => dir),
  Config.orElse(() => Config.succeed(undefined))
)

const enableScripted = Config.String("PEDELEC_ENABLE_SCRIPTED").pipe(
  Config.map((value) => value === "1"),
  Config.withDefault(false)
)

const fromConfig = Config.all({
  binDir,
  stallTimeoutMs: milliseconds("PEDELEC_STALL_TIMEOUT_MS", 10 * 60_000),
  leaseMs: milliseconds("PEDELEC_LEASE_MS", 10_000),
  ownerGraceMs: milliseconds("PEDELEC_OWNER_GRACE_MS", 10_000),
  assetTicketMs: milliseconds("PEDELEC_ASSET_TICKET_MS", ASSET_LIMITS.ticketTtlMs),
  denoTimeoutMs: milliseconds("PEDELEC_DENO_TIMEOUT_MS", 60_000),
  // Our clients say hello in their first milliseconds; a few seconds leave room for a loaded machine.
  helloTimeoutMs: milliseconds("PEDELEC_HELLO_TIMEOUT_MS", 5_000),
  enableScripted
})

/** Every knob falls back to its default, so only a broken ConfigProvider can fail this: a defect, not an input. */
const read = (overrides: Partial<CoreConfigShape>) =>
  fromConfig.pipe(
    Effect.map((config): CoreConfigShape => ({ version: CORE_VERSION, ...config, ...overrides })),
    Effect.orDie
  )

export class CoreConfig extends Context.Service<CoreConfig, CoreConfigShape>()("pedelec/core/CoreConfig") {
  static readonly layer = Layer.effect(CoreConfig, read({}))
  static readonly layerWith = (overrides: Partial<CoreConfigShape>) => Layer.effect(CoreConfig, read(overrides))
}
