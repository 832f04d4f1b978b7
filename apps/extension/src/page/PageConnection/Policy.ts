/**
 * PageConnection/Policy — the site policy the user set in the options page, enforced by the extension before a
 * `session.create` is forwarded or asks for anything, by the one rule Core applies to its own copy again
 * (contracts' `policyRefusal`, the same codes): an explicitly asked provider outside `allowedProviders` (Core alone
 * knows the default provider a create that names none gets), an explicit workspace path when paths are not allowed,
 * and a live-session count at the limit (counted from Core's list only for a site that has a limit). Storing the
 * policy is Grants'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import type { PageParams } from "@pedelec/contracts/link/PageLink"
import { policyRefusal } from "@pedelec/contracts/SitePolicy"
import * as Effect from "effect/Effect"
import type { Grants } from "../../approval/Grants.ts"
import type { HostCalls } from "../../host/HostCalls.ts"

export const checkPolicy = Effect.fnUntraced(function* (
  grants: Grants["Service"],
  hostCalls: HostCalls["Service"],
  origin: Origin,
  input: PageParams<"session.create">["input"]
) {
  const policy = yield* grants.policyOf(origin)
  const live =
    policy.maxLiveSessions === undefined
      ? 0
      : (yield* hostCalls.call("session.list", {})).filter(
          (session) => session.origin === origin && session.status !== "ended"
        ).length
  const request = { provider: input.provider ?? null, explicitPath: input.workspace?.path !== undefined, live }
  const refusal = policyRefusal(origin, policy, request, "extension")
  if (refusal !== undefined) return yield* Effect.fail(refusal)
})
