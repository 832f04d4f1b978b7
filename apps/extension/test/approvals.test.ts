/**
 * The approval rules (approval/Approvals.ts) against a fake browser, on the test clock: one ask at a time, Approve
 * only after the delay, rejection remembered 10 minutes, the 60 s timeout, a closed window as rejection, and an ask
 * dropped when its page goes.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Origin } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import type { ApprovalAsk } from "../src/approval/Approvals/ApprovalWindow.ts"
import { Approvals } from "../src/approval/Approvals.ts"
import { Grants } from "../src/approval/Grants.ts"
import { Chrome } from "../src/browser/Chrome.ts"
import { FakeChromeApi, waitUntil } from "./FakeChromeApi.ts"

const A = "https://a.example" as Origin
const B = "http://127.0.0.1:8123" as Origin

const setup = () => {
  const fake = new FakeChromeApi()
  const layer = Layer.mergeAll(Approvals.layer, Grants.layer).pipe(
    Layer.provideMerge(Grants.layer),
    Layer.provideMerge(Chrome.layerWith(fake))
  )
  return { fake, layer }
}

const askFor = (origin: Origin, extra: Partial<ApprovalAsk> = {}): ApprovalAsk => ({
  origin,
  method: "session.create",
  askOrigin: true,
  provider: "codex",
  ...extra
})

/** Starts an ask and waits for its window; answers the fiber and the window's ticket. */
const openAsk = (fake: FakeChromeApi, ask: ApprovalAsk) =>
  Effect.gen(function* () {
    const approvals = yield* Approvals
    const before = fake.popups.length
    const fiber = yield* Effect.forkChild(Effect.exit(approvals.ask(ask)))
    yield* waitUntil(() => fake.popups.length === before + 1, "the approval window opens")
    return { fiber, ticket: fake.lastPopup().get("ticket")!, windowId: fake.popups.at(-1)!.windowId }
  })

const codeOf = (exit: { _tag: string; cause?: unknown }) => {
  if (exit._tag === "Success") return "success"
  const error = (exit as { cause: { reasons: ReadonlyArray<{ _tag: string; error?: { code: string } }> } }).cause
    .reasons[0]
  return error?._tag === "Fail" ? error.error?.code : error?._tag
}

describe("Approvals", () => {
  it.effect("shows the ask in its window, ignores an early Approve, and stores the grant on Approve", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const grants = yield* Grants
      const { fiber, ticket, windowId } = yield* openAsk(fake, askFor(A, { path: "/home/u/project" }))
      const query = fake.lastPopup()
      assert.strictEqual(query.get("origin"), A)
      assert.strictEqual(query.get("provider"), "codex")
      assert.strictEqual(query.get("path"), "/home/u/project")
      assert.isTrue(fake.popups[0]!.path.startsWith("approval.html?"))
      assert.isFalse(yield* approvals.decide(ticket, true), "Approve before the button could be enabled")
      assert.isFalse(yield* approvals.decide("not-the-ticket", false))
      yield* TestClock.adjust("1 second")
      assert.isTrue(yield* approvals.decide(ticket, true))
      assert.strictEqual(codeOf(yield* Fiber.join(fiber)), "success")
      assert.isTrue(yield* grants.isApproved(A))
      assert.isTrue(yield* grants.hasPath(A, "/home/u/project"))
      assert.include(fake.closedWindows, windowId)
    }).pipe(Effect.provide(layer))
  })

  it.effect("lets one origin wait at a time: another gets APPROVAL_PENDING and no window", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const { fiber, ticket } = yield* openAsk(fake, askFor(A))
      const second = yield* Effect.exit(approvals.ask(askFor(B)))
      assert.strictEqual(codeOf(second), "APPROVAL_PENDING")
      assert.strictEqual(fake.popups.length, 1)
      yield* approvals.decide(ticket, false)
      yield* Fiber.join(fiber)
      // Once the first is answered, the next may ask.
      const next = yield* openAsk(fake, askFor(B))
      yield* Fiber.interrupt(next.fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("remembers a rejection for 10 minutes without opening a window, then asks again", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const { fiber, ticket } = yield* openAsk(fake, askFor(A))
      yield* approvals.decide(ticket, false)
      assert.strictEqual(codeOf(yield* Fiber.join(fiber)), "APPROVAL_REJECTED")
      yield* TestClock.adjust("9 minutes")
      assert.strictEqual(codeOf(yield* Effect.exit(approvals.ask(askFor(A)))), "APPROVAL_REJECTED")
      assert.strictEqual(fake.popups.length, 1, "no second window while the rejection is remembered")
      // The memory is per origin: another origin still asks.
      const other = yield* openAsk(fake, askFor(B))
      yield* Fiber.interrupt(other.fiber)
      yield* TestClock.adjust("61 seconds")
      const again = yield* openAsk(fake, askFor(A))
      yield* Fiber.interrupt(again.fiber)
      assert.strictEqual(fake.popups.length, 3)
    }).pipe(Effect.provide(layer))
  })

  it.effect("times out after 60 s with APPROVAL_TIMEOUT, closes the window, and does not remember it", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const grants = yield* Grants
      const { fiber, windowId } = yield* openAsk(fake, askFor(A))
      yield* TestClock.adjust("59 seconds")
      assert.isUndefined(fiber.pollUnsafe(), "still waiting at 59 s")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(codeOf(yield* Fiber.join(fiber)), "APPROVAL_TIMEOUT")
      assert.include(fake.closedWindows, windowId)
      assert.isFalse(yield* grants.isApproved(A))
      const again = yield* openAsk(fake, askFor(A))
      yield* Fiber.interrupt(again.fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("takes a window closed without a decision as a rejection", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const { fiber, windowId } = yield* openAsk(fake, askFor(A))
      yield* approvals.windowClosed(windowId + 1)
      assert.isUndefined(fiber.pollUnsafe(), "another window closing changes nothing")
      yield* approvals.windowClosed(windowId)
      assert.strictEqual(codeOf(yield* Fiber.join(fiber)), "APPROVAL_REJECTED")
    }).pipe(Effect.provide(layer))
  })

  it.effect("drops a pending ask when its page goes: the window closes and the slot frees", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const { fiber, ticket, windowId } = yield* openAsk(fake, askFor(A))
      yield* Fiber.interrupt(fiber)
      assert.include(fake.closedWindows, windowId)
      assert.isFalse(yield* approvals.decide(ticket, false), "the dropped ask's ticket is dead")
      const next = yield* openAsk(fake, askFor(B))
      yield* Fiber.interrupt(next.fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("remembers a rejected path per origin and path, not for the origin", () => {
    const { fake, layer } = setup()
    return Effect.gen(function* () {
      const approvals = yield* Approvals
      const pathAsk = askFor(A, { askOrigin: false, path: "/srv/one" })
      const { fiber, ticket } = yield* openAsk(fake, pathAsk)
      assert.strictEqual(fake.lastPopup().get("askOrigin"), "false")
      yield* approvals.decide(ticket, false)
      assert.strictEqual(codeOf(yield* Fiber.join(fiber)), "APPROVAL_REJECTED")
      assert.strictEqual(codeOf(yield* Effect.exit(approvals.ask(pathAsk))), "APPROVAL_REJECTED")
      const otherPath = yield* openAsk(fake, askFor(A, { askOrigin: false, path: "/srv/two" }))
      yield* Fiber.interrupt(otherPath.fiber)
    }).pipe(Effect.provide(layer))
  })
})
