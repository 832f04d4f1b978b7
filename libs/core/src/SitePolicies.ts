/**
 * SitePolicies — what each site may ask of Core beyond being approved (SPEC §12, issue 16): the providers its
 * sessions may run, whether it may ask for an explicit workspace path, how many live sessions it may hold. Owns
 * `site-policies.json` in the home (0644, written atomically like settings.json; only the host role's
 * `origin.set_policy`, which the extension's options page sends, and the desktop role's write it) and the check `session.create` runs
 * before anything is made, which refuses with the code of the rule (the contracts' `policyRefusal`, which the
 * extension applies too). An origin without an entry has
 * DEFAULT_SITE_POLICY, today's behaviour. Counting live sessions and serialising creates are Sessions'.
 */
import path from "node:path"
import type { Origin } from "@pedelec/contracts/Ids"
import type { PedelecError, PedelecErrorOf } from "@pedelec/contracts/PedelecError"
import type { CreateSessionInput } from "@pedelec/contracts/Session"
import {
  DEFAULT_SITE_POLICY,
  policyRefusal,
  SitePolicies as SitePoliciesSchema,
  type SitePolicy
} from "@pedelec/contracts/SitePolicy"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import { CorePaths } from "./CorePaths.ts"
import { type Home, readDocument, SettingsStore, writeDocument } from "./SettingsStore.ts"
import type { StorageFailure } from "./StorageFailure.ts"

export const SITE_POLICIES_FILE = "site-policies.json"
const MODE = 0o644

type ReadFailure = PedelecErrorOf<"SETTINGS_INVALID"> | StorageFailure

const isDefault = (policy: SitePolicy) =>
  policy.allowWorkspacePaths === DEFAULT_SITE_POLICY.allowWorkspacePaths &&
  policy.allowedProviders === undefined &&
  policy.maxLiveSessions === undefined

export class SitePolicies extends Context.Service<
  SitePolicies,
  {
    /** Every origin whose policy is not the default. */
    readonly all: Effect.Effect<SitePoliciesSchema, ReadFailure>
    /** The origin's policy, the default when it has none. */
    readonly get: (origin: Origin) => Effect.Effect<SitePolicy, ReadFailure>
    /** Replaces the origin's policy (a default one removes its entry); holds from the next create on. */
    readonly set: (origin: Origin, policy: SitePolicy) => Effect.Effect<SitePolicy, ReadFailure>
    /**
     * Refuses a create outside the origin's policy with the rule's code. A create without `provider` is checked
     * against the settings' default provider, the one it would run.
     */
    readonly check: (
      origin: Origin,
      input: CreateSessionInput,
      live: number
    ) => Effect.Effect<void, PedelecError | ReadFailure>
    /** Whether the origin's policy bounds its live sessions (its creates then run one at a time). */
    readonly limitsSessions: (origin: Origin) => Effect.Effect<boolean, ReadFailure>
  }
>()("pedelec/core/SitePolicies") {
  static readonly layer = Layer.effect(
    SitePolicies,
    Effect.gen(function* () {
      const home: Home = { paths: yield* CorePaths, fs: yield* FileSystem.FileSystem, writes: yield* Semaphore.make(1) }
      const settings = yield* SettingsStore
      const file = path.join(home.paths.home, SITE_POLICIES_FILE)
      const readAll = readDocument(home, file, SitePoliciesSchema, {}, false)
      const get = (origin: Origin) => Effect.map(readAll, (all) => all[origin] ?? DEFAULT_SITE_POLICY)

      const set = Effect.fn("SitePolicies.set")(
        function* (origin: Origin, policy: SitePolicy) {
          const { [origin]: _, ...others } = yield* readAll
          yield* writeDocument(home, file, isDefault(policy) ? others : { ...others, [origin]: policy }, MODE)
          return policy
        },
        (effect) => home.writes.withPermits(1)(effect)
      )

      const check = Effect.fn("SitePolicies.check")(function* (
        origin: Origin,
        input: CreateSessionInput,
        live: number
      ) {
        const policy = yield* get(origin)
        const needsDefault = input.provider === undefined && policy.allowedProviders !== undefined
        const provider = input.provider ?? (needsDefault ? (yield* settings.get).defaultProvider : null)
        const request = { provider, explicitPath: input.workspace !== undefined, live }
        const refusal = policyRefusal(origin, policy, request, "core")
        if (refusal !== undefined) return yield* Effect.fail(refusal)
      })

      return SitePolicies.of({
        all: readAll,
        get,
        set,
        check,
        limitsSessions: (origin) => Effect.map(get(origin), (policy) => policy.maxLiveSessions !== undefined)
      })
    })
  )
}
