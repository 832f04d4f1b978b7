/**
 * NativeHostSetup — registering `com.pedelec.host` for every browser detected for this user, at each start, so a
 * moved or updated app repairs its own registration: the launcher runs the app's bundled native host on the app's
 * own runtime (`ELECTRON_RUN_AS_NODE=1` under Electron). Every path and file format is host-registration's; this
 * module picks the inputs and turns a failure into the problem the tray shows. No browser detected registers nothing
 * and is no problem: the next start looks again.
 */
import { existsSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import type { CorePathsShape } from "@pedelec/core-client/HomeLayout"
import { type Environment, type Os, osOf, PEDELEC_EXTENSION_ID } from "@pedelec/host-registration/Browsers"
import { detectBrowsers, install, type RegistrationReport } from "@pedelec/host-registration/Install"
import type { RegistrationError } from "@pedelec/host-registration/RegistrationError"
import type { RegistrationIo } from "@pedelec/host-registration/RegistrationIo"
import * as Effect from "effect/Effect"
import type { Problem } from "./TrayView.ts"

export interface NativeHostConfig {
  /** Undefined on an OS where browsers take no user-level native host. */
  readonly os: Os | undefined
  /** Where the browsers' profiles are looked for (this user's home; a temp dir in tests). */
  readonly homedir: string
  readonly env: Environment
  /** The runtime the launcher execs: Electron's binary in the app. */
  readonly nodePath: string
  readonly electronRunAsNode: boolean
  /** The bundled native host entry, and the Core it starts when none runs. */
  readonly hostEntry: string
  readonly coreCommand: string
  readonly pedelecHome: string
  /** `$PEDELEC_HOME/bin`. */
  readonly launcherDir: string
  /** host-registration's file and registry operations; its real ones unless a test swaps them. */
  readonly io?: RegistrationIo
}

/**
 * This user's registration, run by this process's runtime: the app's (Electron's binary, told to behave as node)
 * or node's (`npm run desktop:preview`), for the host and Core of `files`, in `paths`' home.
 */
export const userNativeHost = (
  paths: CorePathsShape,
  files: { readonly hostEntry: string; readonly coreCommand: string }
): NativeHostConfig => ({
  os: osOf(process.platform),
  homedir: os.homedir(),
  env: process.env,
  nodePath: process.execPath,
  electronRunAsNode: process.versions.electron !== undefined,
  hostEntry: files.hostEntry,
  coreCommand: files.coreCommand,
  pedelecHome: paths.home,
  launcherDir: path.join(paths.home, "bin")
})

const problem = (message: string): Problem => ({ code: "NATIVE_HOST_UNAVAILABLE", message })

const failed = (error: RegistrationError) =>
  problem(`${error.message}. Pedelec tries again at its next start; fix it and restart the app.`)

/** The report of what was written (for no browser detected: nothing), or the problem the tray shows. */
export const registerNativeHost = Effect.fn("NativeHostSetup.registerNativeHost")(function* (
  config: NativeHostConfig
): Effect.fn.Return<RegistrationReport | undefined, Problem> {
  if (config.os === undefined) return undefined
  // A manifest naming a host that is not there only shows later, in the browser, as "Native host has exited".
  for (const file of [config.hostEntry, config.coreCommand]) {
    if (!existsSync(file)) return yield* Effect.fail(problem(`${file} is missing: reinstall Pedelec`))
  }
  const where = { os: config.os, homedir: config.homedir, env: config.env }
  const browsers = yield* detectBrowsers(where, config.io).pipe(Effect.mapError(failed))
  if (browsers.length === 0) return undefined
  return yield* install(
    {
      ...where,
      browsers,
      extensionIds: [PEDELEC_EXTENSION_ID],
      launcherDir: config.launcherDir,
      nodePath: config.nodePath,
      electronRunAsNode: config.electronRunAsNode,
      hostEntry: config.hostEntry,
      coreCommand: config.coreCommand,
      pedelecHome: config.pedelecHome
    },
    config.io
  ).pipe(Effect.mapError(failed))
})
