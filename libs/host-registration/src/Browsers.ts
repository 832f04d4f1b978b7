/**
 * Browsers — where Chrome, Chromium, Edge and Brave look for the `com.pedelec.host` manifest on Linux, macOS and
 * Windows (user-level locations only), plus the host name, the default extension id and the id check. Pure path
 * arithmetic with no effect imports, so pedelec-cli's fast path (argument checks) can use it. Writing files and
 * registry keys is Install's job, not this module's.
 */
import path from "node:path"

export const HOST_NAME = "com.pedelec.host"

export { PEDELEC_EXTENSION_ID } from "@pedelec/contracts/Wire"

export const BROWSERS = ["chrome", "chromium", "edge", "brave"] as const
export type Browser = (typeof BROWSERS)[number]

export const OSES = ["linux", "darwin", "win32"] as const
export type Os = (typeof OSES)[number]

export const isBrowser = (value: string): value is Browser => (BROWSERS as ReadonlyArray<string>).includes(value)

/** The OS this process runs on, or undefined where Chromium native messaging has no user-level registration. */
export const osOf = (platform: NodeJS.Platform): Os | undefined =>
  (OSES as ReadonlyArray<string>).includes(platform) ? (platform as Os) : undefined

/** A Chrome extension id: 32 letters a–p (the hex digits of a key hash, shifted). */
export const isExtensionId = (id: string): boolean => /^[a-p]{32}$/.test(id)

export type Environment = Readonly<Record<string, string | undefined>>

export interface PathsInput {
  readonly os: Os
  readonly browser: Browser
  readonly homedir: string
  readonly env: Environment
}

export interface ManifestLocation {
  readonly os: Os
  readonly browser: Browser
  /** `<dir>/com.pedelec.host.json`. */
  readonly manifestFile: string
  readonly manifestDir: string
  /**
   * Directories install may have to create, innermost first; uninstall removes each one that is left empty. The
   * shared config base (`~/.config`, `~/Library/Application Support`, `%LOCALAPPDATA%`) is never among them.
   */
  readonly ownedDirs: ReadonlyArray<string>
  /** The browser's default user-data dir: present means the browser has run for this user (detection). */
  readonly profileRoot: string
  /** Windows only: the HKCU key whose default value is `manifestFile`. */
  readonly registryKey?: string
}

/*
 * Sources. Chrome's native messaging guide (developer.chrome.com/docs/extensions/develop/concepts/native-messaging,
 * section "Native messaging host location") is the reference for Chrome and Chromium: user-level manifests in
 * `~/.config/{google-chrome,chromium}/NativeMessagingHosts/` (Linux) and `~/Library/Application Support/
 * {Google/Chrome,Chromium}/NativeMessagingHosts/` (macOS); on Windows a manifest anywhere plus
 * `HKCU\Software\Google\Chrome\NativeMessagingHosts\<name>` (Chromium: `HKCU\Software\Chromium\…`) whose default
 * value is the manifest's full path. Checked through excerpts of that page, of Chrome's sample host README
 * (the HKCU key and its default value) and of installers that write the same paths; the location section itself was
 * not in the excerpts. Edge's `HKCU\Software\Microsoft\Edge\NativeMessagingHosts\<name>` is Microsoft's (Edge
 * extensions guide, "native messaging"). Edge's and Brave's Linux/macOS folders and Brave's Windows key follow the
 * same rule (NativeMessagingHosts inside the browser's default user-data dir; the key under its own HKCU vendor key)
 * and match what existing installers write, but no vendor page states them. The folder being inside the default
 * user-data dir is also why a Chromium started with `--user-data-dir` does not see them (research/browser-e2e.md §4.1).
 */
const LINUX_ROOTS: Readonly<Record<Browser, ReadonlyArray<string>>> = {
  chrome: ["google-chrome"],
  chromium: ["chromium"],
  edge: ["microsoft-edge"],
  brave: ["BraveSoftware", "Brave-Browser"]
}

const MAC_ROOTS: Readonly<Record<Browser, ReadonlyArray<string>>> = {
  chrome: ["Google", "Chrome"],
  chromium: ["Chromium"],
  edge: ["Microsoft Edge"],
  brave: ["BraveSoftware", "Brave-Browser"]
}

/** Windows user-data dirs under %LOCALAPPDATA%, used for detection only. */
const WINDOWS_PROFILES: Readonly<Record<Browser, ReadonlyArray<string>>> = {
  chrome: ["Google", "Chrome", "User Data"],
  chromium: ["Chromium", "User Data"],
  edge: ["Microsoft", "Edge", "User Data"],
  brave: ["BraveSoftware", "Brave-Browser", "User Data"]
}

const WINDOWS_KEYS: Readonly<Record<Browser, string>> = {
  chrome: "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts",
  chromium: "HKCU\\Software\\Chromium\\NativeMessagingHosts",
  edge: "HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts",
  brave: "HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts"
}

export const registryKey = (browser: Browser): string => `${WINDOWS_KEYS[browser]}\\${HOST_NAME}`

const nonEmpty = (value: string | undefined): string | undefined =>
  value !== undefined && value.length > 0 ? value : undefined

/** `parts` joined under `base`, with every prefix (innermost first) as a directory install may create. */
const nested = (join: (...parts: Array<string>) => string, base: string, parts: ReadonlyArray<string>) => {
  const dirs: Array<string> = []
  for (let i = 1; i <= parts.length; i++) dirs.unshift(join(base, ...parts.slice(0, i)))
  return { dir: dirs[0]!, dirs }
}

export const manifestPaths = ({ os, browser, homedir, env }: PathsInput): ManifestLocation => {
  if (os === "win32") {
    const { join } = path.win32
    const localAppData = nonEmpty(env.LOCALAPPDATA) ?? join(homedir, "AppData", "Local")
    // One manifest per browser (same content), so uninstalling one browser leaves the others' files alone.
    const { dir, dirs } = nested(join, localAppData, ["Pedelec", "NativeMessagingHosts", browser])
    return {
      os,
      browser,
      manifestDir: dir,
      manifestFile: join(dir, `${HOST_NAME}.json`),
      ownedDirs: dirs,
      profileRoot: join(localAppData, ...WINDOWS_PROFILES[browser]),
      registryKey: registryKey(browser)
    }
  }
  const { join, isAbsolute } = path.posix
  // Chrome on Linux puts its user-data dir under $XDG_CONFIG_HOME when that is set (and absolute).
  const xdg = nonEmpty(env.XDG_CONFIG_HOME)
  const base =
    os === "linux"
      ? xdg !== undefined && isAbsolute(xdg)
        ? xdg
        : join(homedir, ".config")
      : join(homedir, "Library", "Application Support")
  const roots = os === "linux" ? LINUX_ROOTS[browser] : MAC_ROOTS[browser]
  const profile = nested(join, base, roots)
  const dir = join(profile.dir, "NativeMessagingHosts")
  return {
    os,
    browser,
    manifestDir: dir,
    manifestFile: join(dir, `${HOST_NAME}.json`),
    ownedDirs: [dir, ...profile.dirs],
    profileRoot: profile.dir
  }
}

/** Path arithmetic for `os`, whatever this process runs on (tests compute Windows paths on Linux). */
export const pathsFor = (os: Os): path.PlatformPath => (os === "win32" ? path.win32 : path.posix)
