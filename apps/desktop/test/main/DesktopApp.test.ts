// The app's decisions, over the Electron services' test layers: one instance (a second launch focuses the window),
// --background and login launches start hidden, close hides until a quit, the tray's icon and menu for 0 / n
// sessions / a problem, End all, Start at login, Quit, and the native host registered at start for each detected
// browser into a temp HOME (a failure shown in the tray). Time is TestClock's wherever the tray's refresh matters.
import { chmod, readFile, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { HOST_NAME } from "@pedelec/host-registration/Browsers"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import type { TrayItem } from "../../src/main/electron/ElectronTray.ts"
import { eventually } from "./support/Eventually.ts"
import { REFRESH_MS, sessions, start, tempHome } from "./support/Harness.ts"

const labels = (items: ReadonlyArray<TrayItem>): ReadonlyArray<string> =>
  items.flatMap((item) =>
    item.kind === "separator" ? [] : item.kind === "submenu" ? [item.label, ...labels(item.items)] : [item.label]
  )

const find = (items: ReadonlyArray<TrayItem>, label: string): TrayItem | undefined =>
  items
    .flatMap((item) => (item.kind === "submenu" ? [item, ...item.items] : [item]))
    .find((item) => item.kind !== "separator" && item.label === label)

const manifest = (userHome: string, profile: string) =>
  path.join(userHome, ".config", profile, "NativeMessagingHosts", `${HOST_NAME}.json`)

const exists = (file: string) =>
  Effect.promise(() =>
    stat(file).then(
      () => true,
      () => false
    )
  )

describe("DesktopApp: one instance and the window", () => {
  it.effect("a launch that loses the single-instance lock quits without opening a window", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome(), lock: false })
      yield* eventually(() => started.app.quitCalls() === 1, "the quit")
      assert.strictEqual(started.windows.opened.length, 0)
      assert.strictEqual(started.tray.views.length, 0, "no tray either")
    })
  )

  it.effect("a second launch focuses the window of the instance holding the lock", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.windows.opened.length === 1, "the window")
      const window = started.windows.opened[0]!
      assert.strictEqual(window.focused, 0)
      yield* started.app.launchAgain(["pedelec"])
      yield* eventually(() => window.focused === 1, "the focus")
      assert.isTrue(window.visible)
      assert.strictEqual(started.app.quitCalls(), 0, "the first instance stays")
    })
  )

  it.effect("opens the renderer shown, with the bundled preload", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.windows.opened.length === 1, "the window")
      const { options, visible } = started.windows.opened[0]!
      assert.isTrue(options.show)
      assert.isTrue(visible)
      assert.strictEqual(options.preload, started.config.preload)
      assert.strictEqual(options.url, started.config.rendererUrl)
    })
  )

  it.effect("--background starts hidden; the tray's Open shows it", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome(), argv: ["pedelec", "--background"] })
      yield* eventually(() => started.tray.views.length > 0, "the tray")
      const window = started.windows.opened[0]!
      assert.isFalse(window.options.show)
      assert.isFalse(window.visible)
      yield* started.tray.pick("open")
      yield* eventually(() => window.visible, "the window shown")
    })
  )

  it.effect("closing the window hides it; once a quit has begun, it closes", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.tray.views.length > 0, "the tray")
      assert.strictEqual(started.windows.requestClose(0), "hide")
      assert.isFalse(started.windows.opened[0]!.visible)
      assert.isFalse(started.windows.opened[0]!.destroyed)
      yield* started.tray.pick("quit")
      yield* eventually(() => started.app.quitCalls() === 1, "the quit")
      assert.strictEqual(started.windows.requestClose(0), "close")
    })
  )
})

