/**
 * ElectronShell — Electron's `shell` as a service: opening a folder in the user's file manager (the logs folder the
 * startup dialog points at). Which folder and when is the caller's; a folder that cannot be opened is an
 * ElectronError saying where to look instead.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ElectronError } from "./ElectronError.ts"

export interface ElectronShellShape {
  /** Opens `folder` in the file manager; fails when the OS cannot (no file manager, no such folder). */
  readonly openFolder: (folder: string) => Effect.Effect<void, ElectronError>
}

export class ElectronShell extends Context.Service<ElectronShell, ElectronShellShape>()(
  "pedelec/desktop/ElectronShell"
) {
  static readonly layer = Layer.effect(
    ElectronShell,
    Effect.gen(function* () {
      const { shell } = yield* Effect.promise(() => import("electron"))
      return ElectronShell.of({
        openFolder: Effect.fn("ElectronShell.openFolder")(function* (folder: string) {
          // openPath answers "" on success and the OS's reason otherwise; it does not reject.
          const reason = yield* Effect.promise(() => shell.openPath(folder))
          if (reason !== "") {
            return yield* ElectronError.internal("shell.openPath", reason, `Open ${folder} in your file manager.`)
          }
        })
      })
    })
  )

  static readonly layerTest = (shell: TestShell) => Layer.succeed(ElectronShell, shell)
}

/** The shell as a test sees it: every folder opened, in order. */
export interface TestShell extends ElectronShellShape {
  readonly opened: Array<string>
}

export const makeTestShell = (): TestShell => {
  const opened: Array<string> = []
  return { opened, openFolder: (folder) => Effect.sync(() => void opened.push(folder)) }
}
