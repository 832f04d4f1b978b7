// Start at login on Linux: the XDG autostart entry in a temp XDG_CONFIG_HOME, written and removed by the real layer
// (on: a valid entry whose Exec starts this command with --background, a path with spaces quoted; off: gone; an
// entry for another executable reads as off and is replaced), the spec's quoting, and the tray's Start at login
// toggling the entry through DesktopApp (a failed change leaving the check mark on what is true).
import { mkdir, mkdtemp, readFile, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { entryKeys, execValue, quoteArgument } from "../../src/main/Autostart/DesktopEntry.ts"
import { Autostart, autostartFile, xdgConfigHome } from "../../src/main/Autostart.ts"
import { eventually } from "./support/Eventually.ts"
import { start, tempHome } from "./support/Harness.ts"

const APP = "/opt/My Apps/Pedelec/pedelec"

/** A temp dir as `XDG_CONFIG_HOME`, resolved the way the app resolves it. */
const configHome = Effect.promise(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-xdg-"))
  return xdgConfigHome({ XDG_CONFIG_HOME: dir }, "/home/nobody")
})

const xdg = (home: string, command: ReadonlyArray<string> = [APP]) =>
  Autostart.layerXdg({ configHome: home, command, icon: "/opt/My Apps/Pedelec/icon.png" }).pipe(
    Layer.provide(NodeFileSystem.layer)
  )

const withXdg = <A, E>(home: string, f: (autostart: Autostart["Service"]) => Effect.Effect<A, E>) =>
  Autostart.use(f).pipe(Effect.provide(xdg(home)))

const read = (file: string) => Effect.promise(() => readFile(file, "utf8"))

const exists = (file: string) =>
  Effect.promise(() =>
    stat(file).then(
      () => true,
      () => false
    )
  )

describe("DesktopEntry: the Exec line per the Desktop Entry spec", () => {
  it("leaves a plain argument alone and quotes one with a reserved character", () => {
    assert.strictEqual(quoteArgument("/usr/bin/pedelec"), "/usr/bin/pedelec")
    assert.strictEqual(quoteArgument("--background"), "--background")
    assert.strictEqual(quoteArgument(APP), `"${APP}"`)
    assert.strictEqual(quoteArgument(`/a"b$c\`d`), `"/a\\"b\\$c\\\`d"`)
    assert.strictEqual(quoteArgument(""), `""`)
  })

  it("doubles a percent sign and writes a literal backslash as four", () => {
    assert.strictEqual(quoteArgument("/opt/100%/pedelec"), "/opt/100%%/pedelec")
    assert.strictEqual(execValue(["/opt/a\\b/pedelec"], []), `"/opt/a\\\\\\\\b/pedelec"`)
  })

  it("XDG_CONFIG_HOME when absolute, ~/.config otherwise", () => {
    assert.strictEqual(xdgConfigHome({ XDG_CONFIG_HOME: "/x/config" }, "/home/u"), "/x/config")
    assert.strictEqual(xdgConfigHome({ XDG_CONFIG_HOME: "relative" }, "/home/u"), "/home/u/.config")
    assert.strictEqual(xdgConfigHome({}, "/home/u"), "/home/u/.config")
    assert.strictEqual(autostartFile("/home/u/.config"), "/home/u/.config/autostart/pedelec.desktop")
  })
})

