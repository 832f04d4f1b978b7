/**
 * ElectronTray — the tray icon and its menu, drawn from a `TrayView` (which icon, the tooltip, the items) and
 * reporting which item the user picked. It draws whatever it is given: which state the app is in and what each item
 * does is TrayView's and DesktopApp's. The icons are PNG files made by the build (scripts/build-main.ts).
 */

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { MenuItemConstructorOptions } from "electron"
import { ElectronError } from "./ElectronError.ts"

export type TrayIcon = "idle" | "running" | "problem"
export type TrayAction = "open" | "end-all" | "start-at-login" | "quit"

export type TrayItem =
  | { readonly kind: "action"; readonly action: TrayAction; readonly label: string; readonly enabled: boolean }
  | { readonly kind: "check"; readonly action: TrayAction; readonly label: string; readonly checked: boolean }
  | { readonly kind: "label"; readonly label: string }
  | { readonly kind: "submenu"; readonly label: string; readonly items: ReadonlyArray<TrayItem> }
  | { readonly kind: "separator" }

export interface TrayView {
  readonly icon: TrayIcon
  readonly tooltip: string
  readonly items: ReadonlyArray<TrayItem>
}

export interface Tray {
  readonly render: (view: TrayView) => Effect.Effect<void>
  /** Every item the user picks, in order. */
  readonly actions: Stream.Stream<TrayAction>
}

export interface ElectronTrayShape {
  /** Puts the icon in the tray for the caller's scope; fails when an icon file is not an image. */
  readonly create: (icons: Readonly<Record<TrayIcon, string>>) => Effect.Effect<Tray, ElectronError, Scope.Scope>
}

type MenuTemplate = Array<MenuItemConstructorOptions>

const template = (items: ReadonlyArray<TrayItem>, pick: (action: TrayAction) => void): MenuTemplate =>
  items.map((item): MenuTemplate[number] => {
    switch (item.kind) {
      case "action":
        return { label: item.label, enabled: item.enabled, click: () => pick(item.action) }
      case "check":
        return { label: item.label, type: "checkbox", checked: item.checked, click: () => pick(item.action) }
      case "label":
        return { label: item.label, enabled: false }
      case "submenu":
        return { label: item.label, submenu: template(item.items, pick) }
    }
    return { type: "separator" }
  })

export class ElectronTray extends Context.Service<ElectronTray, ElectronTrayShape>()("pedelec/desktop/ElectronTray") {
  static readonly layer = Layer.effect(
    ElectronTray,
    Effect.gen(function* () {
      const electron = yield* Effect.promise(() => import("electron"))
      const image = (file: string) => {
        const loaded = electron.nativeImage.createFromPath(file)
        if (loaded.isEmpty()) throw new Error(`${file} is not a PNG`)
        return loaded
      }
      return ElectronTray.of({
        create: Effect.fn("ElectronTray.create")(function* (icons) {
          const images = yield* Effect.try({
            try: () => ({ idle: image(icons.idle), running: image(icons.running), problem: image(icons.problem) }),
            catch: (cause) => ElectronError.internal("nativeImage.createFromPath", cause, "Rebuild the desktop app.")
          })
          const picked = yield* Queue.unbounded<TrayAction>()
          const tray = yield* Effect.acquireRelease(
            Effect.sync(() => new electron.Tray(images.idle)),
            (tray) => Effect.sync(() => tray.destroy())
          )
          const pick = (action: TrayAction) => Queue.offerUnsafe(picked, action)
          return {
            render: (view) =>
              Effect.sync(() => {
                tray.setImage(images[view.icon])
                tray.setToolTip(view.tooltip)
                tray.setContextMenu(electron.Menu.buildFromTemplate(template(view.items, pick)))
              }),
            actions: Stream.fromQueue(picked)
          }
        })
      })
    })
  )

  static readonly layerTest = (tray: TestTray) => Layer.succeed(ElectronTray, tray)
}

/** The tray as a test sees it: every view drawn (the last is what shows), and a user picking an item. */
export interface TestTray extends ElectronTrayShape {
  readonly views: Array<TrayView>
  readonly pick: (action: TrayAction) => Effect.Effect<void>
  readonly destroyed: () => boolean
}

export const makeTestTray = (): Effect.Effect<TestTray> =>
  Effect.gen(function* () {
    const picked = yield* Queue.unbounded<TrayAction>()
    const views: Array<TrayView> = []
    let destroyed = false
    return {
      views,
      pick: (action) => Queue.offer(picked, action).pipe(Effect.asVoid),
      destroyed: () => destroyed,
      create: () =>
        Effect.acquireRelease(Effect.void, () =>
          Effect.sync(() => {
            destroyed = true
          })
        ).pipe(
          Effect.as({
            render: (view: TrayView) => Effect.sync(() => void views.push(view)),
            actions: Stream.fromQueue(picked)
          })
        )
    }
  })
