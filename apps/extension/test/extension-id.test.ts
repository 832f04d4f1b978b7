/**
 * The manifest's public `key` fixes the extension id Chrome gives us, which the SDK connects to and the native host
 * manifest allows (contracts/Wire.ts PEDELEC_EXTENSION_ID). Recomputed here the way Chrome does it: sha256 of the
 * DER key, first 32 hex digits, each mapped 0-f → a-p.
 */
import { assert, describe, it } from "@effect/vitest"
import { PAGE_PORT_NAME } from "@pedelec/contracts/link/PageLink"
import { PEDELEC_EXTENSION_ID } from "@pedelec/contracts/Wire"
import manifest from "../static/manifest.json" with { type: "json" }

const extensionIdFromKey = async (key: string) => {
  const der = Uint8Array.from(atob(key), (char) => char.charCodeAt(0))
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der))
  const hex = [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("")
  return [...hex.slice(0, 32)].map((digit) => String.fromCharCode(97 + Number.parseInt(digit, 16))).join("")
}

describe("manifest", () => {
  it("its key yields PEDELEC_EXTENSION_ID", async () => {
    assert.strictEqual(await extensionIdFromKey(manifest.key), PEDELEC_EXTENSION_ID)
  })

  it("a different key yields a different id (the derivation is not a constant)", async () => {
    const other = `${manifest.key.slice(0, 40)}${manifest.key[40] === "A" ? "B" : "A"}${manifest.key.slice(41)}`
    assert.notStrictEqual(await extensionIdFromKey(other), PEDELEC_EXTENSION_ID)
  })

  it("declares what the worker relies on", () => {
    assert.strictEqual(manifest.manifest_version, 3)
    assert.deepStrictEqual(manifest.background, { service_worker: "service-worker.js", type: "module" })
    assert.includeMembers(manifest.permissions, ["nativeMessaging", "storage"])
    assert.includeMembers(manifest.externally_connectable.matches, ["https://*/*", "http://127.0.0.1/*"])
    assert.strictEqual(manifest.options_page, "options.html")
    assert.strictEqual(PAGE_PORT_NAME, "pedelec-sdk")
  })
})
