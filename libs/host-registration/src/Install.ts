/**
 * Install — registers and unregisters `com.pedelec.host`: writes the launcher (0755) and one manifest (0644) per
 * browser, plus the HKCU key on Windows; uninstall removes exactly those (and the directories install created, once
 * empty) and nothing else. Both return a report of every path and key touched. Shared by pedelec-cli and the
 * desktop app, so it knows nothing of either: no printing, no argv, no defaults beyond this user's home.
 */
import os from "node:os"
import * as Effect from "effect/Effect"
import { BROWSERS, type Browser, type Environment, manifestPaths, type Os, pathsFor } from "./Browsers.ts"
import { hostManifest, manifestText } from "./HostManifest.ts"
import { launcherFileName, launcherScript } from "./Launcher.ts"
import { RegistrationError } from "./RegistrationError.ts"
import { nodeIo, type RegistrationIo } from "./RegistrationIo.ts"
import { regCommands } from "./Registry.ts"

export type TouchedKind = "launcher" | "manifest" | "registry" | "directory"
/** `written`/`created`/`removed` are what happened, or what would with `dryRun`; `absent`: nothing to remove. */
export type TouchedAction = "written" | "created" | "removed" | "absent" | "kept"

export interface Touched {
  readonly kind: TouchedKind
  readonly action: TouchedAction
  /** A file or directory path, or a registry key. */
  readonly target: string
  readonly browser?: Browser
}

export interface RegistrationReport {
  readonly operation: "install" | "uninstall"
  readonly os: Os
  readonly browsers: ReadonlyArray<Browser>
  readonly dryRun: boolean
  readonly touched: ReadonlyArray<Touched>
}

interface Where {
  readonly os: Os
  readonly browsers: ReadonlyArray<Browser>
  /** Where the launcher lives (`$PEDELEC_HOME/bin`). */
  readonly launcherDir: string
  readonly dryRun?: boolean
  /** Default: this user's home and environment. */
  readonly homedir?: string
  readonly env?: Environment
}

export interface InstallOptions extends Where {
  readonly extensionIds: ReadonlyArray<string>
  readonly nodePath: string
  readonly hostEntry: string
  readonly pedelecHome: string
  readonly coreCommand: string
  readonly electronRunAsNode?: boolean
}

export type UninstallOptions = Where

const MANIFEST_MODE = 0o644
const LAUNCHER_MODE = 0o755

const locate = (where: Where, browser: Browser) =>
  manifestPaths({ os: where.os, browser, homedir: where.homedir ?? os.homedir(), env: where.env ?? process.env })

const io = <A>(target: string, what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (error) =>
      new RegistrationError({
        reason: "FileSystem",
        message: `Could not ${what} ${target}: ${error instanceof Error ? error.message : String(error)}`,
        target
      })
  })

const reg = (deps: RegistrationIo, argv: ReadonlyArray<string>, key: string) =>
  Effect.tryPromise({
    try: () => deps.reg(argv),
    catch: (error) =>
      new RegistrationError({ reason: "Registry", message: `Could not run reg.exe: ${String(error)}`, target: key })
  })

/** Pure checks and texts first, so bad input fails before anything is written. */
const prepare = (options: InstallOptions) =>
  Effect.try({
    try: () => {
      const launcherPath = pathsFor(options.os).join(options.launcherDir, launcherFileName(options.os))
      const launcher = launcherScript(options)
      const manifest = manifestText(hostManifest({ launcherPath, extensionIds: options.extensionIds }))
      return { launcherPath, launcher, manifest }
    },
    catch: (error) =>
      error instanceof RegistrationError
        ? error
        : new RegistrationError({ reason: "InvalidInput", message: String(error) })
  })

/** Creates each missing directory, outermost first, reporting the ones it created. */
const ensureDirs = (deps: RegistrationIo, dirs: ReadonlyArray<string>, dryRun: boolean, touched: Array<Touched>) =>
  Effect.forEach([...dirs].reverse(), (dir) =>
    Effect.gen(function* () {
      if (yield* io(dir, "check", () => deps.fs.exists(dir))) return
      if (!dryRun) yield* io(dir, "create", () => deps.fs.mkdir(dir))
      touched.push({ kind: "directory", action: "created", target: dir })
    })
  )

