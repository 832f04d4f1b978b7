// Where each browser looks, for every OS × browser, plus the host name, the default id and the id check.
import { describe, expect, it } from "vitest"
import {
  BROWSERS,
  type Browser,
  HOST_NAME,
  isExtensionId,
  manifestPaths,
  type Os,
  osOf,
  PEDELEC_EXTENSION_ID
} from "../src/Browsers.ts"

const LINUX_HOME = "/home/ada"
const MAC_HOME = "/Users/ada"
const WIN_HOME = "C:\\Users\\ada"
const WIN_ENV = { LOCALAPPDATA: "C:\\Users\\ada\\AppData\\Local" }

interface Row {
  readonly os: Os
  readonly browser: Browser
  readonly dir: string
  readonly profileRoot: string
  readonly key?: string
}

const TABLE: ReadonlyArray<Row> = [
  {
    os: "linux",
    browser: "chrome",
    dir: "/home/ada/.config/google-chrome/NativeMessagingHosts",
    profileRoot: "/home/ada/.config/google-chrome"
  },
  {
    os: "linux",
    browser: "chromium",
    dir: "/home/ada/.config/chromium/NativeMessagingHosts",
    profileRoot: "/home/ada/.config/chromium"
  },
  {
    os: "linux",
    browser: "edge",
    dir: "/home/ada/.config/microsoft-edge/NativeMessagingHosts",
    profileRoot: "/home/ada/.config/microsoft-edge"
  },
  {
    os: "linux",
    browser: "brave",
    dir: "/home/ada/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    profileRoot: "/home/ada/.config/BraveSoftware/Brave-Browser"
  },
  {
    os: "darwin",
    browser: "chrome",
    dir: "/Users/ada/Library/Application Support/Google/Chrome/NativeMessagingHosts",
    profileRoot: "/Users/ada/Library/Application Support/Google/Chrome"
  },
  {
    os: "darwin",
    browser: "chromium",
    dir: "/Users/ada/Library/Application Support/Chromium/NativeMessagingHosts",
    profileRoot: "/Users/ada/Library/Application Support/Chromium"
  },
  {
    os: "darwin",
    browser: "edge",
    dir: "/Users/ada/Library/Application Support/Microsoft Edge/NativeMessagingHosts",
    profileRoot: "/Users/ada/Library/Application Support/Microsoft Edge"
  },
  {
    os: "darwin",
    browser: "brave",
    dir: "/Users/ada/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    profileRoot: "/Users/ada/Library/Application Support/BraveSoftware/Brave-Browser"
  },
  {
    os: "win32",
    browser: "chrome",
    dir: "C:\\Users\\ada\\AppData\\Local\\Pedelec\\NativeMessagingHosts\\chrome",
    profileRoot: "C:\\Users\\ada\\AppData\\Local\\Google\\Chrome\\User Data",
    key: "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\com.pedelec.host"
  },
  {
    os: "win32",
    browser: "chromium",
    dir: "C:\\Users\\ada\\AppData\\Local\\Pedelec\\NativeMessagingHosts\\chromium",
    profileRoot: "C:\\Users\\ada\\AppData\\Local\\Chromium\\User Data",
    key: "HKCU\\Software\\Chromium\\NativeMessagingHosts\\com.pedelec.host"
  },
  {
    os: "win32",
    browser: "edge",
    dir: "C:\\Users\\ada\\AppData\\Local\\Pedelec\\NativeMessagingHosts\\edge",
    profileRoot: "C:\\Users\\ada\\AppData\\Local\\Microsoft\\Edge\\User Data",
    key: "HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\com.pedelec.host"
  },
  {
    os: "win32",
    browser: "brave",
    dir: "C:\\Users\\ada\\AppData\\Local\\Pedelec\\NativeMessagingHosts\\brave",
    profileRoot: "C:\\Users\\ada\\AppData\\Local\\BraveSoftware\\Brave-Browser\\User Data",
    key: "HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\com.pedelec.host"
  }
]

const homeOf = (os: Os) => (os === "linux" ? LINUX_HOME : os === "darwin" ? MAC_HOME : WIN_HOME)
const envOf = (os: Os) => (os === "win32" ? WIN_ENV : {})
const sep = (os: Os) => (os === "win32" ? "\\" : "/")

describe("manifestPaths", () => {
  it("covers every OS × browser", () => {
    expect(TABLE.length).toBe(3 * BROWSERS.length)
  })

  it.each(TABLE)("$os $browser", ({ os, browser, dir, profileRoot, key }) => {
    const location = manifestPaths({ os, browser, homedir: homeOf(os), env: envOf(os) })
    expect(location.manifestDir).toBe(dir)
    expect(location.manifestFile).toBe(`${dir}${sep(os)}${HOST_NAME}.json`)
    expect(location.profileRoot).toBe(profileRoot)
    expect(location.registryKey).toBe(key)
    // Install creates at most these; the shared config base is never one of them, so uninstall cannot remove it.
    expect(location.ownedDirs[0]).toBe(dir)
    for (const owned of location.ownedDirs) expect(dir.startsWith(owned)).toBe(true)
    const base =
      os === "linux"
        ? "/home/ada/.config"
        : os === "darwin"
          ? `${MAC_HOME}/Library/Application Support`
          : WIN_ENV.LOCALAPPDATA
    expect(location.ownedDirs).not.toContain(base)
    expect(location.ownedDirs.every((owned) => owned.startsWith(`${base}${sep(os)}`))).toBe(true)
  })

  it("follows XDG_CONFIG_HOME on Linux when it is absolute", () => {
    const xdg = manifestPaths({ os: "linux", browser: "chrome", homedir: LINUX_HOME, env: { XDG_CONFIG_HOME: "/xdg" } })
    expect(xdg.manifestFile).toBe("/xdg/google-chrome/NativeMessagingHosts/com.pedelec.host.json")
    const relative = manifestPaths({
      os: "linux",
      browser: "chrome",
      homedir: LINUX_HOME,
      env: { XDG_CONFIG_HOME: "x" }
    })
    expect(relative.manifestDir).toBe("/home/ada/.config/google-chrome/NativeMessagingHosts")
    const mac = manifestPaths({ os: "darwin", browser: "chrome", homedir: MAC_HOME, env: { XDG_CONFIG_HOME: "/xdg" } })
    expect(mac.manifestDir.startsWith("/Users/ada/Library/")).toBe(true)
  })

  it("falls back to <home>\\AppData\\Local without LOCALAPPDATA", () => {
    const location = manifestPaths({ os: "win32", browser: "edge", homedir: WIN_HOME, env: {} })
    expect(location.manifestFile).toBe(
      "C:\\Users\\ada\\AppData\\Local\\Pedelec\\NativeMessagingHosts\\edge\\com.pedelec.host.json"
    )
  })
})

describe("names", () => {
  it("accepts exactly 32 letters a-p as an extension id", () => {
    expect(isExtensionId(PEDELEC_EXTENSION_ID)).toBe(true)
    expect(isExtensionId("a".repeat(32))).toBe(true)
    for (const bad of ["", "a".repeat(31), "a".repeat(33), `${"a".repeat(31)}q`, "A".repeat(32), `${"a".repeat(31)}1`])
      expect(isExtensionId(bad)).toBe(false)
  })

  it("maps supported platforms only", () => {
    expect(osOf("linux")).toBe("linux")
    expect(osOf("darwin")).toBe("darwin")
    expect(osOf("win32")).toBe("win32")
    expect(osOf("freebsd")).toBeUndefined()
  })
})
