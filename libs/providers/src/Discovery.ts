/**
 * Discovery — finds an agent CLI the way a user's machine has it: every directory of PATH, then the usual per-OS
 * install folders (a desktop app started from the dock does not inherit the shell's PATH, so `~/.local/bin` or
 * Homebrew's folder may be missing from it). Each candidate is asked `--version`; the newest wins, and the path
 * order breaks ties. `detected` turns the result into an adapter's `LocalProvider`; running the CLI is the adapter's.
 */
import { execFile } from "node:child_process"
import { constants } from "node:fs"
import { access, realpath } from "node:fs/promises"
import path from "node:path"
import type { LocalProvider } from "@pedelec/contracts/Desktop"
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"

export interface CliSpec {
  /** Executable names, without an extension (Windows' PATHEXT is tried). */
  readonly commands: ReadonlyArray<string>
  /** Arguments that make the CLI print its version and exit. */
  readonly versionArgs: ReadonlyArray<string>
  /** Extra folders for this CLI, beyond PATH and the common ones (e.g. its own installer's bin folder). */
  readonly extraDirs?: (home: string, platform: NodeJS.Platform) => ReadonlyArray<string>
}

export interface FoundCli {
  readonly path: string
  readonly version: string
}

export interface DiscoveryEnv {
  readonly PATH?: string | undefined
  readonly HOME?: string | undefined
  readonly USERPROFILE?: string | undefined
  readonly APPDATA?: string | undefined
  readonly LOCALAPPDATA?: string | undefined
  readonly PATHEXT?: string | undefined
}

const VERSION_TIMEOUT_MS = 10_000
const VERSION_PATTERN = /(\d+)\.(\d+)(?:\.(\d+))?/

/** The folders CLIs installed by npm, pipx-like installers, Homebrew or Volta usually land in. */
export const commonDirs = (env: DiscoveryEnv, platform: NodeJS.Platform): ReadonlyArray<string> => {
  const home = env.HOME ?? env.USERPROFILE ?? ""
  if (platform === "win32") {
    return [
      env.APPDATA === undefined ? "" : path.win32.join(env.APPDATA, "npm"),
      env.LOCALAPPDATA === undefined ? "" : path.win32.join(env.LOCALAPPDATA, "Programs"),
      home === "" ? "" : path.win32.join(home, ".local", "bin")
    ].filter((dir) => dir !== "")
  }
  const inHome =
    home === "" ? [] : [".local/bin", ".npm-global/bin", ".volta/bin", "bin"].map((d) => path.join(home, d))
  const system = platform === "darwin" ? ["/opt/homebrew/bin", "/usr/local/bin"] : ["/usr/local/bin", "/usr/bin"]
  return [...inHome, ...system]
}

/** `1.2.10` > `1.2.9`; what is not a version sorts first. */
export const compareVersions = (a: string, b: string): number => {
  const parse = (text: string) => (VERSION_PATTERN.exec(text) ?? []).slice(1, 4).map((part) => Number(part ?? 0))
  const [left, right] = [parse(a), parse(b)]
  for (let i = 0; i < 3; i++) {
    const difference = (left[i] ?? -1) - (right[i] ?? -1)
    if (difference !== 0) return difference
  }
  return 0
}

/** The first `x.y[.z]` in a CLI's version output (`claude 2.1.197 (Claude Code)`, `codex-cli 0.171.0`). */
export const versionIn = (output: string): string | undefined => {
  const match = VERSION_PATTERN.exec(output)
  return match === null ? undefined : match[0]
}

const isExecutable = (file: string) =>
  access(file, constants.X_OK).then(
    () => true,
    () => false
  )