describe("DesktopApp: the tray follows Core", () => {
  it.effect("idle with no session, n running with n, back to idle when they end", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "idle", "idle")
      assert.strictEqual(started.view().tooltip, "Pedelec — Idle")
      assert.include(labels(started.view().items), "No sessions running")
      started.core.live = sessions(3)
      yield* TestClock.adjust(REFRESH_MS)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "running")
      assert.strictEqual(started.view().tooltip, "Pedelec — 3 sessions running")
      started.core.live = []
      yield* TestClock.adjust(REFRESH_MS)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "idle", "idle again")
    })
  )

  it.effect("a problem, said as CODE: message, while Core is unreachable; idle again once it answers", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome(), live: 1 })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "running")
      started.core.failure = PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "desktop")
      yield* TestClock.adjust(REFRESH_MS)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "problem", "the problem")
      assert.match(started.view().tooltip, /^Pedelec — CORE_RUNTIME_UNAVAILABLE: /)
      assert.include(labels(started.view().items), "Core is not reachable")
      started.core.failure = undefined
      yield* TestClock.adjust(REFRESH_MS)
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "running again")
    })
  )

  it.effect("End all ends every live session and the tray shows none", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome(), live: 2 })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "running", "running")
      const endAll = find(started.view().items, "End all sessions")
      assert.deepStrictEqual(endAll?.kind === "action" && endAll.enabled, true)
      yield* started.tray.pick("end-all")
      yield* eventually(() => started.tray.views.at(-1)?.icon === "idle", "idle")
      assert.deepStrictEqual(started.core.ended, ["session-0", "session-1"])
      const disabled = find(started.view().items, "End all sessions")
      assert.isTrue(disabled?.kind === "action" && !disabled.enabled, "nothing left to end")
    })
  )

  it.effect("Start at login toggles the login item and its check mark; hidden where the OS has none", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.tray.views.length > 0, "the tray")
      yield* started.tray.pick("start-at-login")
      yield* eventually(() => {
        const item = find(started.view().items, "Start at login")
        return item?.kind === "check" && item.checked
      }, "the check mark")
      assert.isTrue(started.autostart.on)
      const linux = yield* start({ home: yield* tempHome(), openAtLogin: undefined })
      yield* eventually(() => linux.tray.views.length > 0, "the tray")
      assert.notInclude(labels(linux.view().items), "Start at login")
    })
  )
})

describe("DesktopApp: the native host at start", () => {
  it.effect("registers com.pedelec.host for each detected browser, on the app's runtime, and for no other", () =>
    Effect.gen(function* () {
      const home = yield* tempHome(["google-chrome", "BraveSoftware/Brave-Browser"])
      const started = yield* start({ home })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "idle", "idle")
      for (const profile of ["google-chrome", "BraveSoftware/Brave-Browser"]) {
        const written = JSON.parse(yield* Effect.promise(() => readFile(manifest(home.userHome, profile), "utf8")))
        assert.strictEqual(written.name, HOST_NAME)
        assert.strictEqual(written.path, path.join(started.config.nativeHost.launcherDir, "pedelec-native-host"))
      }
      assert.isFalse(yield* exists(manifest(home.userHome, "chromium")), "Chromium never ran here")
      const launcher = yield* Effect.promise(() =>
        readFile(path.join(started.config.nativeHost.launcherDir, "pedelec-native-host"), "utf8")
      )
      assert.include(launcher, "ELECTRON_RUN_AS_NODE=1")
      assert.include(launcher, home.hostEntry)
    })
  )

  it.effect("no browser detected registers nothing and is no problem", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome() })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "idle", "idle")
      assert.isFalse(yield* exists(started.config.nativeHost.launcherDir))
    })
  )

  it.effect("a registration that fails shows as a problem in the tray, and Core's state still shows", () =>
    Effect.gen(function* () {
      const home = yield* tempHome(["google-chrome"])
      // A file where the browser's NativeMessagingHosts folder should be: the manifest cannot be written.
      yield* Effect.promise(() => writeFile(path.join(home.userHome, ".config/google-chrome/NativeMessagingHosts"), ""))
      const started = yield* start({ home, live: 2 })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "problem", "the problem")
      assert.match(started.view().tooltip, /^Pedelec — NATIVE_HOST_UNAVAILABLE: Could not write /)
      assert.include(labels(started.view().items), "2 sessions running")
    })
  )

  it.effect("a missing bundled native host is a problem, and nothing is registered", () =>
    Effect.gen(function* () {
      const home = yield* tempHome(["chromium"])
      const started = yield* start({
        home,
        configure: (config) => ({ ...config, nativeHost: { ...config.nativeHost, hostEntry: "/nowhere/host.mjs" } })
      })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "problem", "the problem")
      assert.include(started.view().tooltip, "/nowhere/host.mjs is missing")
      assert.isFalse(yield* exists(manifest(home.userHome, "chromium")))
    })
  )

  it.effect("a browser folder this user cannot write to is a problem", () =>
    Effect.gen(function* () {
      if (process.getuid?.() === 0) return // root writes anywhere
      const home = yield* tempHome(["chromium"])
      yield* Effect.promise(() => chmod(path.join(home.userHome, ".config/chromium"), 0o500))
      const started = yield* start({ home })
      yield* eventually(() => started.tray.views.at(-1)?.icon === "problem", "the problem")
      yield* Effect.promise(() => chmod(path.join(home.userHome, ".config/chromium"), 0o700))
    })
  )
})
