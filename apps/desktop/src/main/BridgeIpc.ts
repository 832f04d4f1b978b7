/**
 * BridgeIpc — the bridge served over Electron IPC: `invoke(call, request)` answered with `Bridge.call`, and each
 * `send(watch, {id, request})` a `Bridge.watch` whose encoded items go back to the page that asked, as
 * `{id, item}`, until the stream ends, the page sends `unwatch` for it, or the page goes. The envelope is decoded
 * here (a malformed one opens nothing); the request inside it is the bridge's to decode. The channel names are the
 * preload's (preload/Channels.ts).
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Bridge, type BridgeShape } from "../bridge/Bridge.ts"
import { CHANNELS } from "../preload/Channels.ts"
import { ElectronIpc, type IpcMessage, type IpcSender } from "./electron/ElectronIpc.ts"

const WatchId = Schema.String.check(Schema.isBetweenLength(1, 64))
const decodeOpen = Schema.decodeUnknownOption(Schema.Struct({ id: WatchId, request: Schema.Unknown }))
const decodeClose = Schema.decodeUnknownOption(Schema.Struct({ id: WatchId }))

interface Watches {
  readonly fibers: FiberMap.FiberMap<string>
  /** The keys of each page's open watches, so a page that goes takes its watches with it. */
  readonly byPage: Map<number, Set<string>>
}

const keyOf = (sender: IpcSender, id: string) => `${sender.id}/${id}`

const forget = (watches: Watches, sender: IpcSender) => {
  const keys = watches.byPage.get(sender.id)
  watches.byPage.delete(sender.id)
  Effect.runFork(Effect.forEach(keys ?? [], (key) => FiberMap.remove(watches.fibers, key), { discard: true }))
}

const open = (bridge: BridgeShape, watches: Watches) => (message: IpcMessage) => {
  const decoded = decodeOpen(message.payload)
  if (decoded._tag === "None") return Effect.logWarning("ignored a watch request that is not {id, request}")
  const { id, request } = decoded.value
  const { sender } = message
  let keys = watches.byPage.get(sender.id)
  if (keys === undefined) {
    keys = new Set()
    watches.byPage.set(sender.id, keys)
    sender.onGone(() => forget(watches, sender))
  }
  const key = keyOf(sender, id)
  keys.add(key)
  const pushed = bridge
    .watch(request)
    .pipe(Stream.runForEach((item) => Effect.sync(() => sender.send(CHANNELS.event, { id, item }))))
  return FiberMap.run(watches.fibers, key, pushed.pipe(Effect.ensuring(Effect.sync(() => keys.delete(key)))))
}

const close = (watches: Watches) => (message: IpcMessage) => {
  const decoded = decodeClose(message.payload)
  return decoded._tag === "None"
    ? Effect.void
    : FiberMap.remove(watches.fibers, keyOf(message.sender, decoded.value.id))
}

/** Serves the bridge for the caller's scope; closing it removes the handler and interrupts every watch. */
export const serveBridge = Effect.gen(function* () {
  const ipc = yield* ElectronIpc
  const bridge = yield* Bridge
  yield* ipc.handle(CHANNELS.call, bridge.call)
  const watches: Watches = { fibers: yield* FiberMap.make<string>(), byPage: new Map() }
  yield* ipc.messages(CHANNELS.watch).pipe(Stream.runForEach(open(bridge, watches)), Effect.forkScoped)
  yield* ipc.messages(CHANNELS.unwatch).pipe(Stream.runForEach(close(watches)), Effect.forkScoped)
}).pipe(Effect.withSpan("BridgeIpc.serveBridge"))
