/**
 * PageConnection/Policy — the site policy the user set in the options page, enforced by the extension before a
 * `session.create` is forwarded or asks for anything, by the one rule Core applies to its own copy again
 * (contracts' `policyRefusal`, the same codes): an explicitly asked provider outside `allowedProviders` (Core alone
 * knows the default provider a create that names none gets), an explicit workspace path when paths are not allowed,
 * and a live-session count at the limit (counted from Core's list only for a site that has a limit). The desktop app
 * sets policies too, in Core: a create the extension's copy (Grants') refuses is checked once more against Core's,
 * which then replaces the copy; one the copy allows and Core's refuses is refused by Core itself.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import type { PageParams } from "@pedelec/contracts/link/PageLink"
import { policyRefusal, type SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Grants } from "../../approval/Grants.ts"
import type { HostCalls } from "../../host/HostCalls.ts"

const refusalBy = Effect.fnUntraced(function* (
  hostCalls: HostCalls["Service"],
  origin: Origin,
  policy: SitePolicy,
  input: PageParams<"session.create">["input"]
) {
  const live =
    policy.maxLiveSessions === undefined
      ? 0
      : (yield* hostCalls.call("session.list", {})).filter(
          (session) => session.origin === origin && session.status !== "ended"
        ).length
  const request = { provider: input.provider ?? null, explicitPath: input.workspace?.path !== undefined, live }
  return policyRefusal(origin, policy, request, "extension")
})

export const checkPolicy = Effect.fnUntraced(function* (
  grants: Grants["Service"],
  hostCalls: HostCalls["Service"],
  origin: Origin,
  input: PageParams<"session.create">["input"]
) {
  const refusal = yield* refusalBy(hostCalls, origin, yield* grants.policyOf(origin), input)
  if (refusal === undefined) return
  // The desktop app may have loosened the policy since: Core's copy decides (a Core that does not answer: ours).
  const fromCore = yield* hostCalls.call("origin.get_policy", { origin }).pipe(Effect.option)
  if (Option.isNone(fromCore)) return yield* Effect.fail(refusal)
  yield* grants.setPolicy(origin, fromCore.value)
  const byCore = yield* refusalBy(hostCalls, origin, fromCore.value, input)
  if (byCore !== undefined) return yield* Effect.fail(byCore)
})
