// The bridge over Electron IPC, with ElectronIpc's test layer as the page's side: a call answered by Bridge.call, a
// watch's items pushed to the page that opened it, a watch stopped by unwatch or by its page going, a malformed
// envelope opening nothing, and the handler gone once the scope closes.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Bridge, type BridgeShape } from "../../src/bridge/Bridge.ts"
import { serveBridge } from "../../src/main/BridgeIpc.ts"
import { ElectronIpc, makeTestIpc, makeTestPage } from "../../src/main/electron/ElectronIpc.ts"
import { CHANNELS } from "../../src/preload/Channels.ts"
import { eventually } from "./support/Eventually.ts"

/** Counts the watches still running, so a test sees one stop. */
const fakeBridge = () => {
  const running = { count: 0 }
  const bridge: BridgeShape = {
    call: (request) => Effect.succeed({ ok: true, result: request }),
    watch: (request) =>
      Stream.make({ kind: "item", item: request }).pipe(
        Stream.concat(request === "forever" ? Stream.never : Stream.make({ kind: "end" })),
        Stream.ensuring(Effect.sync(() => running.count--)),
        Stream.onStart(Effect.sync(() => running.count++))
      ) as ReturnType<BridgeShape["watch"]>
  }
  return { bridge, running }
}

const serve = Effect.gen(function* () {
  const ipc = yield* makeTestIpc()
  const { bridge, running } = fakeBridge()
  const scope = yield* Scope.make()
  yield* serveBridge.pipe(
    Effect.provide(Layer.merge(ElectronIpc.layerTest(ipc), Layer.succeed(Bridge, bridge))),
    Scope.provide(scope)
  )
  return { ipc, running, close: Scope.close(scope, Exit.void) }
})

describe("BridgeIpc", () => {
  it.live("answers a call with the bridge's encoded response", () =>
    Effect.gen(function* () {
      const { ipc, close } = yield* serve
      assert.deepStrictEqual(yield* ipc.invoke(CHANNELS.call, { method: "app.info", params: {} }), {
        ok: true,
        result: { method: "app.info", params: {} }
      })
      yield* close
      assert.deepStrictEqual(ipc.handled(), [], "the handler goes with the scope")
    })
  )

  it.live("pushes a watch's items, its end included, to the page that opened it, tagged with its id", () =>
    Effect.gen(function* () {
      const { ipc } = yield* serve
      const page = makeTestPage(7)
      const other = makeTestPage(8)
      yield* ipc.send(CHANNELS.watch, { id: "w1", request: "events" }, page)
      yield* eventually(() => page.received.length === 2, "two items")
      assert.deepStrictEqual(page.received, [
        { channel: CHANNELS.event, payload: { id: "w1", item: { kind: "item", item: "events" } } },
        { channel: CHANNELS.event, payload: { id: "w1", item: { kind: "end" } } }
      ])
      assert.deepStrictEqual(other.received, [])
    })
  )

  it.live("unwatch stops that watch, and a page that goes takes its watches with it", () =>
    Effect.gen(function* () {
      const { ipc, running } = yield* serve
      const page = makeTestPage(1)
      yield* ipc.send(CHANNELS.watch, { id: "a", request: "forever" }, page)
      yield* ipc.send(CHANNELS.watch, { id: "b", request: "forever" }, page)
      yield* eventually(() => running.count === 2, "two watches")
      yield* ipc.send(CHANNELS.unwatch, { id: "a" }, page)
      yield* eventually(() => running.count === 1, "one stopped")
      page.gone()
      yield* eventually(() => running.count === 0, "the page's watches stopped")
    })
  )

  it.live("a malformed watch envelope opens nothing", () =>
    Effect.gen(function* () {
      const { ipc, running } = yield* serve
      const page = makeTestPage(1)
      yield* ipc.send(CHANNELS.watch, { request: "forever" }, page)
      yield* ipc.send(CHANNELS.watch, "forever", page)
      yield* ipc.send(CHANNELS.watch, { id: "ok", request: "events" }, page)
      yield* eventually(() => page.received.length === 2, "the good watch's items")
      assert.strictEqual(running.count, 0)
    })
  )
})
