/**
 * DesktopConfig — where the app finds what it runs and shows: the home's paths, the bundled `pedelec-core` and
 * native host, the preload, the renderer's page, the tray icons and the app's own icon, and how often the tray asks Core. By default
 * everything sits beside this bundle in the repository (`apps/desktop/dist`, `apps/core-daemon/bin`,
 * `apps/native-host/dist`, `apps/desktop-ui/dist`); `PEDELEC_CORE_BIN`, `PEDELEC_NATIVE_HOST_ENTRY` and
 * `PEDELEC_DESKTOP_UI_URL` move them (a packaged app, development). It only computes; whether the files exist is
 * asked where they are used.
 */
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Component } from "@pedelec/contracts/Protocol"
import { type CorePathsShape, resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import packageJson from "../../package.json" with { type: "json" }
import type { TrayIcon } from "./electron/ElectronTray.ts"
import { type NativeHostConfig, userNativeHost } from "./NativeHostSetup.ts"

export interface DesktopConfigShape {
  readonly version: string
  readonly paths: CorePathsShape
  readonly coreCommand: string
  readonly nativeHost: NativeHostConfig
  readonly preload: string
  readonly rendererUrl: string
  readonly icons: Readonly<Record<TrayIcon, string>>
  /** The image the login entry shows (Linux's autostart), if the app has one. */
  readonly appIcon: string | undefined
  /** How often the tray asks Core for its live sessions. */
  readonly refreshMs: number
}

/** From package.json: one version everywhere (`npm run check:version`). */
export const APP_VERSION: string = packageJson.version

/** Contracts name no desktop component; the app owns Core's runtime, so its own errors say `core`. */
export const SOURCE: Component = "desktop"

const REFRESH_MS = 2_000

const optional = (name: string) =>
  Config.NonEmptyString(name).pipe(
    Config.map((value): string | undefined => value),
    Config.orElse(() => Config.succeed(undefined))
  )

/** The bundle's folder (`apps/desktop/dist`) and the repository's `apps/` above it. */
const here = () => {
  const dist = path.dirname(fileURLToPath(import.meta.url))
  return { dist, apps: path.resolve(dist, "../..") }
}

const read = Effect.gen(function* () {
  const { dist, apps } = here()
  const overrides = yield* Config.all({
    core: optional("PEDELEC_CORE_BIN"),
    host: optional("PEDELEC_NATIVE_HOST_ENTRY"),
    ui: optional("PEDELEC_DESKTOP_UI_URL")
  })
  const paths = resolveCorePaths()
  const coreCommand = path.resolve(overrides.core ?? path.join(apps, "core-daemon/bin/pedelec-core"))
  const config: DesktopConfigShape = {
    version: APP_VERSION,
    paths,
    coreCommand,
    nativeHost: userNativeHost(paths, {
      hostEntry: path.resolve(overrides.host ?? path.join(apps, "native-host/dist/pedelec-native-host.mjs")),
      coreCommand
    }),
    preload: path.join(dist, "preload.cjs"),
    rendererUrl: overrides.ui ?? pathToFileURL(path.join(apps, "desktop-ui/dist/index.html")).href,
    icons: {
      idle: path.join(dist, "icons/tray-idle.png"),
      running: path.join(dist, "icons/tray-running.png"),
      problem: path.join(dist, "icons/tray-problem.png")
    },
    appIcon: path.join(dist, "icons/tray-idle@2x.png"),
    refreshMs: REFRESH_MS
  }
  return config
}).pipe(Effect.orDie)

export class DesktopConfig extends Context.Service<DesktopConfig, DesktopConfigShape>()(
  "pedelec/desktop/DesktopConfig"
) {
  static readonly layer = Layer.effect(DesktopConfig, read)
  static readonly layerWith = (config: DesktopConfigShape) => Layer.succeed(DesktopConfig, config)
}
