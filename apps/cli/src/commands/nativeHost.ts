/**
 * `pedelec-cli install-native-host | uninstall-native-host`: registers `com.pedelec.host` with the browsers for
 * users without the desktop app, through @pedelec/host-registration (which owns every path and file format). This
 * module only picks the inputs — this node, the sibling host entry and Core bin, `$PEDELEC_HOME/bin` — and prints
 * the report. It never talks to Core.
 */
import { existsSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import { BROWSERS, type Os, osOf, PEDELEC_EXTENSION_ID } from "@pedelec/host-registration/Browsers"
import {
  detectBrowsers,
  install,
  type RegistrationReport,
  type Touched,
  uninstall
} from "@pedelec/host-registration/Install"
import type { RegistrationError } from "@pedelec/host-registration/RegistrationError"
import * as Effect from "effect/Effect"
import type { LocalCommand } from "../Args.ts"
import { CliFailure } from "../CliFailure.ts"
import { type Outcome, succeeded, text } from "../Output.ts"
import { siblings } from "../Siblings.ts"

type Install = Extract<LocalCommand, { readonly _tag: "InstallNativeHost" }>
type Uninstall = Extract<LocalCommand, { readonly _tag: "UninstallNativeHost" }>

const failure = (error: RegistrationError): CliFailure =>
  error.reason === "InvalidInput"
    ? CliFailure.usage("INVALID_INPUT", error.message)
    : CliFailure.of("INTERNAL_ERROR", `${error.message}. Nothing was rolled back; fix it and run the command again.`)

const currentOs = (): Effect.Effect<Os, CliFailure> => {
  const current = osOf(process.platform)
  return current === undefined
    ? Effect.fail(
        CliFailure.of("NATIVE_HOST_UNAVAILABLE", `Native messaging hosts cannot be registered on ${process.platform}.`)
      )
    : Effect.succeed(current)
}

const launcherDir = () => path.join(resolveCorePaths().home, "bin")

const missing = (what: string, file: string, hint: string) =>
  CliFailure.of("NATIVE_HOST_UNAVAILABLE", `The ${what} is missing at ${file}: ${hint}.`, { file })

export const installNativeHost = Effect.fn("installNativeHost")(function* (command: Install) {
  const current = yield* currentOs()
  const { hostEntry, coreCommand } = siblings(process.env)
  // A manifest pointing at a host that cannot start only shows up later as "Native host has exited".
  if (!existsSync(hostEntry))
    return yield* missing("native host", hostEntry, "build apps/native-host or set PEDELEC_NATIVE_HOST_ENTRY")
  if (!existsSync(coreCommand))
    return yield* missing("headless Core", coreCommand, "build apps/core-daemon or set PEDELEC_CORE_BIN")
  const where = { os: current, homedir: os.homedir(), env: process.env }
  const detected = command.browsers === undefined ? yield* detectBrowsers(where).pipe(Effect.mapError(failure)) : []
  const browsers = command.browsers ?? (detected.length > 0 ? detected : BROWSERS)
  const report = yield* install({
    ...where,
    browsers,
    extensionIds: command.extensionIds.length > 0 ? command.extensionIds : [PEDELEC_EXTENSION_ID],
    launcherDir: launcherDir(),
    nodePath: process.execPath,
    hostEntry,
    pedelecHome: resolveCorePaths().home,
    coreCommand
  }).pipe(Effect.mapError(failure))
  return shown(report, command.json)
})

export const uninstallNativeHost = Effect.fn("uninstallNativeHost")(function* (command: Uninstall) {
  const current = yield* currentOs()
  const report = yield* uninstall({
    os: current,
    browsers: command.browsers ?? BROWSERS,
    launcherDir: launcherDir(),
    homedir: os.homedir(),
    env: process.env
  }).pipe(Effect.mapError(failure))
  return shown(report, command.json)
})

const VERBS: Readonly<Record<Touched["action"], string>> = {
  written: "wrote",
  created: "created",
  removed: "removed",
  absent: "not found",
  kept: "kept (still used)"
}

const line = (touched: Touched): string =>
  `  ${VERBS[touched.action].padEnd(17)} ${touched.kind.padEnd(9)} ${touched.target}${touched.browser ? ` (${touched.browser})` : ""}`

export const describeReport = (report: RegistrationReport): string => {
  const names = report.browsers.join(", ")
  const head =
    report.operation === "install"
      ? `Registered com.pedelec.host for ${names}${report.dryRun ? " (dry run: nothing written)" : ""}.`
      : `Unregistered com.pedelec.host from ${names}.`
  return [head, ...report.touched.map(line)].join("\n")
}

const shown = (report: RegistrationReport, json: boolean): Outcome =>
  json ? succeeded(report) : text(describeReport(report))
