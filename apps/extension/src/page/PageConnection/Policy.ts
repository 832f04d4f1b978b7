/**
 * PageConnection/Policy — the site policy the user set in the options page, enforced by the extension before a
 * `session.create` is forwarded or asks for anything (Core enforces its own copy again, with the same codes, and
 * alone knows the default provider a create that names none gets): an explicitly asked provider outside
 * `allowedProviders`, an explicit workspace path when paths are not allowed, and a live-session count at the limit
 * (counted from Core's list only for a site that has a limit). Storing the policy is Grants'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import type { PageParams } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import type { Grants } from "../../approval/Grants.ts"
import type { HostCalls } from "../../host/HostCalls.ts"

const refuse = (
  code: "POLICY_PROVIDER_NOT_ALLOWED" | "POLICY_WORKSPACE_NOT_ALLOWED" | "POLICY_SESSION_LIMIT",
  details: Record<string, string | number>
) => Effect.fail(PedelecError.fromCode(code, "extension", { details }))

export const checkPolicy = Effect.fnUntraced(function* (
  grants: Grants["Service"],
  hostCalls: HostCalls["Service"],
  origin: Origin,
  input: PageParams<"session.create">["input"]
) {
  const policy = yield* grants.policyOf(origin)
  const allowed = policy.allowedProviders
  if (allowed !== undefined && input.provider !== undefined && !allowed.includes(input.provider)) {
    return yield* refuse("POLICY_PROVIDER_NOT_ALLOWED", { provider: input.provider, allowed: allowed.join(", ") })
  }
  if (!policy.allowWorkspacePaths && input.workspace?.path !== undefined) {
    return yield* refuse("POLICY_WORKSPACE_NOT_ALLOWED", { origin })
  }
  const limit = policy.maxLiveSessions
  if (limit === undefined) return
  const sessions = yield* hostCalls.call("session.list", {})
  const live = sessions.filter((session) => session.origin === origin && session.status !== "ended").length
  if (live >= limit) return yield* refuse("POLICY_SESSION_LIMIT", { live, limit })
})
