/**
 * Autostart — whether Pedelec starts at login, and turning it on or off, one layer per platform. On macOS and
 * Windows it is Electron's login item (ElectronApp); Linux has none, so there it is an XDG autostart entry,
 * `$XDG_CONFIG_HOME/autostart/pedelec.desktop` (default `~/.config/autostart`), that runs this executable with
 * `--background` (so a login starts the app hidden, as DesktopApp decides). The entry counts as on only when it starts
 * this very command: one left by another install or a moved app reads as off, and turning it on replaces it. The
 * entry's text is Autostart/DesktopEntry's; when to toggle is DesktopApp's.
 */
import os from "node:os"
import path from "node:path"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { type EntryFacts, entryText, startsCommand } from "./Autostart/DesktopEntry.ts"
import { DesktopConfig } from "./DesktopConfig.ts"
import { BACKGROUND_FLAG, ElectronApp, type ElectronAppShape } from "./electron/ElectronApp.ts"

export interface AutostartShape {
  /** Whether the app starts at login; undefined where the OS offers no way to. */
  readonly isOn: Effect.Effect<boolean | undefined>
  /** Starts the app at login (hidden), or stops doing so; fails saying what to fix. */
  readonly set: (on: boolean) => Effect.Effect<void, PedelecError>
}

export interface XdgOptions extends EntryFacts {
  /** `$XDG_CONFIG_HOME`, or `~/.config` (see `xdgConfigHome`). */
  readonly configHome: string
}

const ARGS = [BACKGROUND_FLAG]

/** The spec ignores a relative `XDG_CONFIG_HOME`. */
export const xdgConfigHome = (env: Readonly<Record<string, string | undefined>>, homedir: string): string => {
  const configured = env.XDG_CONFIG_HOME
  return configured !== undefined && path.isAbsolute(configured) ? configured : path.join(homedir, ".config")
}

export const autostartFile = (configHome: string): string => path.join(configHome, "autostart", "pedelec.desktop")

const cannot = (file: string, cause: unknown) =>
  PedelecError.fromCode("INTERNAL_ERROR", "desktop", {
    details: { component: "desktop", file },
    message: `Could not change ${file} (${String(cause)}). Check that ${path.dirname(file)} is yours and writable, then choose Start at login again.`
  })

const readXdg = (fs: FileSystem.FileSystem, options: XdgOptions) =>
  fs.readFileString(autostartFile(options.configHome)).pipe(
    Effect.map((text) => startsCommand(text, options, ARGS)),
    Effect.orElseSucceed(() => false)
  )

/** Written beside the entry and renamed over it, so a session manager never reads half an entry. */
const writeXdg = (fs: FileSystem.FileSystem, options: XdgOptions, on: boolean) => {
  const file = autostartFile(options.configHome)
  const change = on
    ? Effect.gen(function* () {
        yield* fs.makeDirectory(path.dirname(file), { recursive: true })
        yield* fs.writeFileString(`${file}.tmp`, entryText(options, ARGS))
        yield* fs.rename(`${file}.tmp`, file)
      })
    : fs.remove(file, { force: true })
  return change.pipe(Effect.mapError((error) => cannot(file, error.message)))
}

const fromLoginItem = (app: ElectronAppShape): AutostartShape => ({
  isOn: app.openAtLogin,
  set: (on) => app.setOpenAtLogin(on)
})

export class Autostart extends Context.Service<Autostart, AutostartShape>()("pedelec/desktop/Autostart") {
  /** macOS and Windows: Electron's login item, registered to pass `--background`. */
  static readonly layerElectron = Layer.effect(
    Autostart,
    ElectronApp.use((app) => Effect.succeed(fromLoginItem(app)))
  )

  /** Linux: the XDG autostart entry for `options.command`. */
  static readonly layerXdg = (options: XdgOptions) =>
    Layer.effect(
      Autostart,
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return Autostart.of({
          isOn: readXdg(fs, options).pipe(Effect.withSpan("Autostart.isOn")),
          set: Effect.fn("Autostart.set")(function* (on: boolean) {
            return yield* writeXdg(fs, options, on)
          })
        })
      })
    )

  /** This platform's layer, for the command this launch runs as (ElectronApp) and the app's icon (DesktopConfig). */
  static readonly layer = Layer.unwrap(
    Effect.gen(function* (): Effect.fn.Return<
      Layer.Layer<Autostart, never, FileSystem.FileSystem>,
      never,
      ElectronApp | DesktopConfig
    > {
      const app = yield* ElectronApp
      if (process.platform !== "linux") return Layer.succeed(Autostart, fromLoginItem(app))
      const config = yield* DesktopConfig
      return Autostart.layerXdg({
        configHome: xdgConfigHome(process.env, os.homedir()),
        command: app.launchCommand,
        icon: config.appIcon
      })
    })
  )

  static readonly layerTest = (autostart: TestAutostart) => Layer.succeed(Autostart, autostart)
}

/** The login item as a test sets it: undefined is an OS without one; `failure` makes every change fail. */
export interface TestAutostart extends AutostartShape {
  on: boolean | undefined
  failure: PedelecError | undefined
}

export const makeTestAutostart = (on: boolean | undefined): TestAutostart => {
  const autostart: TestAutostart = {
    on,
    failure: undefined,
    isOn: Effect.sync(() => autostart.on),
    set: (next) =>
      Effect.suspend(() => {
        if (autostart.failure !== undefined) return Effect.fail(autostart.failure)
        if (autostart.on !== undefined) autostart.on = next
        return Effect.void
      })
  }
  return autostart
}
