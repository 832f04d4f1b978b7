/**
 * What a site's agent will be told is approved with it (issue 16.3): the approval window is given the session's
 * guidance and tool index, an approved origin's next session with the same manifest is not asked again, and one whose
 * manifest changed asks again, showing what changed; the options page lists each site's approved manifest. The
 * manifest's digest does not depend on how the page ordered its keys or tools.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { Grants } from "../src/approval/Grants.ts"
import { digestOf, MANIFEST_VIEW_KEY, type ManifestView, manifestOf } from "../src/approval/Manifest.ts"
import { UiRequests } from "../src/ui/UiRequests.ts"
import type { FakeChromeApi, FakeWorkerPort } from "./FakeChromeApi.ts"
import { waitUntil } from "./FakeChromeApi.ts"
import {
  A,
  approve,
  B,
  connect,
  hostRequests,
  lastHostRequest,
  request,
  responseTo,
  run,
  SESSION,
  sessionInfo
} from "./PagePort.ts"

const argsSchema = { type: "object" as const }
const save = { name: "save", description: "Saves the draft.", argsSchema, annotations: { destructive: true } }
const read = { name: "read", description: "Reads the draft.", argsSchema, annotations: { readOnly: true } }
type TestTool = typeof save | typeof read
const skills = (guidance: string, tools: ReadonlyArray<TestTool>) => ({ guidance, tools })

/** Approves the open window as the user would, once its Approve button could be enabled. */
const approveWindow = (fake: FakeChromeApi) =>
  Effect.gen(function* () {
    yield* TestClock.adjust("1 second")
    const ticket = fake.lastPopup().get("ticket")
    const decision = yield* UiRequests.use((ui) =>
      ui.handle({ kind: "approval.decide", ticket, approve: true }, "/approval.html")
    )
    assert.isTrue(decision.ok)
  })

const shownManifest = (fake: FakeChromeApi) =>
  Effect.promise(async () => (await fake.session.get(MANIFEST_VIEW_KEY))[MANIFEST_VIEW_KEY] as ManifestView | null)

/** One session.create from `page` answered by Core, approving a window when one opens. */
const create = (fake: FakeChromeApi, page: FakeWorkerPort, id: string, input: unknown, expectWindow: boolean) =>
  Effect.gen(function* () {
    const windows = fake.popups.length
    page.emit(request(id, "session.create", { input }))
    if (expectWindow) {
      yield* waitUntil(() => fake.popups.length === windows + 1, `the approval window for ${id}`)
      const view = yield* shownManifest(fake)
      yield* approveWindow(fake)
      return view
    }
    return null
  })

const answerCreate = (fake: FakeChromeApi, page: FakeWorkerPort, id: string, nth: number) =>
  Effect.gen(function* () {
    yield* waitUntil(() => fake.nativePorts.length >= 1, "the native link")
    const native = fake.nativePorts[0]!
    yield* waitUntil(
      () => native.posted.filter((m) => (m as { method?: string }).method === "session.create").length >= nth,
      `create #${nth}`
    )
    const asked = yield* lastHostRequest(native, "session.create")
    native.emit({ kind: "response", id: asked.id, ok: true, result: sessionInfo(SESSION, A) })
    assert.isTrue((yield* responseTo(page, id)).ok === true)
  })