export const install = Effect.fn("HostRegistration.install")(function* (
  options: InstallOptions,
  deps: RegistrationIo = nodeIo
) {
  const dryRun = options.dryRun ?? false
  const { launcherPath, launcher, manifest } = yield* prepare(options)
  const touched: Array<Touched> = []
  const { dirname } = pathsFor(options.os)
  yield* ensureDirs(deps, [dirname(launcherPath)], dryRun, touched)
  if (!dryRun) yield* io(launcherPath, "write", () => deps.fs.writeFile(launcherPath, launcher, LAUNCHER_MODE))
  touched.push({ kind: "launcher", action: "written", target: launcherPath })
  for (const browser of options.browsers) {
    const location = locate(options, browser)
    yield* ensureDirs(deps, location.ownedDirs, dryRun, touched)
    const file = location.manifestFile
    if (!dryRun) yield* io(file, "write", () => deps.fs.writeFile(file, manifest, MANIFEST_MODE))
    touched.push({ kind: "manifest", action: "written", target: file, browser })
    if (options.os !== "win32") continue
    const commands = regCommands({ browser, manifestFile: file })
    if (!dryRun) {
      const result = yield* reg(deps, commands.add, commands.key)
      if (result.code !== 0)
        return yield* new RegistrationError({
          reason: "Registry",
          message: `reg.exe could not set ${commands.key} (exit ${result.code}): ${result.stderr.trim()}`,
          target: commands.key
        })
    }
    touched.push({ kind: "registry", action: "written", target: commands.key, browser })
  }
  const report: RegistrationReport = {
    operation: "install",
    os: options.os,
    browsers: options.browsers,
    dryRun,
    touched
  }
  return report
})

const removeFile = (deps: RegistrationIo, file: string, dryRun: boolean) =>
  dryRun ? io(file, "check", () => deps.fs.exists(file)) : io(file, "remove", () => deps.fs.removeFile(file))

/** Removes the directories install may have created, innermost first, each only if it is now empty. */
const pruneDirs = (deps: RegistrationIo, dirs: ReadonlyArray<string>, dryRun: boolean, touched: Array<Touched>) =>
  Effect.forEach(dirs, (dir) =>
    Effect.gen(function* () {
      if (dryRun) return
      if (yield* io(dir, "remove", () => deps.fs.removeEmptyDir(dir)))
        touched.push({ kind: "directory", action: "removed", target: dir })
    })
  )

const unregister = (deps: RegistrationIo, browser: Browser, manifestFile: string, dryRun: boolean) =>
  Effect.gen(function* () {
    const commands = regCommands({ browser, manifestFile })
    const present = (yield* reg(deps, commands.query, commands.key)).code === 0
    if (present && !dryRun) {
      const result = yield* reg(deps, commands.delete, commands.key)
      if (result.code !== 0)
        return yield* new RegistrationError({
          reason: "Registry",
          message: `reg.exe could not delete ${commands.key} (exit ${result.code}): ${result.stderr.trim()}`,
          target: commands.key
        })
    }
    const touched: Touched = { kind: "registry", action: present ? "removed" : "absent", target: commands.key, browser }
    return touched
  })

export const uninstall = Effect.fn("HostRegistration.uninstall")(function* (
  options: UninstallOptions,
  deps: RegistrationIo = nodeIo
) {
  const dryRun = options.dryRun ?? false
  const touched: Array<Touched> = []
  for (const browser of options.browsers) {
    const location = locate(options, browser)
    // The key first: a key pointing at a missing file is worse than a file nothing points at.
    if (options.os === "win32") touched.push(yield* unregister(deps, browser, location.manifestFile, dryRun))
    const removed = yield* removeFile(deps, location.manifestFile, dryRun)
    touched.push({ kind: "manifest", action: removed ? "removed" : "absent", target: location.manifestFile, browser })
    yield* pruneDirs(deps, location.ownedDirs, dryRun, touched)
  }
  // The launcher is shared by every browser: it goes only when no other browser's manifest still points at it.
  const launcherPath = pathsFor(options.os).join(options.launcherDir, launcherFileName(options.os))
  const others = BROWSERS.filter((browser) => !options.browsers.includes(browser))
  const stillUsed = yield* Effect.forEach(others, (browser) => {
    const file = locate(options, browser).manifestFile
    return io(file, "check", () => deps.fs.exists(file))
  })
  if (stillUsed.some(Boolean)) {
    touched.push({ kind: "launcher", action: "kept", target: launcherPath })
  } else {
    const removed = yield* removeFile(deps, launcherPath, dryRun)
    touched.push({ kind: "launcher", action: removed ? "removed" : "absent", target: launcherPath })
    yield* pruneDirs(deps, [options.launcherDir], dryRun, touched)
  }
  const report: RegistrationReport = {
    operation: "uninstall",
    os: options.os,
    browsers: options.browsers,
    dryRun,
    touched
  }
  return report
})

/** The browsers whose default user-data dir exists for this user, i.e. that have run here at least once. */
export const detectBrowsers = Effect.fn("HostRegistration.detectBrowsers")(function* (
  where: Omit<Where, "browsers" | "launcherDir">,
  deps: RegistrationIo = nodeIo
) {
  const found = yield* Effect.forEach(BROWSERS, (browser) => {
    const root = locate({ ...where, browsers: [], launcherDir: "" }, browser).profileRoot
    return io(root, "check", () => deps.fs.exists(root))
  })
  return BROWSERS.filter((_, index) => found[index])
})