/** Every existing executable for `spec`, deduplicated by real path, in search order. */
export const candidates = async (
  spec: CliSpec,
  env: DiscoveryEnv,
  platform: NodeJS.Platform
): Promise<ReadonlyArray<string>> => {
  const delimiter = platform === "win32" ? ";" : ":"
  const home = env.HOME ?? env.USERPROFILE ?? ""
  const dirs = [
    ...(env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""),
    ...commonDirs(env, platform),
    ...(spec.extraDirs?.(home, platform) ?? [])
  ]
  const extensions = platform === "win32" ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";")] : [""]
  const seen = new Set<string>()
  const found: Array<string> = []
  for (const dir of dirs) {
    for (const command of spec.commands) {
      for (const extension of extensions) {
        const file = path.join(dir, `${command}${extension.toLowerCase()}`)
        if (!(await isExecutable(file))) continue
        const real = await realpath(file).catch(() => file)
        if (seen.has(real)) continue
        seen.add(real)
        found.push(file)
      }
    }
  }
  return found
}

const askVersion = (file: string, args: ReadonlyArray<string>, env: DiscoveryEnv) =>
  new Promise<string | undefined>((resolve) => {
    execFile(file, [...args], { timeout: VERSION_TIMEOUT_MS, env: { ...process.env, ...env } }, (error, stdout) =>
      resolve(error === null ? versionIn(stdout) : undefined)
    )
  })

/** Every copy looked at: the newest that answered `--version`, and those that did not (for the user's message). */
export interface Discovered {
  readonly best: FoundCli | undefined
  readonly unanswered: ReadonlyArray<string>
}

const discoverAll = async (spec: CliSpec, env: DiscoveryEnv, platform: NodeJS.Platform): Promise<Discovered> => {
  let best: FoundCli | undefined
  const unanswered: Array<string> = []
  for (const file of await candidates(spec, env, platform)) {
    const version = await askVersion(file, spec.versionArgs, env)
    if (version === undefined) unanswered.push(file)
    else if (best === undefined || compareVersions(version, best.version) > 0) best = { path: file, version }
  }
  return { best, unanswered }
}

/** The newest working copy of the CLI, or undefined when none answers `--version`. */
export const discover = (
  spec: CliSpec,
  env: DiscoveryEnv = process.env,
  platform: NodeJS.Platform = process.platform
): Effect.Effect<FoundCli | undefined> => Effect.promise(async () => (await discoverAll(spec, env, platform)).best)

/** A copy exists but would not say its version (broken install, or a machine too busy to start it in time). */
const unansweredMessage = (files: ReadonlyArray<string>, args: ReadonlyArray<string>) =>
  `Found ${files.join(", ")}, but \`${[files[0], ...args].join(" ")}\` failed or did not answer within ` +
  `${VERSION_TIMEOUT_MS / 1000} s. Check that it runs from a terminal, then rescan providers.`

export interface Detected {
  /** Looks again (a rescan) and reports what `listProviders()` shows. */
  readonly detect: Effect.Effect<LocalProvider>
  /** The CLI a session starts: the one found last, else a fresh look. */
  readonly cli: Effect.Effect<FoundCli | undefined>
}

/** An adapter's `detect` over Discovery, remembering the copy found so that starting a session needs no new look. */
export const detected = (
  about: Omit<ProviderInfo, "available" | "version" | "error">,
  spec: CliSpec,
  notFound: string,
  env?: DiscoveryEnv
): Detected => {
  let found: FoundCli | undefined
  const look = Effect.promise(() => discoverAll(spec, env ?? process.env, process.platform)).pipe(
    Effect.tap((discovered) => Effect.sync(() => (found = discovered.best)))
  )
  const detect = Effect.map(look, ({ best, unanswered }): LocalProvider => {
    if (best !== undefined)
      return { ...about, available: true, version: best.version, error: null, location: best.path }
    const error = unanswered.length > 0 ? unansweredMessage(unanswered, spec.versionArgs) : notFound
    return { ...about, available: false, version: null, error, location: null }
  })
  const find = Effect.map(look, (discovered) => discovered.best)
  return { detect, cli: Effect.suspend(() => (found === undefined ? find : Effect.succeed(found))) }
}
