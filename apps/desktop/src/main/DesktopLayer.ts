/**
 * DesktopLayer — composition only: the real Electron services, the app's config, this platform's Autostart
 * (Electron's login item, or Linux's XDG autostart entry), CoreAccess for this home, the
 * bridge's connection to Core (found through CoreAccess) and the bridge itself served over Electron IPC, and the
 * tray's view of Core. What runs on top of it is DesktopApp.program; tests compose the same program over the
 * services' test layers instead.
 */
import { NodeFileSystem } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Bridge } from "../bridge/Bridge.ts"
import { ToCore } from "../bridge/ToCore.ts"
import { Autostart } from "./Autostart.ts"
import { serveBridge } from "./BridgeIpc.ts"
import { CoreAccess } from "./core/CoreAccess.ts"
import { CoreSessions } from "./core/CoreSessions.ts"
import { APP_VERSION, DesktopConfig, SOURCE } from "./DesktopConfig.ts"
import { ElectronApp } from "./electron/ElectronApp.ts"
import { ElectronDialog } from "./electron/ElectronDialog.ts"
import { ElectronIpc } from "./electron/ElectronIpc.ts"
import { ElectronShell } from "./electron/ElectronShell.ts"
import { ElectronTray } from "./electron/ElectronTray.ts"
import { ElectronWindow } from "./electron/ElectronWindow.ts"

const Electron = Layer.mergeAll(
  ElectronApp.layer,
  ElectronWindow.layer,
  ElectronTray.layer,
  ElectronIpc.layer,
  ElectronDialog.layer,
  ElectronShell.layer
)

const Access = Layer.unwrap(
  DesktopConfig.use((config) =>
    Effect.succeed(
      CoreAccess.layer({
        paths: config.paths,
        coreCommand: config.coreCommand,
        source: SOURCE,
        log: (line) => Effect.runFork(Effect.logInfo(line))
      })
    )
  )
).pipe(Layer.provide(NodeFileSystem.layer))

const Core = Layer.unwrap(
  CoreAccess.use((access) => Effect.succeed(ToCore.layer({ locate: access.ensure, version: APP_VERSION })))
)

/** Health's Register and Repair write what main registers at start: the same DesktopConfig. */
const AppBridge = Layer.unwrap(
  DesktopConfig.use((config) =>
    Effect.succeed(
      Bridge.layer({ appVersion: APP_VERSION, transport: "electron", platform: process.platform }, config.nativeHost)
    )
  )
)

const Served = Layer.effectDiscard(serveBridge).pipe(Layer.provide(AppBridge))

export const DesktopLayer = Layer.mergeAll(
  Served,
  CoreSessions.layer,
  Autostart.layer.pipe(Layer.provide(NodeFileSystem.layer))
).pipe(
  Layer.provideMerge(Core),
  Layer.provideMerge(Access),
  Layer.provideMerge(Electron),
  Layer.provideMerge(DesktopConfig.layer)
)
