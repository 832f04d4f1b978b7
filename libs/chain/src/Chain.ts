/**
 * Chain — the whole chain for one test file or one `npm start`: a Pedelec home with a running headless Core, a
 * fresh Chromium profile with the native host registered in it, the page served on http and https origins, and
 * Chromium with the built extension. Each part is optional where a test needs it missing. `close()` undoes
 * everything that was started, in reverse order, even after a partial start.
 */
import { readFile } from "node:fs/promises"
import path from "node:path"
import { PEDELEC_EXTENSION_ID } from "@pedelec/contracts/Wire"
import type { BrowserContext, Page } from "playwright-core"
import { launchBrowser } from "./Browser.ts"
import { makeCertificate } from "./Certificate.ts"
import { type CoreOptions, type RunningCore, startCore } from "./Core.ts"
import { registerHost } from "./HostRegistration.ts"
import { extensionIdOf, LAYOUT } from "./Layout.ts"
import { type Origins, type Routes, serve } from "./Servers.ts"
import { removeDir, tempDir } from "./Temp.ts"

export interface ChainOptions {
  readonly routes: Routes
  /** An existing Pedelec home (npm start); a temp one, removed at close, by default. */
  readonly home?: string
  /** Start a Core (default true); `false` when the test needs none or one already runs for `home`. */
  readonly core?: boolean | Omit<CoreOptions, "home">
  readonly registerHost?: boolean
  readonly loadExtension?: boolean
  readonly https?: boolean
  readonly headless?: boolean
  /** Unpacked extensions loaded beside Pedelec's (the bench's echo relay). */
  readonly extraExtensionDirs?: ReadonlyArray<string>
  /** More Chromium flags (the WebMCP suite's `--enable-features=WebMCP`). */
  readonly extraFlags?: ReadonlyArray<string>
  /** Runs on the fresh profile before Chromium starts, e.g. to register another native host in it. */
  readonly prepareProfile?: (profileDir: string) => Promise<void>
}

export interface Chain {
  readonly home: string
  readonly core: RunningCore | undefined
  readonly context: BrowserContext
  readonly origins: Origins
  readonly extensionId: string
  /** The native host's stderr so far (every host process the browser started appends to it). */
  readonly hostLog: () => Promise<string>
  /** A new tab on `origin`'s test page, once the page's module has loaded. */
  readonly openPage: (origin: string, pathname?: string) => Promise<Page>
  readonly close: () => Promise<void>
}

const SCRIPTED_CORE: Omit<CoreOptions, "home"> = { enableScripted: true, defaultProvider: "scripted" }

export const startChain = async (options: ChainOptions): Promise<Chain> => {
  const cleanups: Array<() => Promise<unknown>> = []
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
  }
  try {
    const home = options.home ?? (await tempDir("home"))
    if (options.home === undefined) cleanups.push(() => removeDir(home))
    const scratch = await tempDir("run")
    cleanups.push(() => removeDir(scratch))
    const profileDir = path.join(scratch, "profile")
    const logFile = path.join(scratch, "native-host.log")
    const loadExtension = options.loadExtension !== false
    // Without the extension the page still needs an id to ask for: the published one, which nothing answers to.
    const extensionId = loadExtension ? extensionIdOf(LAYOUT.extensionDir) : PEDELEC_EXTENSION_ID

    const coreOptions = options.core === false ? undefined : options.core === true ? {} : (options.core ?? {})
    const core = coreOptions === undefined ? undefined : await startCore({ ...SCRIPTED_CORE, ...coreOptions, home })
    if (core !== undefined) cleanups.push(core.stop)

    if (options.registerHost !== false) {
      await registerHost({ profileDir, pedelecHome: home, extensionId, logFile })
    }
    if (options.prepareProfile !== undefined) await options.prepareProfile(profileDir)
    const certificate = options.https === false ? undefined : await makeCertificate(scratch)
    const origins = await serve(options.routes, certificate)
    cleanups.push(origins.close)

    const context = await launchBrowser({
      profileDir,
      extensionDir: loadExtension ? LAYOUT.extensionDir : undefined,
      extensionId,
      ...(options.extraExtensionDirs === undefined ? {} : { extraExtensionDirs: options.extraExtensionDirs }),
      ...(options.extraFlags === undefined ? {} : { extraFlags: options.extraFlags }),
      headless: options.headless ?? true
    })
    cleanups.push(() => context.close())

    const openPage = async (origin: string, pathname = "/") => {
      const page = await context.newPage()
      await page.goto(new URL(pathname, origin).toString())
      // The test page says when its module ran (or failed to load); a page without #state is ready once loaded.
      const state = await page.waitForFunction(
        () => {
          const text = document.getElementById("state")?.textContent ?? "ready"
          return text === "loading" ? false : text
        },
        undefined,
        { timeout: 15_000 }
      )
      const text = await state.jsonValue()
      if (text !== "ready") throw new Error(`${origin}${pathname}: ${text}`)
      return page
    }
    const hostLog = () => readFile(logFile, "utf8").catch(() => "(the native host wrote nothing)")
    return { home, core, context, origins, extensionId, hostLog, openPage, close }
  } catch (error) {
    await close()
    throw error
  }
}
