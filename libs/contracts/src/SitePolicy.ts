/**
 * What one site may ask of Pedelec beyond being approved, set by the user in the extension's options page and
 * enforced twice: by the extension before it forwards `session.create`, and by Core, which keeps each origin's
 * policy in the home and refuses a session outside it with the code of the rule. An origin without a policy gets
 * `DEFAULT_SITE_POLICY`, which is what an approved site could do before policies existed. The policy in words is here
 * too, so the desktop app and the options page describe it alike.
 */
import * as Schema from "effect/Schema"
import { Origin } from "./Ids.ts"
import { PedelecError } from "./PedelecError.ts"
import type { Component } from "./Protocol.ts"
import { ProviderCode } from "./Provider.ts"

export const SitePolicy = Schema.Struct({
  /** The providers the site's sessions may run (the default provider included); absent: any provider. */
  allowedProviders: Schema.optionalKey(Schema.Array(ProviderCode).check(Schema.isMaxLength(64))),
  /** Whether the site may ask for an explicit workspace path (still a grant of its own per path, SPEC §12). */
  allowWorkspacePaths: Schema.Boolean,
  /** At most this many live sessions at once; absent: no limit. */
  maxLiveSessions: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
})
export type SitePolicy = typeof SitePolicy.Type

export const DEFAULT_SITE_POLICY: SitePolicy = { allowWorkspacePaths: true }

/** `site-policies.json` in the home: the origins whose policy is not the default. */
export const SitePolicies = Schema.Record(Origin, SitePolicy).check(
  Schema.makeFilter((policies) =>
    Object.keys(policies).length <= 4096 ? undefined : "at most 4096 origins may have a policy"
  )
)
export type SitePolicies = typeof SitePolicies.Type

/** What a create asks for, as far as a policy cares. */
export interface PolicyRequest {
  /** The provider it will run: the one asked for, else the default one; `null` when none resolves. */
  readonly provider: ProviderCode | null
  /** It asks for an explicit workspace path. */
  readonly explicitPath: boolean
  /** The origin's live sessions now, this one not counted. */
  readonly live: number
}

/**
 * The first rule of `policy` the request breaks, as the error to answer, or undefined. The one rule both the
 * extension (before it forwards `session.create`) and Core (SitePolicies) apply, so both refuse alike.
 */
export const policyRefusal = (
  origin: Origin,
  policy: SitePolicy,
  request: PolicyRequest,
  source: Component
): PedelecError | undefined => {
  const allowed = policy.allowedProviders
  const refuse = (
    code: "POLICY_PROVIDER_NOT_ALLOWED" | "POLICY_WORKSPACE_NOT_ALLOWED" | "POLICY_SESSION_LIMIT",
    details: Record<string, string | number>
  ) => PedelecError.fromCode(code, source, { details: { origin, ...details } })
  if (allowed !== undefined && request.provider !== null && !allowed.includes(request.provider)) {
    return refuse("POLICY_PROVIDER_NOT_ALLOWED", {
      provider: request.provider,
      allowed: allowed.length === 0 ? "no provider" : allowed.join(", ")
    })
  }
  if (request.explicitPath && !policy.allowWorkspacePaths) return refuse("POLICY_WORKSPACE_NOT_ALLOWED", {})
  const limit = policy.maxLiveSessions
  if (limit !== undefined && request.live >= limit) return refuse("POLICY_SESSION_LIMIT", { live: request.live, limit })
  return undefined
}

/**
 * The policy in words, one line for a list of sites (the desktop app's Sites screen, the extension's options page),
 * so both say the same thing; `nameOf` gives a provider's display name where the caller has one.
 */
export const policySummary = (policy: SitePolicy, nameOf: (code: ProviderCode) => string = (code) => code): string =>
  [
    policy.allowedProviders === undefined
      ? "Any provider"
      : policy.allowedProviders.length === 0
        ? "No provider"
        : `Only ${policy.allowedProviders.map(nameOf).join(", ")}`,
    policy.allowWorkspacePaths ? "may ask for a folder" : "no folders of this computer",
    policy.maxLiveSessions === undefined ? "no session limit" : `at most ${policy.maxLiveSessions} live sessions`
  ].join(" · ")
