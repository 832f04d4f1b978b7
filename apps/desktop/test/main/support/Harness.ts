// DesktopApp.program over the Electron services' test layers, a scripted Core (CoreSessions' test layer, or a layer
// the test gives), a scripted login item (or the test's Autostart layer) and a temp HOME for the native host
// registration: what a test drives (a second launch, a close, a tray pick, a dialog answer) and inspects (the window,
// the tray's views, the dialogs shown, the folders opened, the manifests written).
import { mkdir, mkdtemp, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { DesktopSession } from "@pedelec/contracts/Desktop"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Autostart, makeTestAutostart, type TestAutostart } from "../../../src/main/Autostart.ts"
import { CoreSessions, makeTestSessions, type TestSessions } from "../../../src/main/core/CoreSessions.ts"
import { program } from "../../../src/main/DesktopApp.ts"
import { DesktopConfig, type DesktopConfigShape } from "../../../src/main/DesktopConfig.ts"
import { ElectronApp, makeTestApp, type TestApp } from "../../../src/main/electron/ElectronApp.ts"
import { ElectronDialog, makeTestDialog, type TestDialog } from "../../../src/main/electron/ElectronDialog.ts"
import { ElectronShell, makeTestShell, type TestShell } from "../../../src/main/electron/ElectronShell.ts"
import { ElectronTray, makeTestTray, type TestTray, type TrayView } from "../../../src/main/electron/ElectronTray.ts"
import { ElectronWindow, makeTestWindows, type TestWindows } from "../../../src/main/electron/ElectronWindow.ts"

export const REFRESH_MS = 2_000

/** Only the id and count matter to the tray; the rest of a session is Core's. */
export const sessions = (count: number): Array<DesktopSession> =>
  Array.from({ length: count }, (_, index) => ({ sessionId: `session-${index}` }) as unknown as DesktopSession)

/** A temp dir holding a user's HOME (with the given browsers' profile dirs) and a Pedelec home. */
export const tempHome = (linuxProfiles: ReadonlyArray<string> = []) =>
  Effect.promise(async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), "pedelec-desktop-"))
    const userHome = path.join(root, "user")
    for (const profile of linuxProfiles) await mkdir(path.join(userHome, ".config", profile), { recursive: true })
    const bundle = path.join(root, "bundle")
    await mkdir(bundle, { recursive: true })
    const hostEntry = path.join(bundle, "pedelec-native-host.mjs")
    const coreCommand = path.join(bundle, "pedelec-core")
    await writeFile(hostEntry, "")
    await writeFile(coreCommand, "")
    return { root, userHome, hostEntry, coreCommand }
  })

export type Home = Effect.Success<ReturnType<typeof tempHome>>

export const configFor = (home: Home): DesktopConfigShape => {
  const paths = pathsForHome(path.join(home.root, "pedelec"))
  return {
    version: "test",
    paths,
    coreCommand: home.coreCommand,
    nativeHost: {
      os: "linux",
      homedir: home.userHome,
      env: {},
      nodePath: process.execPath,
      electronRunAsNode: true,
      hostEntry: home.hostEntry,
      coreCommand: home.coreCommand,
      pedelecHome: paths.home,
      launcherDir: path.join(paths.home, "bin")
    },
    preload: "/app/dist/preload.cjs",
    rendererUrl: "file:///app/ui/index.html",
    icons: { idle: "idle.png", running: "running.png", problem: "problem.png" },
    appIcon: undefined,
    refreshMs: REFRESH_MS
  }
}

export interface Started {
  readonly app: TestApp
  readonly windows: TestWindows
  readonly tray: TestTray
  /** The scripted Core; unused when the test gave its own `sessions` layer. */
  readonly core: TestSessions
  readonly autostart: TestAutostart
  readonly dialog: TestDialog
  readonly shell: TestShell
  readonly config: DesktopConfigShape
  /** The tray's last view; fails the test if it never drew one. */
  readonly view: () => TrayView
}

export const start = (options: {
  readonly home: Home
  readonly argv?: ReadonlyArray<string>
  readonly lock?: boolean
  readonly live?: number
  readonly openAtLogin?: boolean | undefined
  /** A Core of the test's own making instead of the scripted one. */
  readonly sessions?: Layer.Layer<CoreSessions>
  /** A login item of the test's own making (the XDG entry in a temp dir) instead of the scripted one. */
  readonly autostart?: Layer.Layer<Autostart>
  readonly configure?: (config: DesktopConfigShape) => DesktopConfigShape
}) =>
  Effect.gen(function* () {
    const app = yield* makeTestApp({
      argv: options.argv ?? ["pedelec"],
      lock: options.lock ?? true
    })
    const autostart = makeTestAutostart("openAtLogin" in options ? options.openAtLogin : false)
    const dialog = yield* makeTestDialog()
    const shell = makeTestShell()
    const windows = makeTestWindows()
    const tray = yield* makeTestTray()
    const core = makeTestSessions(sessions(options.live ?? 0))
    const config = (options.configure ?? ((c) => c))(configFor(options.home))
    const layer = Layer.mergeAll(
      ElectronApp.layerTest(app),
      ElectronWindow.layerTest(windows),
      ElectronTray.layerTest(tray),
      ElectronDialog.layerTest(dialog),
      ElectronShell.layerTest(shell),
      options.sessions ?? CoreSessions.layerTest(core),
      options.autostart ?? Autostart.layerTest(autostart),
      DesktopConfig.layerWith(config)
    )
    const fiber = yield* program.pipe(Effect.provide(layer), Effect.forkScoped)
    const view = () => {
      const last = tray.views.at(-1)
      if (last === undefined) throw new Error("the tray drew nothing")
      return last
    }
    return { app, windows, tray, core, autostart, dialog, shell, config, view, fiber }
  })
