// CoreConfig read through Effect's Config from a given environment: the defaults, every variable, a value that is
// not a positive integer (the default, as before), an empty PEDELEC_BIN_DIR, and overrides over the environment.
import { assert, describe, it } from "@effect/vitest"
import { ASSET_LIMITS } from "@pedelec/contracts/Assets"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CORE_VERSION, CoreConfig, type CoreConfigShape } from "../src/CoreConfig.ts"

const configFor = (env: Record<string, string>, overrides?: Partial<CoreConfigShape>) =>
  Effect.service(CoreConfig).pipe(
    Effect.provide(
      (overrides === undefined ? CoreConfig.layer : CoreConfig.layerWith(overrides)).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
      )
    )
  )

const DEFAULTS: CoreConfigShape = {
  version: CORE_VERSION,
  binDir: undefined,
  stallTimeoutMs: 600_000,
  leaseMs: 10_000,
  ownerGraceMs: 10_000,
  assetTicketMs: ASSET_LIMITS.ticketTtlMs,
  denoTimeoutMs: 60_000,
  helloTimeoutMs: 5_000,
  enableScripted: false
}

describe("CoreConfig", () => {
  it.effect("has a default for every knob", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* configFor({}), DEFAULTS)
    })
  )

  it.effect("reads every variable", () =>
    Effect.gen(function* () {
      const config = yield* configFor({
        PEDELEC_BIN_DIR: "/opt/pedelec/bin",
        PEDELEC_STALL_TIMEOUT_MS: "1000",
        PEDELEC_LEASE_MS: "2000",
        PEDELEC_OWNER_GRACE_MS: "3000",
        PEDELEC_ASSET_TICKET_MS: "4000",
        PEDELEC_DENO_TIMEOUT_MS: "5000",
        PEDELEC_HELLO_TIMEOUT_MS: "6000",
        PEDELEC_ENABLE_SCRIPTED: "1"
      })
      assert.deepStrictEqual(config, {
        version: CORE_VERSION,
        binDir: "/opt/pedelec/bin",
        stallTimeoutMs: 1000,
        leaseMs: 2000,
        ownerGraceMs: 3000,
        assetTicketMs: 4000,
        denoTimeoutMs: 5000,
        helloTimeoutMs: 6000,
        enableScripted: true
      })
    })
  )

  it.effect("falls back to the default for a value that is not a positive integer", () =>
    Effect.gen(function* () {
      for (const bad of ["0", "-5", "1.5", "soon", "NaN", ""]) {
        const config = yield* configFor({ PEDELEC_OWNER_GRACE_MS: bad, PEDELEC_LEASE_MS: bad })
        assert.strictEqual(config.ownerGraceMs, 10_000, `PEDELEC_OWNER_GRACE_MS=${JSON.stringify(bad)}`)
        assert.strictEqual(config.leaseMs, 10_000, `PEDELEC_LEASE_MS=${JSON.stringify(bad)}`)
      }
    })
  )

  it.effect("leaves PATH alone for an empty PEDELEC_BIN_DIR; the scripted agent needs exactly 1", () =>
    Effect.gen(function* () {
      const config = yield* configFor({ PEDELEC_BIN_DIR: "", PEDELEC_ENABLE_SCRIPTED: "true" })
      assert.strictEqual(config.binDir, undefined)
      assert.strictEqual(config.enableScripted, false)
    })
  )

  it.effect("takes overrides over the environment", () =>
    Effect.gen(function* () {
      const config = yield* configFor({ PEDELEC_LEASE_MS: "2000", PEDELEC_DENO_TIMEOUT_MS: "5000" }, { leaseMs: 50 })
      assert.strictEqual(config.leaseMs, 50)
      assert.strictEqual(config.denoTimeoutMs, 5000)
    })
  )
})
