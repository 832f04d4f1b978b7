/**
 * StartupDialog — what the user sees when the app cannot start or attach to Core at launch: a native dialog titled
 * "Pedelec could not start its Core" with the error as `CODE: message` and what to do about that code, and the
 * buttons Retry (ask Core again), Open logs folder (open it, then ask the user again) and Quit. Dismissing it lets
 * the app go on without Core: the window opens on the renderer's reconnecting state and the tray shows the problem
 * and keeps asking. Asking Core is the caller's (DesktopApp's refresh question, over CoreSessions and CoreAccess);
 * drawing the dialog is ElectronDialog's.
 */
import type { CorePathsShape } from "@pedelec/core-client/HomeLayout"
import * as Effect from "effect/Effect"
import { type DialogPrompt, ElectronDialog } from "./electron/ElectronDialog.ts"
import { ElectronShell } from "./electron/ElectronShell.ts"
import { type Problem, said, type TrayFacts } from "./TrayView.ts"

export const STARTUP_TITLE = "Pedelec could not start its Core"

export const BUTTONS = { retry: "Retry", logs: "Open logs folder", quit: "Quit" } as const

type CoreFacts = TrayFacts["core"]

/** What the user can do about `code`: a Core of another release must go first; anything else is in the logs. */
export const whatToDo = (code: string, paths: CorePathsShape): string =>
  code === "PROTOCOL_VERSION_MISMATCH"
    ? "Another Pedelec release is serving this home. Quit the other Pedelec (or the pedelec-core it started) and open Pedelec again."
    : `Check ${paths.logsDir} (core.log), and that ${paths.home} can be written, then choose Retry.`

export const startupPrompt = (problem: Problem, paths: CorePathsShape): DialogPrompt => ({
  kind: "error",
  title: STARTUP_TITLE,
  message: said(problem),
  detail: whatToDo(problem.code, paths),
  buttons: [BUTTONS.retry, BUTTONS.logs, BUTTONS.quit],
  defaultButton: BUTTONS.retry
})

/** The user's answer to one failure; Open logs folder opens it and shows the same dialog again. */
const answer = Effect.fn("StartupDialog.answer")(function* (problem: Problem, paths: CorePathsShape) {
  const dialog = yield* ElectronDialog
  const shell = yield* ElectronShell
  while (true) {
    const picked = yield* dialog.ask(startupPrompt(problem, paths))
    if (picked === BUTTONS.retry) return "retry" as const
    if (picked === BUTTONS.quit) return "quit" as const
    if (picked === undefined) return "dismissed" as const
    yield* shell
      .openFolder(paths.logsDir)
      .pipe(Effect.catch((error) => Effect.logWarning(`Open logs folder: ${error.code}: ${error.message}`)))
  }
})

/**
 * Asks Core (`ask`: its facts, a problem when unreachable) until it answers, the user quits ("quit": the caller quits
 * the app) or dismisses the dialog (the problem, for the tray to show while it keeps asking).
 */
export const attachAtStart = Effect.fn("StartupDialog.attachAtStart")(function* (
  ask: Effect.Effect<CoreFacts>,
  paths: CorePathsShape
) {
  while (true) {
    const core = yield* ask
    if (typeof core !== "object" || !("problem" in core)) return core
    yield* Effect.logError(`${STARTUP_TITLE}: ${said(core.problem)}`)
    const choice = yield* answer(core.problem, paths)
    if (choice === "quit") return "quit" as const
    if (choice === "dismissed") return core
  }
})
