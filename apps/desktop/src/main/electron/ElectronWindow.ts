/**
 * ElectronWindow — the app's one `BrowserWindow`: context isolation, the sandbox, no Node integration, our preload
 * as the only bridge, no navigation away from the renderer and no pop-ups; shown, focused or hidden on request. A
 * close request is answered by the caller (hide or close: DesktopApp decides), synchronously as Electron requires.
 * What the renderer shows and says is apps/desktop-ui's; what it may ask is the bridge's.
 */

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ElectronError } from "./ElectronError.ts"

export type CloseAnswer = "hide" | "close"

export interface WindowOptions {
  /** The bundled preload script (absolute path). */
  readonly preload: string
  /** The renderer's page: a `file://` URL in the app, the dev server's URL in development. */
  readonly url: string
  /** False for `--background`: the window loads but stays hidden until Open or a second launch. */
  readonly show: boolean
  readonly onClose: () => CloseAnswer
}

export interface MainWindow {
  /** Shows the window, restores it if minimised and brings it to the front. */
  readonly focus: Effect.Effect<void>
  readonly hide: Effect.Effect<void>
  readonly isVisible: Effect.Effect<boolean>
}

export interface ElectronWindowShape {
  /** Opens the window in the caller's scope, which destroys it; fails when the renderer's page does not load. */
  readonly open: (options: WindowOptions) => Effect.Effect<MainWindow, ElectronError, Scope.Scope>
}

const SIZE = { width: 1120, height: 780, minWidth: 760, minHeight: 520 }

export class ElectronWindow extends Context.Service<ElectronWindow, ElectronWindowShape>()(
  "pedelec/desktop/ElectronWindow"
) {
  static readonly layer = Layer.effect(
    ElectronWindow,
    Effect.gen(function* () {
      const { BrowserWindow } = yield* Effect.promise(() => import("electron"))
      const create = (options: WindowOptions) => {
        const window = new BrowserWindow({
          ...SIZE,
          show: false,
          title: "Pedelec",
          webPreferences: { preload: options.preload, contextIsolation: true, sandbox: true, nodeIntegration: false }
        })
        window.on("close", (event) => {
          if (options.onClose() === "close") return
          event.preventDefault()
          window.hide()
        })
        // The renderer is our page only: a link it shows opens nowhere inside the app.
        window.webContents.setWindowOpenHandler(() => ({ action: "deny" }))
        window.webContents.on("will-navigate", (event) => event.preventDefault())
        return window
      }
      return ElectronWindow.of({
        open: Effect.fn("ElectronWindow.open")(function* (options: WindowOptions) {
          const window = yield* Effect.acquireRelease(
            Effect.sync(() => create(options)),
            (window) =>
              Effect.sync(() => {
                if (!window.isDestroyed()) window.destroy()
              })
          )
          yield* Effect.tryPromise({
            try: () => window.loadURL(options.url),
            catch: (cause) =>
              ElectronError.internal("BrowserWindow.loadURL", cause, `Rebuild the desktop app (${options.url}).`)
          })
          if (options.show) window.show()
          return {
            focus: Effect.sync(() => {
              if (window.isDestroyed()) return
              if (window.isMinimized()) window.restore()
              window.show()
              window.focus()
            }),
            hide: Effect.sync(() => window.hide()),
            isVisible: Effect.sync(() => !window.isDestroyed() && window.isVisible())
          }
        })
      })
    })
  )

  static readonly layerTest = (windows: TestWindows) => Layer.succeed(ElectronWindow, windows)
}

/** A window as a test sees it: what it was opened with, whether it shows, how often it was focused. */
export interface TestWindow {
  readonly options: WindowOptions
  visible: boolean
  focused: number
  destroyed: boolean
}

export interface TestWindows extends ElectronWindowShape {
  readonly opened: Array<TestWindow>
  /** The user closes window `index`: its `onClose` answers, and the window hides or goes. */
  readonly requestClose: (index: number) => CloseAnswer
}

export const makeTestWindows = (): TestWindows => {
  const opened: Array<TestWindow> = []
  return {
    opened,
    open: (options) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const window: TestWindow = { options, visible: options.show, focused: 0, destroyed: false }
          opened.push(window)
          return window
        }),
        (window) =>
          Effect.sync(() => {
            window.destroyed = true
          })
      ).pipe(
        Effect.map((window) => ({
          focus: Effect.sync(() => {
            window.visible = true
            window.focused++
          }),
          hide: Effect.sync(() => {
            window.visible = false
          }),
          isVisible: Effect.sync(() => window.visible && !window.destroyed)
        }))
      ),
    requestClose: (index) => {
      const window = opened[index]!
      const answer = window.options.onClose()
      if (answer === "hide") window.visible = false
      else window.destroyed = true
      return answer
    }
  }
}
