/**
 * `npm run desktop:preview` — the desktop app's renderer without Electron: the Core of this home (`PEDELEC_HOME` or
 * ~/.pedelec) found or started through core-client's findOrStart, the same Bridge the app's main process answers
 * with (Health's native host registration included), carried by the token-guarded loopback transport, and Chromium
 * opened on it in an app window. Composition only; the root script builds Core, pedelec-cli, the native host and the
 * renderer first. Ends (closing the loopback; a Core it
 * started keeps running, as one the native host starts does) when the window closes or on Ctrl-C.
 */
import { spawn } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import packageJson from "../../package.json" with { type: "json" }
import { Bridge } from "../bridge/Bridge.ts"
import { Loopback } from "../bridge/Loopback.ts"
import { findingOrStarting, ToCore } from "../bridge/ToCore.ts"
import { userNativeHost } from "../main/NativeHostSetup.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
const paths = resolveCorePaths()
const log = (line: string) => process.stderr.write(`desktop:preview: ${line}\n`)

const coreCommand = path.join(root, "apps/core-daemon/bin/pedelec-core")
// Health's Register writes what the app would, for this checkout's builds run by this node.
const nativeHost = userNativeHost(paths, {
  hostEntry: path.join(root, "apps/native-host/dist/pedelec-native-host.mjs"),
  coreCommand
})

const layer = Loopback.layer({ staticDir: path.join(root, "apps/desktop-ui/dist") }).pipe(
  Layer.provideMerge(
    Bridge.layer({ appVersion: packageJson.version, transport: "loopback", platform: process.platform }, nativeHost)
  ),
  Layer.provide(ToCore.layer({ locate: findingOrStarting(paths, coreCommand, log), version: packageJson.version }))
)

/** Chromium in an app window with a throwaway profile; resolves when the user closes it. */
const openWindow = (url: string) =>
  Effect.callback<void>((resume) => {
    const profile = path.join(paths.runDir, "desktop-preview-profile")
    const browser = spawn(
      process.env.CHROMIUM ?? "/usr/bin/chromium",
      [`--app=${url}`, `--user-data-dir=${profile}`, "--no-first-run"],
      {
        stdio: "ignore"
      }
    )
    browser.on("error", (error) => log(`could not open Chromium (${error.message}); open ${url} yourself`))
    browser.on("exit", () => resume(Effect.void))
  })

const program = Effect.gen(function* () {
  const loopback = yield* Loopback
  // Find or start Core now, so the window opens on a running one (and a failure is said here too).
  const status = yield* (yield* Bridge).call({ method: "desktop.status", params: {} })
  log(status.ok ? "Core is running" : `${status.error.code}: ${status.error.message}`)
  log(`PEDELEC_HOME ${paths.home}; the app is at ${loopback.pageUrl}`)
  yield* openWindow(loopback.pageUrl)
})

Effect.runFork(program.pipe(Effect.provide(layer), Effect.scoped))
