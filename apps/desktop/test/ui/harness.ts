/**
 * The UI suites' world: a real built Core in a temp PEDELEC_HOME (the scripted provider enabled), the real bridge
 * (Bridge + ToCore, attach-only) behind the loopback transport, the built renderer it serves, and headless Chromium
 * through playwright-core with the flags apps/e2e uses. Also a host-role client, to act as a page would (create
 * and end sessions), a Core restart under the open window, and a screenshot of each screen into test/screenshots/.
 * The bridge registers the native host as the app would, but for a user whose home is `<temp home>/user` (no
 * browser detected until a test makes one's profile folder), so no test touches the real user's browsers.
 */
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { CHROMIUM, CHROMIUM_FLAGS } from "@pedelec/chain/Browser"
import type { Origin } from "@pedelec/contracts/Ids"
import { connectHost, type HostClient } from "@pedelec/core-client/CoreClient"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { osOf } from "@pedelec/host-registration/Browsers"
import { type CoreProcess, startCoreProcess } from "@pedelec/test-kit/core/CoreProcess"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { Bridge } from "../../src/bridge/Bridge.ts"
import { Loopback, type LoopbackShape } from "../../src/bridge/Loopback.ts"
import { attachOnly, ToCore } from "../../src/bridge/ToCore.ts"
import type { NativeHostConfig } from "../../src/main/NativeHostSetup.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const RENDERER = path.join(root, "apps/desktop-ui/dist")
const SHOTS = path.join(root, "apps/desktop/test/screenshots")
export const ORIGIN = "http://127.0.0.1:5173" as Origin

export interface Desk {
  readonly home: string
  /** The native host as the bridge registers it: for the user `<home>/user`, with the built host entry. */
  readonly nativeHost: NativeHostConfig
  readonly core: () => CoreProcess
  readonly loopback: LoopbackShape
  readonly page: Page
  /** A host-role client of the current Core, as a page's native host would hold. */
  readonly host: () => Promise<HostClient>
  /** Stops Core (SIGTERM) and leaves it stopped until `startCore`. */
  readonly stopCore: () => Promise<void>
  readonly startCore: () => Promise<void>
  readonly settingsFile: () => Promise<string>
  readonly shot: (name: string) => Promise<void>
}

const nativeHostFor = (home: string): NativeHostConfig => ({
  os: osOf(process.platform),
  homedir: path.join(home, "user"),
  env: {},
  nodePath: process.execPath,
  electronRunAsNode: false,
  // The built host, so the self-test's native host hop starts it as a browser would.
  hostEntry: path.join(root, "apps/native-host/dist/pedelec-native-host.mjs"),
  coreCommand: path.join(root, "apps/core-daemon/bin/pedelec-core"),
  pedelecHome: home,
  launcherDir: path.join(home, "bin")
})

const bridgeRuntime = (home: string, nativeHost: NativeHostConfig) =>
  ManagedRuntime.make(
    Loopback.layer({ staticDir: RENDERER }).pipe(
      Layer.provide(
        Bridge.layer({ appVersion: "0.1.0", transport: "loopback", platform: process.platform }, nativeHost)
      ),
      Layer.provide(ToCore.layer({ locate: attachOnly(pathsForHome(home)), version: "0.1.0" }))
    )
  )

/** One world per test file, started before its cases and torn down after them. */
export const deskForFile = (): (() => Desk) => {
  let desk: Desk | undefined
  let teardown: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const home = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-desk-")))
    const env = { PEDELEC_ENABLE_SCRIPTED: "1" }
    let core = await startCoreProcess({ home, env })
    const nativeHost = nativeHostFor(home)
    const runtime = bridgeRuntime(home, nativeHost)
    const loopback = await runtime.runPromise(Effect.service(Loopback))
    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })
    const page = await browser.newPage({ viewport: { width: 1280, height: 820 } })
    const scope = Effect.runSync(Scope.make())
    const host = () =>
      Effect.runPromise(
        connectHost(core.info, { component: "native-host", version: "0.1.0" }).pipe(Scope.provide(scope))
      )
    desk = {
      home,
      nativeHost,
      core: () => core,
      loopback,
      page,
      host,
      stopCore: () => core.stop(),
      startCore: async () => {
        core = await startCoreProcess({ home, env })
      },
      settingsFile: () => readFile(pathsForHome(home).settingsFile, "utf8").catch(() => ""),
      shot: async (name) => {
        await mkdir(SHOTS, { recursive: true })
        await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false })
      }
    }
    teardown = async () => {
      await browser.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
      await core.stop()
      await rm(home, { recursive: true, force: true })
    }
  }, 60_000)
  afterAll(async () => {
    await teardown?.()
  }, 60_000)
  return () => {
    if (desk === undefined) throw new Error("the file's desk has not started")
    return desk
  }
}

/** Opens the renderer fresh on `screen` (its nav label), waiting for the screen's root. */
export const open = async (desk: Desk, screen: string) => {
  // Via about:blank: from the app's own URL, only the fragment would change, which reloads nothing.
  await desk.page.goto("about:blank")
  await desk.page.goto(desk.loopback.pageUrl)
  await desk.page.getByRole("button", { name: screen, exact: true }).click()
  await desk.page.locator(`[data-screen="${screen.toLowerCase()}"]`).waitFor()
}