describe("manifest approval", () => {
  it("hashes a manifest the same whatever order its tools and keys came in", async () => {
    const one = manifestOf(skills("Be brief.", [save, read]))
    const other = manifestOf({
      tools: [{ annotations: { readOnly: true }, argsSchema, description: "Reads the draft.", name: "read" }, save],
      guidance: "Be brief."
    })
    assert.strictEqual(await digestOf(one), await digestOf(other))
    assert.notStrictEqual(await digestOf(one), await digestOf(manifestOf(skills("Be brief!", [save, read]))))
  })

  it.effect("shows the manifest, asks again only when it changed, and lists the approved one", () =>
    run((fake) =>
      Effect.gen(function* () {
        const page = yield* connect(fake, A)
        const first = yield* create(fake, page, "c1", { skills: skills("Be brief.", [read]) }, true)
        assert.strictEqual(first?.manifest.guidance, "Be brief.")
        assert.deepStrictEqual(
          first?.manifest.tools.map((tool) => tool.name),
          ["read"]
        )
        assert.isUndefined(first?.change, "a first approval has nothing to compare with")
        yield* answerCreate(fake, page, "c1", 1)

        yield* create(fake, page, "c2", { skills: skills("Be brief.", [read]) }, false)
        yield* answerCreate(fake, page, "c2", 2)
        assert.strictEqual(fake.popups.length, 1, "the same manifest is not asked again")

        const changed = yield* create(fake, page, "c3", { skills: skills("Be brief. Save often.", [read, save]) }, true)
        assert.deepStrictEqual(changed?.change, { guidanceChanged: true, added: ["save"], removed: [], changed: [] })
        assert.isFalse(fake.lastPopup().get("askOrigin") === "true", "the origin itself stays approved")
        yield* answerCreate(fake, page, "c3", 3)

        yield* approve(B)
        const listing = yield* Effect.forkChild(
          UiRequests.use((ui) => ui.handle({ kind: "options.state" }, "/options.html"))
        )
        // Each of the extension's own calls has a port of its own; each of its requests gets the same answer.
        const answer = (method: string, result: unknown, requests: number) =>
          Effect.gen(function* () {
            const asks = (port: FakeWorkerPort) => port.posted.some((m) => (m as { method?: string }).method === method)
            yield* waitUntil(() => fake.nativePorts.some(asks), `the worker asks Core ${method}`)
            const native = fake.nativePorts.find(asks)!
            const asked = hostRequests(native).filter((request) => request.method === method)
            assert.strictEqual(asked.length, requests, `${method} requests on one port`)
            for (const { id } of asked) native.emit({ kind: "response", id, ok: true, result })
          })
        yield* answer("session.list", [], 1)
        // Core's policy is the one shown (the desktop app may have set it), and it becomes the extension's copy;
        // both sites' are asked on one port, not a native host each.
        const fromCore = { allowedProviders: ["ollama" as const], allowWorkspacePaths: false }
        yield* answer("origin.get_policy", fromCore, 2)
        const state = yield* Fiber.join(listing)
        assert.isTrue(state.ok)
        type Listed = { origin: string; manifest?: ManifestView; policy: unknown }
        const origins = (state as { result: { origins: Array<Listed> } }).result.origins
        assert.deepStrictEqual(origins.find((entry) => entry.origin === A)?.policy, fromCore)
        assert.deepStrictEqual(yield* Grants.use((grants) => grants.policyOf(A)), fromCore)
        const listed = origins.find((entry) => entry.origin === A)?.manifest?.manifest
        assert.deepStrictEqual(
          listed?.tools.map((tool) => tool.name),
          ["read", "save"]
        )
        assert.strictEqual(listed?.guidance, "Be brief. Save often.")
      })
    )
  )

  it.effect("a listing's late answer from Core never undoes a newer copy a create took meanwhile", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        // The n-th request of `method` the worker sent (any of its ports), answered with `result`.
        const answerNth = (method: string, nth: number, result: unknown) =>
          Effect.gen(function* () {
            const asked = () =>
              fake.nativePorts.flatMap((port) =>
                hostRequests(port)
                  .filter((request) => request.method === method)
                  .map((request) => ({ port, id: request.id }))
              )
            yield* waitUntil(() => asked().length >= nth, `the worker asks Core ${method} (${nth})`)
            const { port, id } = asked()[nth - 1]!
            port.emit({ kind: "response", id, ok: true, result })
          })
        const listing = () =>
          Effect.forkChild(UiRequests.use((ui) => ui.handle({ kind: "options.state" }, "/options.html")))
        const stale = { allowedProviders: ["ollama" as const], allowWorkspacePaths: false }
        const first = yield* listing()
        yield* answerNth("session.list", 1, [])
        yield* waitUntil(
          () => fake.nativePorts.some((port) => hostRequests(port).some((r) => r.method === "origin.get_policy")),
          "the listing asks Core for the policy"
        )
        // Meanwhile a create met Core's newer copy (the desktop app loosened it) and took it.
        const newer = { allowWorkspacePaths: true, maxLiveSessions: 3 }
        yield* Grants.use((grants) => grants.setPolicy(A, newer))
        yield* answerNth("origin.get_policy", 1, stale)
        assert.isTrue((yield* Fiber.join(first)).ok)
        assert.deepStrictEqual(yield* Grants.use((grants) => grants.policyOf(A)), newer)
        // With nothing newer in between, what the listing read becomes the copy, as before.
        const second = yield* listing()
        yield* answerNth("session.list", 2, [])
        yield* answerNth("origin.get_policy", 2, stale)
        assert.isTrue((yield* Fiber.join(second)).ok)
        assert.deepStrictEqual(yield* Grants.use((grants) => grants.policyOf(A)), stale)
      })
    )
  )
})
