/**
 * ElectronIpc — `ipcMain` as a service: a channel answered for the caller's scope (`ipcMain.handle`, removed when the
 * scope closes) and a channel's messages as a stream, each with the page that sent it so an answer can be pushed
 * back and work stopped when that page goes. Payloads stay `unknown`: decoding them is the bridge's job, and which
 * channel means what is BridgeIpc's.
 */

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { IpcMainEvent, WebContents } from "electron"
import { ElectronError } from "./ElectronError.ts"

/** The page a message came from. */
export interface IpcSender {
  /** Stable for the page's life (Electron's webContents id). */
  readonly id: number
  readonly send: (channel: string, payload: unknown) => void
  /** Runs `f` once, when the page is gone (its window destroyed or its renderer crashed). */
  readonly onGone: (f: () => void) => void
}

export interface IpcMessage {
  readonly payload: unknown
  readonly sender: IpcSender
}

export interface ElectronIpcShape {
  /** Answers `invoke(channel, payload)` with `answer(payload)` while the caller's scope is open. */
  readonly handle: (
    channel: string,
    answer: (payload: unknown) => Effect.Effect<unknown>
  ) => Effect.Effect<void, ElectronError, Scope.Scope>
  /** Every `send(channel, payload)` from any page, while the stream runs. */
  readonly messages: (channel: string) => Stream.Stream<IpcMessage>
}

const senderOf = (contents: WebContents): IpcSender => ({
  id: contents.id,
  send: (channel, payload) => {
    if (!contents.isDestroyed()) contents.send(channel, payload)
  },
  onGone: (f) => {
    contents.once("destroyed", f)
    contents.once("render-process-gone", f)
  }
})

export class ElectronIpc extends Context.Service<ElectronIpc, ElectronIpcShape>()("pedelec/desktop/ElectronIpc") {
  static readonly layer = Layer.effect(
    ElectronIpc,
    Effect.gen(function* () {
      const { ipcMain } = yield* Effect.promise(() => import("electron"))
      return ElectronIpc.of({
        handle: (channel, answer) =>
          Effect.acquireRelease(
            Effect.try({
              // Throws when the channel already has a handler: two bridges on one channel is our bug.
              try: () => ipcMain.handle(channel, (_event, payload: unknown) => Effect.runPromise(answer(payload))),
              catch: (cause) => ElectronError.internal("ipcMain.handle", cause, "Restart the desktop app.")
            }),
            () => Effect.sync(() => ipcMain.removeHandler(channel))
          ),
        messages: (channel) =>
          Stream.callback<IpcMessage>((queue) =>
            Effect.acquireRelease(
              Effect.sync(() => {
                const listener = (event: IpcMainEvent, payload: unknown) =>
                  Queue.offerUnsafe(queue, { payload, sender: senderOf(event.sender) })
                ipcMain.on(channel, listener)
                return listener
              }),
              (listener) => Effect.sync(() => ipcMain.off(channel, listener))
            )
          )
      })
    })
  )

  static readonly layerTest = (ipc: TestIpc) => Layer.succeed(ElectronIpc, ipc)
}

/** IPC as a test drives it: a page invoking a handled channel, sending a message, receiving what main pushed. */
export interface TestIpc extends ElectronIpcShape {
  readonly invoke: (channel: string, payload: unknown) => Effect.Effect<unknown>
  readonly send: (channel: string, payload: unknown, page?: TestPage) => Effect.Effect<void>
  readonly handled: () => ReadonlyArray<string>
}

/** A page main can push to; `gone()` is its window closing. */
export interface TestPage extends IpcSender {
  readonly received: Array<{ readonly channel: string; readonly payload: unknown }>
  readonly gone: () => void
}

export const makeTestPage = (id = 1): TestPage => {
  const received: Array<{ readonly channel: string; readonly payload: unknown }> = []
  const watchers: Array<() => void> = []
  return {
    id,
    received,
    send: (channel, payload) => void received.push({ channel, payload }),
    onGone: (f) => void watchers.push(f),
    gone: () => {
      for (const f of watchers.splice(0)) f()
    }
  }
}

export const makeTestIpc = (): Effect.Effect<TestIpc> =>
  Effect.gen(function* () {
    const handlers = new Map<string, (payload: unknown) => Effect.Effect<unknown>>()
    const queues = new Map<string, Queue.Queue<IpcMessage>>()
    const queueOf = (channel: string) => {
      const existing = queues.get(channel)
      if (existing !== undefined) return existing
      const created = Effect.runSync(Queue.unbounded<IpcMessage>())
      queues.set(channel, created)
      return created
    }
    return {
      handle: (channel, answer) =>
        Effect.acquireRelease(
          Effect.sync(() => void handlers.set(channel, answer)),
          () => Effect.sync(() => void handlers.delete(channel))
        ),
      messages: (channel) => Stream.fromQueue(queueOf(channel)),
      invoke: (channel, payload) =>
        Effect.suspend(() => handlers.get(channel)?.(payload) ?? Effect.die(new Error(`${channel} is not handled`))),
      send: (channel, payload, page = makeTestPage()) =>
        Queue.offer(queueOf(channel), { payload, sender: page }).pipe(Effect.asVoid),
      handled: () => [...handlers.keys()]
    }
  })