describe("Autostart on Linux: the XDG autostart entry", () => {
  it.effect("on writes a valid entry starting this executable hidden; off removes it", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      const file = autostartFile(home)
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn))
      yield* withXdg(home, (autostart) => autostart.set(true))
      const keys = entryKeys(yield* read(file))
      assert.strictEqual((yield* read(file)).split("\n")[0], "[Desktop Entry]")
      assert.deepInclude(Object.fromEntries(keys), {
        Type: "Application",
        Name: "Pedelec",
        Exec: `"${APP}" --background`,
        Icon: "/opt/My Apps/Pedelec/icon.png",
        "X-GNOME-Autostart-enabled": "true"
      })
      assert.isNotEmpty(keys.get("Comment"))
      assert.isTrue(yield* withXdg(home, (autostart) => autostart.isOn))
      assert.isFalse(yield* exists(`${file}.tmp`), "written beside, then renamed")
      yield* withXdg(home, (autostart) => autostart.set(false))
      assert.isFalse(yield* exists(file))
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn))
      yield* withXdg(home, (autostart) => autostart.set(false))
    })
  )

  it.effect("an entry for another executable reads as off, and turning it on replaces it", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      const file = autostartFile(home)
      yield* Effect.promise(async () => {
        await mkdir(path.dirname(file), { recursive: true })
        await writeFile(file, "[Desktop Entry]\nType=Application\nName=Pedelec\nExec=/old/place/pedelec --background\n")
      })
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn))
      yield* withXdg(home, (autostart) => autostart.set(true))
      assert.strictEqual(entryKeys(yield* read(file)).get("Exec"), `"${APP}" --background`)
      assert.isTrue(yield* withXdg(home, (autostart) => autostart.isOn))
    })
  )

  it.effect("our entry turned off by the desktop (Hidden, X-GNOME-Autostart-enabled=false) reads as off", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      const file = autostartFile(home)
      yield* withXdg(home, (autostart) => autostart.set(true))
      const text = yield* read(file)
      yield* Effect.promise(() => writeFile(file, text.replace("X-GNOME-Autostart-enabled=true", "Hidden=true")))
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn))
      yield* Effect.promise(() => writeFile(file, text.replace("enabled=true", "enabled=false")))
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn))
    })
  )

  it.effect("in development, Electron's binary and the app's folder, each quoted as needed", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      const command = ["/usr/lib/electron/electron", "/src/my app/apps/desktop"]
      yield* Autostart.use((autostart) => autostart.set(true)).pipe(Effect.provide(xdg(home, command)))
      const exec = entryKeys(yield* read(autostartFile(home))).get("Exec")
      assert.strictEqual(exec, `/usr/lib/electron/electron "/src/my app/apps/desktop" --background`)
      assert.isTrue(yield* Autostart.use((autostart) => autostart.isOn).pipe(Effect.provide(xdg(home, command))))
      assert.isFalse(yield* withXdg(home, (autostart) => autostart.isOn), "another command's entry is not ours")
    })
  )

  it.effect("an autostart folder that cannot be made fails, saying which file and what to check", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      yield* Effect.promise(() => writeFile(path.join(home, "autostart"), "a file where the folder goes"))
      const error = yield* Effect.flip(withXdg(home, (autostart) => autostart.set(true)))
      assert.strictEqual(error.code, "INTERNAL_ERROR")
      assert.include(error.message, autostartFile(home))
      assert.include(error.message, "Start at login again")
    })
  )
})

describe("DesktopApp: Start at login on Linux", () => {
  it.effect("the tray's Start at login writes the entry, checks the item, and a second pick removes it", () =>
    Effect.gen(function* () {
      const home = yield* configHome
      const file = autostartFile(home)
      const started = yield* start({ home: yield* tempHome(), autostart: xdg(home) })
      const checked = () => {
        const item = started.tray.views.at(-1)?.items.find((item) => item.kind === "check")
        return item?.kind === "check" ? item.checked : undefined
      }
      yield* eventually(() => checked() === false, "an unchecked Start at login")
      yield* started.tray.pick("start-at-login")
      yield* eventually(() => checked() === true, "the check mark")
      assert.strictEqual(entryKeys(yield* read(file)).get("Exec"), `"${APP}" --background`)
      yield* started.tray.pick("start-at-login")
      yield* eventually(() => checked() === false, "the check mark gone")
      assert.isFalse(yield* exists(file))
    })
  )

  it.effect("a change that fails leaves the check mark on what the OS says, and the app running", () =>
    Effect.gen(function* () {
      const started = yield* start({ home: yield* tempHome(), openAtLogin: false })
      yield* eventually(() => started.tray.views.length > 0, "the tray")
      started.autostart.failure = PedelecError.fromCode("INTERNAL_ERROR", "desktop", { message: "read-only" })
      yield* started.tray.pick("start-at-login")
      yield* started.tray.pick("open")
      yield* eventually(() => started.windows.opened[0]!.focused === 1, "the next pick handled")
      const item = started.view().items.find((item) => item.kind === "check")
      assert.isTrue(item?.kind === "check" && !item.checked)
      assert.isFalse(started.autostart.on)
    })
  )
})
