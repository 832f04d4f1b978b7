/**
 * NativeHost — what the bridge answers for Health's native host rows: `status` reads, for every detected browser,
 * the manifest and the launcher and compares them with what this app would write now (registered / missing /
 * stale, with why); `register` writes the launcher and one browser's manifest (Register, and Repair of a stale one)
 * and reads the status again. Every path, text and write is host-registration's, with the inputs main's
 * NativeHostSetup uses at start (the app's bundled host entry, its Core, its runtime); this module only compares.
 * Without a config (a bridge that was given none) both answer NATIVE_HOST_UNAVAILABLE saying so.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import type { NativeHostBrowser, NativeHostRegistration, NativeHostStatus } from "@pedelec/contracts/link/DesktopLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import {
  type Browser,
  manifestPaths,
  type Os,
  PEDELEC_EXTENSION_ID,
  pathsFor
} from "@pedelec/host-registration/Browsers"
import { hostManifest, manifestText } from "@pedelec/host-registration/HostManifest"
import { detectBrowsers, install } from "@pedelec/host-registration/Install"
import { launcherFileName, launcherScript } from "@pedelec/host-registration/Launcher"
import type { RegistrationError } from "@pedelec/host-registration/RegistrationError"
import * as Effect from "effect/Effect"
import type { NativeHostConfig } from "../main/NativeHostSetup.ts"

/** The contracts' browser list and host-registration's are one list: a browser added to one fails to compile here. */
const sameBrowsers: [Browser, NativeHostBrowser] extends [NativeHostBrowser, Browser] ? true : never = true
void sameBrowsers

export interface NativeHostShape {
  readonly status: Effect.Effect<NativeHostStatus, PedelecError>
  readonly register: (browser: NativeHostBrowser) => Effect.Effect<NativeHostStatus, PedelecError>
}

const unavailable = (message: string) =>
  PedelecError.fromCode("NATIVE_HOST_UNAVAILABLE", "desktop", { message, details: { reason: message } })

const failed = (error: RegistrationError) =>
  unavailable(`${error.message}. Fix it (the path must be writable by you), then press Register again.`)

const readText = (file: string) => Effect.promise(() => readFile(file, "utf8").catch(() => undefined))

const launcherPathOf = (config: NativeHostConfig, os: Os) => pathsFor(os).join(config.launcherDir, launcherFileName(os))

/** The launcher's and the manifest's text as this app would write them now. */
const expected = (config: NativeHostConfig, os: Os) =>
  Effect.try({
    try: () => {
      const launcherFile = launcherPathOf(config, os)
      const launcher = launcherScript({ ...config, os })
      const manifest = manifestText(hostManifest({ launcherPath: launcherFile, extensionIds: [PEDELEC_EXTENSION_ID] }))
      return { launcherFile, launcher, manifest }
    },
    catch: (error) => failed(error as RegistrationError)
  })

const manifestPathIn = (text: string) => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && "path" in parsed ? String(parsed.path) : undefined
  } catch {
    return undefined
  }
}

/** Why a manifest on disk is not the one this app writes, in words a user can act on. */
const manifestProblem = (found: string, launcherFile: string) => {
  const points = manifestPathIn(found)
  return points !== undefined && points !== launcherFile
    ? `its manifest starts ${points}, not this app's launcher`
    : "its manifest is not the one this app writes (another extension id or an older install)"
}

type Want = { readonly launcherFile: string; readonly launcher: string; readonly manifest: string }

type Found = Pick<NativeHostRegistration, "state" | "reason">

const stateOf = (found: string | undefined, launcher: string | undefined, want: Want): Found => {
  if (found === undefined) return { state: "missing", reason: "no manifest: this browser cannot start Pedelec" }
  if (found !== want.manifest) return { state: "stale", reason: manifestProblem(found, want.launcherFile) }
  if (launcher === undefined) return { state: "stale", reason: `the launcher ${want.launcherFile} is missing` }
  if (launcher !== want.launcher) return { state: "stale", reason: "the launcher runs another host, runtime or home" }
  return { state: "registered" }
}

const statusOf = (config: NativeHostConfig) =>
  Effect.gen(function* () {
    const os = config.os
    if (os === undefined) {
      return { supported: false, launcherFile: null, hostEntry: config.hostEntry, browsers: [] } as NativeHostStatus
    }
    const where = { os, homedir: config.homedir, env: config.env }
    const browsers = yield* detectBrowsers(where, config.io).pipe(Effect.mapError(failed))
    const want = yield* expected(config, os)
    const launcher = yield* readText(want.launcherFile)
    const rows = yield* Effect.forEach(browsers, (browser) =>
      Effect.gen(function* () {
        const manifestFile = manifestPaths({ ...where, browser }).manifestFile
        const found = stateOf(yield* readText(manifestFile), launcher, want)
        const row: NativeHostRegistration = { browser, manifestFile, ...found }
        return row
      })
    )
    const status: NativeHostStatus = {
      supported: true,
      launcherFile: want.launcherFile,
      hostEntry: config.hostEntry,
      browsers: rows
    }
    return status
  })

const registerOne = (config: NativeHostConfig, browser: NativeHostBrowser) =>
  Effect.gen(function* () {
    const os = config.os
    if (os === undefined) return yield* unavailable("This OS gives browsers no user-level native host to register.")
    // A manifest naming a host that is not there only shows later, in the browser, as "Native host has exited".
    for (const file of [config.hostEntry, config.coreCommand]) {
      if (!existsSync(file)) return yield* unavailable(`${file} is missing: reinstall Pedelec, then register again.`)
    }
    const { homedir, env, launcherDir, nodePath, electronRunAsNode, hostEntry, coreCommand, pedelecHome } = config
    const options = { os, homedir, env, launcherDir, nodePath, electronRunAsNode, hostEntry, coreCommand, pedelecHome }
    yield* install({ ...options, browsers: [browser], extensionIds: [PEDELEC_EXTENSION_ID] }, config.io).pipe(
      Effect.mapError(failed)
    )
    return yield* statusOf(config)
  })

const NOT_GIVEN =
  "This window's bridge was started without the app's native host settings: register from the desktop app, or run `pedelec-cli install-native-host`."

export const makeNativeHost = (config: NativeHostConfig | undefined): NativeHostShape =>
  config === undefined
    ? { status: Effect.fail(unavailable(NOT_GIVEN)), register: () => Effect.fail(unavailable(NOT_GIVEN)) }
    : {
        status: statusOf(config).pipe(Effect.withSpan("NativeHost.status")),
        register: (browser) => registerOne(config, browser).pipe(Effect.withSpan("NativeHost.register"))
      }
