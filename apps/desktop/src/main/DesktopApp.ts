/**
 * DesktopApp — the app's life from launch to Quit, as one scoped program: one instance per user (a second launch
 * focuses the first one's window and goes), the window (hidden with `--background` or at login; closing hides it
 * until a quit has begun), the native host registered for every detected browser, the tray kept to Core's state
 * (idle / n sessions running / a problem), and the tray's items: Open, End all, Start at login (Autostart), Quit.
 * Core is asked first: while it cannot be reached at launch, StartupDialog says why and offers Retry or Quit before
 * anything else opens. Closing the scope (main.ts, at will-quit) releases the tray and window, and CoreAccess stops
 * only a Core the app started. Each Electron API is a service of ./electron; the decisions live here and are tested
 * against their test layers.
 */
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Autostart, type AutostartShape } from "./Autostart.ts"
import { CoreSessions, type CoreSessionsShape } from "./core/CoreSessions.ts"
import { DesktopConfig, type DesktopConfigShape } from "./DesktopConfig.ts"
import { BACKGROUND_FLAG, ElectronApp, type ElectronAppShape } from "./electron/ElectronApp.ts"
import type { ElectronError } from "./electron/ElectronError.ts"
import { ElectronTray, type Tray, type TrayAction } from "./electron/ElectronTray.ts"
import { ElectronWindow, type ElectronWindowShape, type MainWindow } from "./electron/ElectronWindow.ts"
import { registerNativeHost } from "./NativeHostSetup.ts"
import { attachAtStart } from "./StartupDialog.ts"
import { type Problem, type TrayFacts, trayView } from "./TrayView.ts"

interface Running {
  readonly app: ElectronAppShape
  readonly autostart: AutostartShape
  readonly window: MainWindow
  readonly facts: SubscriptionRef.SubscriptionRef<TrayFacts>
  readonly sessions: CoreSessionsShape
}

const problemOf = (error: PedelecError): Problem => ({ code: error.code, message: error.message })

/** Asks Core (attached, or started when none runs) for its live sessions: their count, or why there is none. */
const askCore = (sessions: CoreSessionsShape) =>
  sessions.list.pipe(
    Effect.match({
      onSuccess: (live): TrayFacts["core"] => ({ sessions: live.length }),
      onFailure: (error): TrayFacts["core"] => ({ problem: problemOf(error) })
    })
  )

const refresh = (running: Running) =>
  askCore(running.sessions).pipe(
    Effect.flatMap((core) => SubscriptionRef.update(running.facts, (facts) => ({ ...facts, core })))
  )

/** Ends every live session of every origin, then shows what is left. */
const endAll = (running: Running) =>
  Effect.gen(function* () {
    const live = yield* running.sessions.list
    yield* Effect.forEach(live, (session) => running.sessions.end(session.sessionId), {
      concurrency: "unbounded",
      discard: true
    })
  }).pipe(
    Effect.catch((error) => Effect.logWarning(`End all: ${error.code}: ${error.message}`)),
    Effect.andThen(refresh(running))
  )

/** Turns the login item over; the check mark then shows what the OS (or the autostart entry) says, not the wish. */
const toggleLogin = (running: Running) =>
  Effect.gen(function* () {
    const current = yield* running.autostart.isOn
    if (current === undefined) return
    yield* running.autostart
      .set(!current)
      .pipe(Effect.catch((error) => Effect.logWarning(`Start at login: ${error.code}: ${error.message}`)))
    const openAtLogin = yield* running.autostart.isOn
    yield* SubscriptionRef.update(running.facts, (facts) => ({ ...facts, openAtLogin }))
  })

const act = (running: Running) => (action: TrayAction) => {
  switch (action) {
    case "open":
      return running.window.focus
    case "end-all":
      return endAll(running)
    case "start-at-login":
      return toggleLogin(running)
    case "quit":
      return running.app.quit
  }
}

/** Hidden when asked (`--background`) or launched by the login item; a close hides it until a quit has begun. */
const openWindow = (app: ElectronAppShape, windows: ElectronWindowShape, config: DesktopConfigShape) =>
  Effect.gen(function* () {
    const background = app.argv.includes(BACKGROUND_FLAG) || (yield* app.openedAtLogin)
    return yield* windows.open({
      preload: config.preload,
      url: config.rendererUrl,
      show: !background,
      onClose: () => (app.isQuitting() ? "close" : "hide")
    })
  })

/** Registration's outcome as the tray shows it: nothing, or the problem. */
const registration = (config: DesktopConfigShape) =>
  registerNativeHost(config.nativeHost).pipe(
    Effect.tap((report) => Effect.logInfo(`native host registered for ${report?.browsers.join(", ") || "no browser"}`)),
    Effect.match({ onSuccess: () => undefined, onFailure: (problem) => problem })
  )

/** Draws the facts whenever they change, asks Core every `refreshMs`, and does what the user picks. */
const keepTray = (running: Running, tray: Tray, refreshMs: number) =>
  Effect.gen(function* () {
    yield* SubscriptionRef.changes(running.facts).pipe(
      Stream.map(trayView),
      Stream.changesWith((a, b) => JSON.stringify(a) === JSON.stringify(b)),
      Stream.runForEach(tray.render),
      Effect.forkScoped
    )
    yield* refresh(running).pipe(Effect.repeat(Schedule.spaced(refreshMs)), Effect.forkScoped)
    yield* tray.actions.pipe(Stream.runForEach(act(running)), Effect.forkScoped)
  })

const run = Effect.gen(function* () {
  const app = yield* ElectronApp
  // The instance holding the lock hears of this launch as `second-instance` and focuses its window.
  if (!(yield* app.requestSingleInstanceLock)) return yield* app.quit
  yield* app.whenReady
  const config = yield* DesktopConfig
  const sessions = yield* CoreSessions
  const core = yield* attachAtStart(askCore(sessions), config.paths)
  if (core === "quit") return yield* app.quit
  const window = yield* openWindow(app, yield* ElectronWindow, config)
  yield* app.secondInstances.pipe(
    Stream.runForEach(() => window.focus),
    Effect.forkScoped
  )
  const autostart = yield* Autostart
  const facts = yield* SubscriptionRef.make<TrayFacts>({
    core,
    registration: yield* registration(config),
    openAtLogin: yield* autostart.isOn
  })
  const tray = yield* (yield* ElectronTray).create(config.icons)
  const running: Running = { app, autostart, window, facts, sessions }
  yield* keepTray(running, tray, config.refreshMs)
  return yield* Effect.never
})

/**
 * The app until it is interrupted (will-quit), its resources in its own scope. A window or tray that cannot be made
 * is fatal: said as `CODE: message`, then the app quits.
 */
export const program = run.pipe(
  Effect.catchTag("ElectronError", (error: ElectronError) =>
    Effect.logError(`Pedelec could not start: ${error.code}: ${error.message}`).pipe(
      Effect.andThen(ElectronApp.use((app) => app.quit))
    )
  ),
  Effect.scoped,
  Effect.withSpan("DesktopApp.program")
)
