/**
 * A page port end to end through the worker's real services, over a fake browser: the approval gate, the lazy
 * native link (never opened for an unapproved origin), forwarding with the page's origin and `claimTools`, routing of
 * host messages to the right page, chunked answers, native disconnects mapped to their codes, page ports going away,
 * and revocation.
 */
import { assert, describe, it } from "@effect/vitest"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { Grants } from "../src/approval/Grants.ts"
import { UiRequests } from "../src/ui/UiRequests.ts"
import { type FakeWorkerPort, waitUntil } from "./FakeChromeApi.ts"
import {
  A,
  approve,
  B,
  chat,
  connect,
  hostRequests,
  lastHostRequest,
  OTHER_SESSION,
  posted,
  request,
  responseTo,
  run,
  SESSION,
  sessionInfo,
  subscribedPage,
  waitUntilResume
} from "./PagePort.ts"

describe("a page port", () => {
  it.effect("answers hello, queued before the worker was ready, with the extension's version", () =>
    run((fake) =>
      Effect.gen(function* () {
        const page = yield* connect(fake, A, [
          request("h1", "extension.hello", { protocolVersion: PROTOCOL_VERSION, sdkVersion: "0.1.0" }),
          request("h2", "extension.hello", { protocolVersion: PROTOCOL_VERSION + 1, sdkVersion: "9.0.0" })
        ])
        const ok = yield* responseTo(page, "h1")
        assert.deepStrictEqual(ok.result, { protocolVersion: PROTOCOL_VERSION, extensionVersion: "9.8.7" })
        const mismatch = yield* responseTo(page, "h2")
        assert.strictEqual(mismatch.error?.code, "PROTOCOL_VERSION_MISMATCH")
        assert.strictEqual(fake.nativePorts.length, 0)
      })
    )
  )

  it.effect("refuses every other method of an unapproved origin without waking the native host", () =>
    run((fake) =>
      Effect.gen(function* () {
        const page = yield* connect(fake, A)
        const calls: ReadonlyArray<readonly [string, unknown]> = [
          ["session.subscribe", { sessionId: SESSION, afterSeq: 0 }],
          ["session.send_text", { sessionId: SESSION, text: "x" }],
          ["session.end", { sessionId: SESSION }],
          ["session.cancel", { sessionId: SESSION }]
        ]
        const methods = calls.map(([method]) => method)
        calls.forEach(([method, params], index) => {
          page.emit(request(`r${index}`, method, params))
        })
        for (let index = 0; index < methods.length; index++) {
          const response = yield* responseTo(page, `r${index}`)
          assert.strictEqual(response.error?.code, "APPROVAL_REQUIRED", methods[index])
        }
        page.emit(request("s1", "extension.approval_status"))
        const status = yield* responseTo(page, "s1")
        assert.deepStrictEqual(status.result, { installed: true, approved: false, origin: A, appConnected: false })
        assert.strictEqual(fake.nativePorts.length, 0, "an unapproved origin never reaches the native host")
        assert.strictEqual(fake.popups.length, 0)
      })
    )
  )

  it.effect("asks approval for providers.list, settings.get and request_approval, then answers them", () =>
    run((fake) =>
      Effect.gen(function* () {
        const page = yield* connect(fake, A)
        page.emit(request("p1", "providers.list"))
        yield* waitUntil(() => fake.popups.length === 1, "the approval window")
        assert.strictEqual(fake.lastPopup().get("method"), "providers.list")
        // Queued behind the open window (one origin asks once), answered after the user's decision.
        page.emit(request("g1", "settings.get"))
        page.emit(request("a1", "extension.request_approval"))
        assert.strictEqual(fake.nativePorts.length, 0, "nothing reaches the host before the user approves")
        yield* TestClock.adjust("1 second")
        const decision = yield* UiRequests.use((requests) =>
          requests.handle(
            { kind: "approval.decide", ticket: fake.lastPopup().get("ticket"), approve: true },
            "/approval.html"
          )
        )
        assert.isTrue(decision.ok)
        yield* waitUntil(() => fake.nativePorts.length === 1, "the native link opens")
        const native = fake.nativePorts[0]!
        const listed = yield* lastHostRequest(native, "providers.list")
        native.emit({ kind: "response", id: listed.id, ok: true, result: [] })
        assert.deepStrictEqual((yield* responseTo(page, "p1")).result, [])
        // Two reach the host: the page's own, and request_approval's probe of Core (appConnected).
        yield* waitUntil(() => hostRequests(native).filter((r) => r.method === "settings.get").length === 2, "both")
        for (const asked of hostRequests(native).filter((r) => r.method === "settings.get")) {
          assert.strictEqual(asked.origin, A)
          native.emit({ kind: "response", id: asked.id, ok: true, result: {} })
        }
        const status = yield* responseTo(page, "a1")
        assert.isTrue((status.result as { approved: boolean }).approved)
        assert.strictEqual(fake.popups.length, 1, "one window for all three")
      })
    )
  )

  it.effect("asks approval for create_session, then forwards it with the origin and claims its tools", () =>
    run((fake) =>
      Effect.gen(function* () {
        const page = yield* connect(fake, A)
        page.emit(request("c1", "session.create", { input: { provider: "codex" } }))
        yield* waitUntil(() => fake.popups.length === 1, "the approval window")
        assert.strictEqual(fake.nativePorts.length, 0, "nothing reaches the host before the user approves")
        yield* TestClock.adjust("1 second")
        const decision = yield* UiRequests.use((requests) =>
          requests.handle(
            { kind: "approval.decide", ticket: fake.lastPopup().get("ticket"), approve: true },
            "/approval.html"
          )
        )
        assert.isTrue(decision.ok)
        yield* waitUntil(() => fake.nativePorts.length === 1, "the native link opens")
        const native = fake.nativePorts[0]!
        assert.strictEqual(native.name, "com.pedelec.host")
        const create = yield* lastHostRequest(native, "session.create")
        assert.strictEqual(create.origin, A)
        assert.deepStrictEqual(create.params, { input: { provider: "codex" } })
        assert.notStrictEqual(create.id, "c1", "native ids are the worker's own")
        native.emit({ kind: "response", id: create.id, ok: true, result: sessionInfo(SESSION, A) })
        const created = yield* responseTo(page, "c1")
        assert.isTrue(created.ok)
        assert.strictEqual((created.result as { sessionId: string }).sessionId, SESSION)

        page.emit(request("sub", "session.subscribe", { sessionId: SESSION, afterSeq: 0 }))
        const subscribe = yield* lastHostRequest(native, "session.subscribe")
        assert.deepStrictEqual(subscribe.params, { sessionId: SESSION, afterSeq: 0, claimTools: true })
        assert.strictEqual(fake.nativePorts.length, 1, "one native port per page port")
      })
    )
  )

  it.effect("a page that resumed without claimTools subscribes without claiming; with claimTools it claims", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const watcher = yield* connect(fake, A)
        const owner = yield* connect(fake, A)
        watcher.emit(request("w1", "session.resume", { sessionId: SESSION, claimTools: false }))
        owner.emit(request("o1", "session.resume", { sessionId: SESSION, claimTools: true }))
        yield* waitUntil(() => fake.nativePorts.length === 2, "two native links")
        for (const [page, native, id] of [
          [watcher, fake.nativePorts[0]!, "w1"],
          [owner, fake.nativePorts[1]!, "o1"]
        ] as const) {
          const resume = yield* lastHostRequest(native, "session.resume")
          native.emit({ kind: "response", id: resume.id, ok: true, result: sessionInfo(SESSION, A) })
          yield* responseTo(page, id)
          page.emit(request(`${id}-sub`, "session.subscribe", { sessionId: SESSION, afterSeq: 3 }))
        }
        const watching = yield* lastHostRequest(fake.nativePorts[0]!, "session.subscribe")
        const owning = yield* lastHostRequest(fake.nativePorts[1]!, "session.subscribe")
        assert.isFalse(watching.params.claimTools)
        assert.isTrue(owning.params.claimTools)
        assert.strictEqual(fake.popups.length, 0, "an approved origin is not asked again")
        // The owner lost the claim to another tab and resumes without claiming: this port claims no more.
        owner.emit(request("o2", "session.resume", { sessionId: SESSION, claimTools: false }))
        const again = yield* waitUntilResume(fake.nativePorts[1]!, 2)
        fake.nativePorts[1]!.emit({ kind: "response", id: again.id, ok: true, result: sessionInfo(SESSION, A) })
        yield* responseTo(owner, "o2")
        owner.emit(request("o2-sub", "session.subscribe", { sessionId: SESSION, afterSeq: 4 }))
        yield* waitUntil(
          () => hostRequests(fake.nativePorts[1]!).filter((r) => r.method === "session.subscribe").length === 2,
          "the second subscribe"
        )
        assert.isFalse((yield* lastHostRequest(fake.nativePorts[1]!, "session.subscribe")).params.claimTools)
      })
    )
  )

  it.effect("routes each host message to its own page, and only events of the subscribed session", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        yield* approve(B)
        const pageA = yield* connect(fake, A)
        const pageB = yield* connect(fake, B)
        pageA.emit(request("same-id", "session.subscribe", { sessionId: SESSION, afterSeq: 0 }))
        pageB.emit(request("same-id", "providers.list"))
        yield* waitUntil(() => fake.nativePorts.length === 2, "two native links")
        const [nativeA, nativeB] = fake.nativePorts as [FakeWorkerPort, FakeWorkerPort]
        const subscription = yield* lastHostRequest(nativeA, "session.subscribe")
        const providers = yield* lastHostRequest(nativeB, "providers.list")
        assert.strictEqual(subscription.origin, A)
        assert.strictEqual(providers.origin, B)
        nativeB.emit({ kind: "response", id: providers.id, ok: true, result: [] })
        nativeA.emit({ kind: "response", id: subscription.id, ok: true, result: {} })
        nativeA.emit({ kind: "event", subscription: subscription.id, event: chat(SESSION, 1) })
        // Not this subscription's session, and a subscription this page never made: both dropped.
        nativeA.emit({ kind: "event", subscription: subscription.id, event: chat(OTHER_SESSION, 1) })
        nativeA.emit({ kind: "event", subscription: "n99", event: chat(SESSION, 2) })
        nativeA.emit({ kind: "event", subscription: subscription.id, event: chat(SESSION, 3) })
        yield* waitUntil(() => posted(pageA).filter((m) => m.kind === "event").length === 2, "two events on A")
        assert.deepStrictEqual(
          posted(pageA)
            .filter((m) => m.kind === "event")
            .map((m) => (m.event as { seq: number }).seq),
          [1, 3]
        )
        assert.deepStrictEqual((yield* responseTo(pageB, "same-id")).result, [])
        assert.isEmpty(
          posted(pageB).filter((m) => m.kind === "event"),
          "B sees nothing of A's session"
        )
        assert.deepStrictEqual((yield* responseTo(pageA, "same-id")).result, {})

        // Ended with an error: the page hears it. Ended cleanly: nothing (Core's `ended` event said it).
        nativeA.emit({
          kind: "subscription_ended",
          subscription: subscription.id,
          sessionId: SESSION,
          error: { code: "EVENT_REPLAY_GAP", message: "gap", retryable: false, source: "core" }
        })
        yield* waitUntil(() => posted(pageA).some((m) => m.kind === "notice"), "a notice")
        const notice = posted(pageA).find((m) => m.kind === "notice")!
        assert.strictEqual(notice.sessionId, SESSION)
        assert.strictEqual(notice.error?.code, "EVENT_REPLAY_GAP")
      })
    )
  )

  it.effect("reassembles a chunked answer, and answers a broken one with PROTOCOL_ERROR", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const page = yield* connect(fake, A)
        page.emit(request("big", "providers.list"))
        page.emit(request("broken", "settings.get"))
        yield* waitUntil(() => fake.nativePorts.length === 1, "the native link")
        const native = fake.nativePorts[0]!
        const list = yield* lastHostRequest(native, "providers.list")
        const settings = yield* lastHostRequest(native, "settings.get")
        const text = JSON.stringify({ kind: "response", id: list.id, ok: true, result: ["x".repeat(3000)] })
        const parts = [text.slice(0, 1000), text.slice(1000, 2000), text.slice(2000)]
        parts.forEach((data, index) => {
          native.emit({ kind: "chunk", messageId: "m1", index, count: 3, data })
        })
        assert.deepStrictEqual((yield* responseTo(page, "big")).result, ["x".repeat(3000)])

        const broken = JSON.stringify({ kind: "response", id: settings.id, ok: true, result: { a: 1 } })
        native.emit({ kind: "chunk", messageId: "m2", index: 0, count: 3, data: broken.slice(0, 40) })
        native.emit({ kind: "chunk", messageId: "m2", index: 2, count: 3, data: broken.slice(60) })
        const refused = yield* responseTo(page, "broken")
        assert.strictEqual(refused.error?.code, "PROTOCOL_ERROR")
        assert.strictEqual(posted(page).filter((m) => m.id === "broken").length, 1, "answered once")
      })
    )
  )

  it.effect("maps a native port that dies before any frame to NATIVE_HOST_UNAVAILABLE, and reconnects after", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const page = yield* connect(fake, A)
        page.emit(request("p1", "providers.list"))
        yield* waitUntil(() => fake.nativePorts.length === 1, "the native link")
        fake.nativePorts[0]!.drop("Specified native messaging host not found.")
        const failed = yield* responseTo(page, "p1")
        assert.strictEqual(failed.error?.code, "NATIVE_HOST_UNAVAILABLE")
        assert.deepStrictEqual((failed.error as { details?: unknown }).details, {
          browserMessage: "Specified native messaging host not found."
        })
        assert.isFalse(page.disconnected, "the page port stays open")
        page.emit(request("p2", "providers.list"))
        yield* waitUntil(() => fake.nativePorts.length === 2, "a new native link")
        const retry = yield* lastHostRequest(fake.nativePorts[1]!, "providers.list")
        fake.nativePorts[1]!.emit({ kind: "response", id: retry.id, ok: true, result: [] })
        assert.isTrue((yield* responseTo(page, "p2")).ok)
      })
    )
  )

  it.effect("maps a native port that dies later to NATIVE_CONNECTION_CLOSED for requests and subscriptions", () =>
    run((fake) =>
      Effect.gen(function* () {
        const { page, native } = yield* subscribedPage(fake)
        page.emit(request("t1", "session.send_text", { sessionId: SESSION, text: "hi" }))
        yield* lastHostRequest(native, "session.send_text")
        native.drop("Native host has exited.")
        const failed = yield* responseTo(page, "t1")
        assert.strictEqual(failed.error?.code, "NATIVE_CONNECTION_CLOSED")
        yield* waitUntil(() => posted(page).some((m) => m.kind === "notice"), "a notice for the subscription")
        const notice = posted(page).find((m) => m.kind === "notice")!
        assert.strictEqual(notice.sessionId, SESSION)
        assert.strictEqual(notice.error?.code, "NATIVE_CONNECTION_CLOSED")
      })
    )
  )

  it.effect("asks a separate grant for a workspace path, once per origin and path", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const page = yield* connect(fake, A)
        const input = { provider: "claude", workspace: { path: "/home/u/project" } }
        page.emit(request("c1", "session.create", { input }))
        yield* waitUntil(() => fake.popups.length === 1, "the path grant window")
        assert.strictEqual(fake.lastPopup().get("path"), "/home/u/project")
        assert.strictEqual(fake.lastPopup().get("askOrigin"), "false")
        yield* TestClock.adjust("1 second")
        yield* UiRequests.use((requests) =>
          requests.handle(
            { kind: "approval.decide", ticket: fake.lastPopup().get("ticket"), approve: true },
            "/approval.html"
          )
        )
        const native = yield* Effect.andThen(
          waitUntil(() => fake.nativePorts.length === 1, "the native link"),
          Effect.sync(() => fake.nativePorts[0]!)
        )
        const first = yield* lastHostRequest(native, "session.create")
        native.emit({ kind: "response", id: first.id, ok: true, result: sessionInfo(SESSION, A) })
        yield* responseTo(page, "c1")
        page.emit(request("c2", "session.create", { input }))
        yield* waitUntil(() => hostRequests(native).filter((r) => r.method === "session.create").length === 2, "c2")
        assert.strictEqual(fake.popups.length, 1, "the granted path is not asked again")
        page.emit(request("c3", "session.create", { input: { workspace: { path: "/home/u/other" } } }))
        yield* waitUntil(() => fake.popups.length === 2, "another path asks again")
      })
    )
  )

  it.effect("a page going away closes its native link and drops its pending approval", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(B)
        const approved = yield* connect(fake, B)
        approved.emit(request("p1", "providers.list"))
        yield* waitUntil(() => fake.nativePorts.length === 1, "the native link")
        approved.drop()
        yield* waitUntil(() => fake.nativePorts[0]!.disconnected, "the native port closes with the page")

        const asking = yield* connect(fake, A)
        asking.emit(request("c1", "session.create", { input: {} }))
        yield* waitUntil(() => fake.popups.length === 1, "the approval window")
        asking.drop()
        yield* waitUntil(() => fake.closedWindows.includes(fake.popups[0]!.windowId), "the window closes")
        const next = yield* connect(fake, "https://next.example")
        next.emit(request("c2", "session.create", { input: {} }))
        yield* waitUntil(() => fake.popups.length === 2, "the next origin may ask at once")
      })
    )
  )

  it.effect("says appConnected from a forwarded get_settings for an approved origin", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const page = yield* connect(fake, A)
        page.emit(request("s1", "extension.approval_status"))
        yield* waitUntil(() => fake.nativePorts.length === 1, "the probe's native link")
        const probe = yield* lastHostRequest(fake.nativePorts[0]!, "settings.get")
        fake.nativePorts[0]!.emit({ kind: "response", id: probe.id, ok: true, result: {} })
        const status = yield* responseTo(page, "s1")
        assert.deepStrictEqual(status.result, { installed: true, approved: true, origin: A, appConnected: true })
        assert.isFalse(
          posted(page).some((m) => m.id === probe.id),
          "the probe's own answer is not forwarded"
        )
      })
    )
  )

  it.effect("revocation removes the grants, asks Core to end the sessions, and disconnects with a notice", () =>
    run((fake) =>
      Effect.gen(function* () {
        yield* approve(A)
        const page = yield* connect(fake, A)
        const bystander = yield* connect(fake, B)
        const revoking = yield* Effect.forkChild(
          UiRequests.use((requests) => requests.handle({ kind: "origin.revoke", origin: A }, "/options.html"))
        )
        yield* waitUntil(() => fake.nativePorts.length === 1, "the revocation's native link")
        const revoke = yield* lastHostRequest(fake.nativePorts[0]!, "origin.revoke")
        assert.deepStrictEqual(revoke.params, { origin: A })
        assert.isFalse(yield* Grants.use((grants) => grants.isApproved(A)), "the grant goes first")
        fake.nativePorts[0]!.emit({ kind: "response", id: revoke.id, ok: true, result: { ended: 2 } })
        yield* waitUntil(() => page.disconnected, "the page port is disconnected")
        const notice = posted(page).at(-1)!
        assert.strictEqual(notice.kind, "notice")
        assert.strictEqual(notice.error?.code, "APPROVAL_REQUIRED")
        assert.isFalse(bystander.disconnected)
        const answer = yield* Fiber.join(revoking)
        assert.deepStrictEqual(answer, { ok: true, result: { ended: 2, disconnectedPorts: 1 } })
      })
    )
  )

  it.effect("refuses UI messages from the wrong page or of the wrong shape", () =>
    run(() =>
      Effect.gen(function* () {
        const requests = yield* UiRequests
        const fromOptions = yield* requests.handle(
          { kind: "approval.decide", ticket: "t", approve: true },
          "/options.html"
        )
        assert.isFalse(fromOptions.ok)
        const fromApproval = yield* requests.handle({ kind: "options.state" }, "/approval.html")
        assert.isFalse(fromApproval.ok)
        const malformed = yield* requests.handle(
          { kind: "origin.revoke", origin: "javascript:alert(1)" },
          "/options.html"
        )
        assert.isFalse(malformed.ok)
      })
    )
  )
})
