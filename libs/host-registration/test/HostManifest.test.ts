// The host manifest's content and its checks: ids, the trailing slash, an absolute launcher path.
import { describe, expect, it } from "vitest"
import { PEDELEC_EXTENSION_ID } from "../src/Browsers.ts"
import { DESCRIPTION, hostManifest, manifestText } from "../src/HostManifest.ts"
import { RegistrationError } from "../src/RegistrationError.ts"

const OTHER = "abcdefghijklmnopabcdefghijklmnop"

describe("hostManifest", () => {
  it("names the host, the launcher and one origin per id, with the trailing slash", () => {
    const manifest = hostManifest({
      launcherPath: "/home/ada/.pedelec/bin/pedelec-native-host",
      extensionIds: [PEDELEC_EXTENSION_ID, OTHER, PEDELEC_EXTENSION_ID]
    })
    expect(manifest).toEqual({
      name: "com.pedelec.host",
      description: DESCRIPTION,
      path: "/home/ada/.pedelec/bin/pedelec-native-host",
      type: "stdio",
      allowed_origins: [`chrome-extension://${PEDELEC_EXTENSION_ID}/`, `chrome-extension://${OTHER}/`]
    })
    expect(JSON.parse(manifestText(manifest))).toEqual(manifest)
    expect(manifestText(manifest).endsWith("}\n")).toBe(true)
  })

  it("accepts a Windows launcher path and escapes it as JSON", () => {
    const launcherPath = "C:\\Users\\ada\\.pedelec\\bin\\pedelec-native-host.cmd"
    const text = manifestText(hostManifest({ launcherPath, extensionIds: [OTHER] }))
    expect(text).toContain('"path": "C:\\\\Users\\\\ada\\\\.pedelec\\\\bin\\\\pedelec-native-host.cmd"')
  })

  it.each([
    ["uppercase", "A".repeat(32)],
    ["too short", "a".repeat(31)],
    ["too long", "a".repeat(33)],
    ["a letter past p", `${"a".repeat(31)}z`],
    ["a digit", `${"a".repeat(31)}0`],
    ["an origin", `chrome-extension://${OTHER}/`]
  ])("rejects an id with %s", (_, id) => {
    expect(() => hostManifest({ launcherPath: "/x/launcher", extensionIds: [OTHER, id] })).toThrow(RegistrationError)
    try {
      hostManifest({ launcherPath: "/x/launcher", extensionIds: [id] })
    } catch (error) {
      expect(error).toMatchObject({ reason: "InvalidInput", target: id })
    }
  })

  it("rejects no ids and a relative launcher path", () => {
    expect(() => hostManifest({ launcherPath: "/x/launcher", extensionIds: [] })).toThrow(/At least one/)
    expect(() => hostManifest({ launcherPath: "bin/launcher", extensionIds: [OTHER] })).toThrow(/absolute/)
  })
})
