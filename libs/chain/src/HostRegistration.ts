/**
 * HostRegistration — registers `com.pedelec.host` for one Chromium profile: Chromium started with `--user-data-dir`
 * reads host manifests only from `<profile>/NativeMessagingHosts/` (research/browser-e2e.md P3), a place
 * @pedelec/host-registration's `install` does not target, so this composes its pure builders (launcherScript,
 * hostManifest) and writes the two files itself. The launcher's node is a two-line shim that appends the host's
 * stderr to a log file: Chromium swallows a host's stderr, and a failing test needs it (P12).
 */
import { chmod, mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { HOST_NAME } from "@pedelec/host-registration/Browsers"
import { hostManifest, manifestText } from "@pedelec/host-registration/HostManifest"
import { launcherFileName, launcherScript, shQuote } from "@pedelec/host-registration/Launcher"
import { LAYOUT } from "./Layout.ts"

export interface HostRegistrationOptions {
  readonly profileDir: string
  readonly pedelecHome: string
  readonly extensionId: string
  /** Where the host's stderr goes. */
  readonly logFile: string
}

export interface RegisteredHost {
  readonly manifestFile: string
  readonly launcherPath: string
}

export const registerHost = async (options: HostRegistrationOptions): Promise<RegisteredHost> => {
  const binDir = path.join(options.profileDir, "pedelec-bin")
  const manifestDir = path.join(options.profileDir, "NativeMessagingHosts")
  await mkdir(binDir, { recursive: true })
  await mkdir(manifestDir, { recursive: true })
  const nodeShim = path.join(binDir, "node-logging-stderr")
  await writeFile(nodeShim, `#!/bin/sh\nexec ${shQuote(process.execPath)} "$@" 2>>${shQuote(options.logFile)}\n`, {
    mode: 0o755
  })
  const launcherPath = path.join(binDir, launcherFileName("linux"))
  const launcher = launcherScript({
    os: "linux",
    nodePath: nodeShim,
    hostEntry: LAYOUT.hostEntry,
    pedelecHome: options.pedelecHome,
    coreCommand: LAYOUT.coreBin
  })
  await writeFile(launcherPath, launcher, { mode: 0o755 })
  // The umask filters the open mode; Chromium refuses a host that is not executable ("Native host has exited.").
  await chmod(launcherPath, 0o755)
  await chmod(nodeShim, 0o755)
  const manifestFile = path.join(manifestDir, `${HOST_NAME}.json`)
  await writeFile(manifestFile, manifestText(hostManifest({ launcherPath, extensionIds: [options.extensionId] })))
  return { manifestFile, launcherPath }
}
