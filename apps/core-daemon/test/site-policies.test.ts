// Per-site policy on a real Core (issue 16.4): the host role's origin.set_policy writes it to the home, and every
// session.create outside it is refused with the code of the rule it breaks (the default provider counted when none
// was asked), before anything is made; the default policy is today's behaviour; a restart keeps the policy. The
// desktop role lists every site's policy and sets one, which the host role (the extension) then reads.
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_SITE_POLICY } from "@pedelec/contracts/SitePolicy"
import {
  coreForFile,
  desktopClient,
  failureOf,
  hostClient,
  ORIGIN,
  OTHER_ORIGIN,
  openSession,
  removeHome,
  startCore,
  stopCore,
  tempDir
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

const core = coreForFile()

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(failureOf(effect), (error) => ({ code: error?.code, details: error?.details }))

describe("site policies on a real Core", () => {
  it.effect("an origin without a policy gets the default, which refuses nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        assert.deepStrictEqual(yield* client["origin.get_policy"]({ origin: OTHER_ORIGIN }), DEFAULT_SITE_POLICY)
        const project = yield* Effect.promise(() => tempDir("pedelec-policy-project-"))
        const { sessionId } = yield* openSession(client, { workspace: { path: project } }, { origin: OTHER_ORIGIN })
        yield* client["session.end"]({ origin: OTHER_ORIGIN, sessionId })
        yield* Effect.promise(() => removeHome(project))
      })
    )
  )

  it.effect("each rule refuses with its own code, and only that origin", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const policy = { allowedProviders: ["ollama" as const], allowWorkspacePaths: false, maxLiveSessions: 1 }
        assert.deepStrictEqual(yield* client["origin.set_policy"]({ origin: ORIGIN, policy }), policy)
        assert.deepStrictEqual(yield* client["origin.get_policy"]({ origin: ORIGIN }), policy)
        const create = (input: object) => client["session.create"]({ origin: ORIGIN, input })

        const provider = yield* refusal(create({ provider: "scripted" }))
        assert.strictEqual(provider.code, "POLICY_PROVIDER_NOT_ALLOWED")
        assert.deepInclude(provider.details, { provider: "scripted", allowed: "ollama" })

        // The default provider is the one a create without `provider` would run: it is checked too.
        const desktop = yield* desktopClient(core.info)
        const settings = yield* desktop["desktop.settings.get"]()
        const { secretsSet: _, ...current } = settings
        yield* desktop["desktop.settings.set"]({ settings: { ...current, defaultProvider: "scripted" } })
        assert.strictEqual((yield* refusal(create({}))).code, "POLICY_PROVIDER_NOT_ALLOWED")

        yield* client["origin.set_policy"]({
          origin: ORIGIN,
          policy: { allowedProviders: ["scripted"], allowWorkspacePaths: false, maxLiveSessions: 1 }
        })
        const project = yield* Effect.promise(() => tempDir("pedelec-policy-project-"))
        const workspace = yield* refusal(create({ provider: "scripted", workspace: { path: project } }))
        assert.strictEqual(workspace.code, "POLICY_WORKSPACE_NOT_ALLOWED")
        // Refused before anything is made: the project directory got no runtime folder.
        assert.deepStrictEqual(yield* Effect.promise(() => readdir(project)), [])

        const first = yield* openSession(client, {})
        const limit = yield* refusal(create({ provider: "scripted", autoEndOnDisconnect: false }))
        assert.strictEqual(limit.code, "POLICY_SESSION_LIMIT")
        assert.deepInclude(limit.details, { live: 1, limit: 1 })
        // Another origin is not bound by this one's policy.
        const other = yield* openSession(client, {}, { origin: OTHER_ORIGIN })
        // Ending the live session frees the slot.
        yield* client["session.end"]({ origin: ORIGIN, sessionId: first.sessionId })
        const second = yield* openSession(client, {})
        yield* client["session.end"]({ origin: ORIGIN, sessionId: second.sessionId })
        yield* client["session.end"]({ origin: OTHER_ORIGIN, sessionId: other.sessionId })
        yield* client["origin.set_policy"]({ origin: ORIGIN, policy: DEFAULT_SITE_POLICY })
        yield* Effect.promise(() => removeHome(project))
      })
    )
  )

  it.effect(
    "the desktop role lists the sites with a policy and sets one, which the host role reads and Core enforces",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const desktop = yield* desktopClient(core.info)
          const client = yield* hostClient(core.info)
          const policy = { allowedProviders: ["ollama" as const], allowWorkspacePaths: true }
          assert.deepStrictEqual(yield* desktop["desktop.origin.set_policy"]({ origin: OTHER_ORIGIN, policy }), policy)
          assert.deepStrictEqual((yield* desktop["desktop.origin.policies"]())[OTHER_ORIGIN], policy)
          assert.deepStrictEqual(yield* client["origin.get_policy"]({ origin: OTHER_ORIGIN }), policy)
          const create = client["session.create"]({ origin: OTHER_ORIGIN, input: { provider: "scripted" } })
          assert.strictEqual((yield* refusal(create)).code, "POLICY_PROVIDER_NOT_ALLOWED")
          // Back to the default: the site leaves the list, and the create goes through.
          yield* desktop["desktop.origin.set_policy"]({ origin: OTHER_ORIGIN, policy: DEFAULT_SITE_POLICY })
          assert.notProperty(yield* desktop["desktop.origin.policies"](), OTHER_ORIGIN)
          const { sessionId } = yield* openSession(client, {}, { origin: OTHER_ORIGIN })
          yield* client["session.end"]({ origin: OTHER_ORIGIN, sessionId })
        })
      )
  )

  it.effect("concurrent creates cannot pass the session limit together", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        yield* client["origin.set_policy"]({
          origin: ORIGIN,
          policy: { allowWorkspacePaths: true, maxLiveSessions: 2 }
        })
        const attempts = yield* Effect.forEach(
          Array.from({ length: 6 }, () => 0),
          () =>
            Effect.result(
              client["session.create"]({ origin: ORIGIN, input: { provider: "scripted", autoEndOnDisconnect: false } })
            ),
          { concurrency: "unbounded" }
        )
        const made = attempts.flatMap((attempt) => (attempt._tag === "Success" ? [attempt.success.sessionId] : []))
        const codes = attempts.flatMap((attempt) =>
          attempt._tag === "Failure" && "code" in attempt.failure ? [attempt.failure.code] : []
        )
        assert.strictEqual(made.length, 2)
        assert.deepStrictEqual(codes, [
          "POLICY_SESSION_LIMIT",
          "POLICY_SESSION_LIMIT",
          "POLICY_SESSION_LIMIT",
          "POLICY_SESSION_LIMIT"
        ])
        yield* Effect.forEach(made, (sessionId) => client["session.end"]({ origin: ORIGIN, sessionId }))
        yield* client["origin.set_policy"]({ origin: ORIGIN, policy: DEFAULT_SITE_POLICY })
      })
    )
  )

  it.effect("the policy lives in the home and survives a restart; a default one leaves no entry", () =>
    Effect.gen(function* () {
      const home = yield* Effect.promise(() => tempDir("pedelec-policy-home-"))
      const policy = { allowedProviders: ["scripted" as const], allowWorkspacePaths: false }
      const first = yield* Effect.promise(() => startCore({ home }))
      yield* Effect.scoped(
        Effect.flatMap(hostClient(first.info), (client) => client["origin.set_policy"]({ origin: ORIGIN, policy }))
      )
      yield* Effect.promise(() => stopCore(first))
      const file = path.join(home, "site-policies.json")
      assert.deepStrictEqual(JSON.parse(yield* Effect.promise(() => readFile(file, "utf8"))), { [ORIGIN]: policy })
      const second = yield* Effect.promise(() => startCore({ home }))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const client = yield* hostClient(second.info)
          assert.deepStrictEqual(yield* client["origin.get_policy"]({ origin: ORIGIN }), policy)
          yield* client["origin.set_policy"]({ origin: ORIGIN, policy: DEFAULT_SITE_POLICY })
        })
      )
      assert.deepStrictEqual(JSON.parse(yield* Effect.promise(() => readFile(file, "utf8"))), {})
      yield* Effect.promise(() => stopCore(second))
      yield* Effect.promise(() => removeHome(home))
    })
  )
})
