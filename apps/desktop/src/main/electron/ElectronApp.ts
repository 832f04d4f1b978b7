/**
 * ElectronApp — Electron's `app` as a service: this launch's argv, the single-instance lock and the launches it
 * turns away, readiness, quitting, the login item, the command this launch runs as and the app's paths. Thin on purpose: what to do with a second
 * launch, when to quit or whether to start at login is DesktopApp's decision, tested against `makeTestApp`. The real
 * layer loads `electron` only when it is built, so a test importing this file never touches the Electron binary.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

/** Starts the app with its window hidden: how the login item launches it. */
export const BACKGROUND_FLAG = "--background"

/** The paths of Electron's `app.getPath` the app reads. */
export type AppPathName = "userData" | "logs" | "exe"

export interface ElectronAppShape {
  /** This launch's command line. */
  readonly argv: ReadonlyArray<string>
  /** False when another instance holds the lock; that one hears of this launch through `secondInstances`. */
  readonly requestSingleInstanceLock: Effect.Effect<boolean>
  /** The argv of each later launch, told to the instance that holds the lock. */
  readonly secondInstances: Stream.Stream<ReadonlyArray<string>>
  readonly whenReady: Effect.Effect<void>
  /**
   * Whether a quit has begun, from the tray or the OS (Cmd+Q, logout): windows then close instead of hiding.
   * Synchronous because Electron's `close` event must be answered before its listener returns.
   */
  readonly isQuitting: () => boolean
  readonly quit: Effect.Effect<void>
  /** Whether the app starts at login; undefined where Electron has no login item (Linux). */
  readonly openAtLogin: Effect.Effect<boolean | undefined>
  /** Registers the login item to start with `--background` (Windows passes it; macOS reports `openedAtLogin`). */
  readonly setOpenAtLogin: (open: boolean) => Effect.Effect<void>
  /** macOS: this launch is the login item's, so it starts hidden as `--background` would. */
  readonly openedAtLogin: Effect.Effect<boolean>
  readonly getPath: (name: AppPathName) => Effect.Effect<string>
  /**
   * The program and arguments that start this app again (the XDG autostart entry's): the AppImage or the packaged
   * binary, or in development Electron's binary and the app's folder.
   */
  readonly launchCommand: ReadonlyArray<string>
}

/** An AppImage runs from a mount that changes each launch; `APPIMAGE` names the file to run again. */
const launchCommandOf = (isPackaged: boolean, appPath: string): ReadonlyArray<string> => {
  const appImage = process.env.APPIMAGE
  if (appImage !== undefined && appImage.length > 0) return [appImage]
  return isPackaged ? [process.execPath] : [process.execPath, appPath]
}

export class ElectronApp extends Context.Service<ElectronApp, ElectronAppShape>()("pedelec/desktop/ElectronApp") {
  static readonly layer = Layer.effect(
    ElectronApp,
    Effect.gen(function* () {
      const { app } = yield* Effect.promise(() => import("electron"))
      let quitting = false
      const markQuitting = () => {
        quitting = true
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => app.on("before-quit", markQuitting)),
        () => Effect.sync(() => app.off("before-quit", markQuitting))
      )
      return ElectronApp.of({
        argv: process.argv,
        requestSingleInstanceLock: Effect.sync(() => app.requestSingleInstanceLock()),
        secondInstances: Stream.callback<ReadonlyArray<string>>((queue) =>
          Effect.acquireRelease(
            Effect.sync(() => {
              const listener = (_event: unknown, argv: Array<string>) => Queue.offerUnsafe(queue, argv)
              app.on("second-instance", listener)
              return listener
            }),
            (listener) => Effect.sync(() => app.off("second-instance", listener))
          )
        ),
        whenReady: Effect.promise(() => app.whenReady()),
        isQuitting: () => quitting,
        quit: Effect.sync(() => app.quit()),
        openAtLogin: Effect.sync(() =>
          process.platform === "linux" ? undefined : app.getLoginItemSettings().openAtLogin
        ),
        setOpenAtLogin: (open) =>
          Effect.sync(() => app.setLoginItemSettings({ openAtLogin: open, args: [BACKGROUND_FLAG] })),
        openedAtLogin: Effect.sync(() => app.getLoginItemSettings().wasOpenedAtLogin === true),
        getPath: (name) => Effect.sync(() => app.getPath(name)),
        launchCommand: launchCommandOf(app.isPackaged, app.getAppPath())
      })
    })
  )

  static readonly layerTest = (app: TestApp) => Layer.succeed(ElectronApp, app)
}

/** The app as a test drives it: another launch arriving, whether it quit, the login item as the OS would keep it. */
export interface TestApp extends ElectronAppShape {
  readonly launchAgain: (argv: ReadonlyArray<string>) => Effect.Effect<void>
  readonly quitCalls: () => number
}

export const makeTestApp = (options: {
  readonly argv?: ReadonlyArray<string>
  /** Whether this instance wins the single-instance lock (default true). */
  readonly lock?: boolean
  /** Undefined: the OS has no login item, as on Linux. */
  readonly openAtLogin?: boolean | undefined
  readonly openedAtLogin?: boolean
  readonly paths?: Partial<Record<AppPathName, string>>
  readonly launchCommand?: ReadonlyArray<string>
}): Effect.Effect<TestApp> =>
  Effect.gen(function* () {
    const launches = yield* Queue.unbounded<ReadonlyArray<string>>()
    let quitting = false
    let quits = 0
    let openAtLogin = options.openAtLogin
    return {
      argv: options.argv ?? ["electron", "."],
      requestSingleInstanceLock: Effect.succeed(options.lock ?? true),
      secondInstances: Stream.fromQueue(launches),
      whenReady: Effect.void,
      isQuitting: () => quitting,
      quit: Effect.sync(() => {
        quitting = true
        quits++
      }),
      openAtLogin: Effect.sync(() => openAtLogin),
      setOpenAtLogin: (open) =>
        Effect.sync(() => {
          openAtLogin = open
        }),
      openedAtLogin: Effect.succeed(options.openedAtLogin ?? false),
      getPath: (name) => Effect.succeed(options.paths?.[name] ?? `/test/${name}`),
      launchCommand: options.launchCommand ?? ["/opt/Pedelec/pedelec"],
      launchAgain: (argv) => Queue.offer(launches, argv).pipe(Effect.asVoid),
      quitCalls: () => quits
    }
  })
