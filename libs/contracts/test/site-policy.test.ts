// The one policy rule the extension and Core both apply (SitePolicy.policyRefusal): each rule refuses with its own
// code and the details its message names, in a fixed order; the default policy refuses nothing. And the policy in
// words (policySummary) that the desktop app and the options page both show.
import { assert, describe, it } from "@effect/vitest"
import type { Origin } from "../src/Ids.ts"
import { DEFAULT_SITE_POLICY, policyRefusal, policySummary } from "../src/SitePolicy.ts"

const origin = "https://app.example" as Origin
const ask = { provider: "claude" as const, explicitPath: true, live: 5 }

describe("policyRefusal", () => {
  it("refuses nothing under the default policy", () => {
    assert.isUndefined(policyRefusal(origin, DEFAULT_SITE_POLICY, ask, "extension"))
  })

  it("names the rule broken, first the provider, then the path, then the limit", () => {
    const strict = { allowedProviders: ["ollama" as const], allowWorkspacePaths: false, maxLiveSessions: 5 }
    const provider = policyRefusal(origin, strict, ask, "extension")
    assert.strictEqual(provider?.code, "POLICY_PROVIDER_NOT_ALLOWED")
    assert.strictEqual(provider?.source, "extension")
    assert.deepStrictEqual(provider?.details, { origin, provider: "claude", allowed: "ollama" })
    assert.include(provider?.message ?? "", "may not use provider claude; its policy allows ollama")
    const path = policyRefusal(origin, strict, { ...ask, provider: "ollama" }, "core")
    assert.strictEqual(path?.code, "POLICY_WORKSPACE_NOT_ALLOWED")
    const limit = policyRefusal(origin, strict, { ...ask, provider: "ollama", explicitPath: false }, "core")
    assert.deepStrictEqual([limit?.code, limit?.details], ["POLICY_SESSION_LIMIT", { origin, live: 5, limit: 5 }])
    assert.isUndefined(policyRefusal(origin, strict, { provider: "ollama", explicitPath: false, live: 4 }, "core"))
  })

  it("leaves an unresolved provider to the create itself, and an empty list allows none", () => {
    const none = { allowedProviders: [], allowWorkspacePaths: true }
    assert.isUndefined(policyRefusal(origin, none, { provider: null, explicitPath: false, live: 0 }, "core"))
    const refused = policyRefusal(origin, none, { provider: "ollama", explicitPath: false, live: 0 }, "core")
    assert.strictEqual(refused?.details?.allowed, "no provider")
  })
})

describe("policySummary", () => {
  it("says each rule in words, with the caller's names for providers", () => {
    assert.strictEqual(policySummary(DEFAULT_SITE_POLICY), "Any provider · may ask for a folder · no session limit")
    const strict = {
      allowedProviders: ["ollama" as const, "claude" as const],
      allowWorkspacePaths: false,
      maxLiveSessions: 2
    }
    assert.strictEqual(
      policySummary(strict, (code) => (code === "claude" ? "Claude Code" : code)),
      "Only ollama, Claude Code · no folders of this computer · at most 2 live sessions"
    )
    assert.strictEqual(
      policySummary({ allowedProviders: [], allowWorkspacePaths: true }).split(" · ")[0],
      "No provider"
    )
  })
})
