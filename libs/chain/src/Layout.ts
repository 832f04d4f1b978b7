/**
 * Layout — where the chain's built parts live in this checkout (Core, pedelec-cli, native host, scripted agent,
 * extension, SDK bundle, demo page), the extension id their manifest's `key` gives, and which builds are missing.
 * Paths only; starting anything is the other chain modules' job.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { BUILT } from "@pedelec/test-kit/core/CoreProcess"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

export const LAYOUT = {
  root,
  coreBin: BUILT.coreBin,
  cliBinDir: BUILT.cliBinDir,
  hostEntry: path.join(root, "apps/native-host/dist/pedelec-native-host.mjs"),
  scriptedAgent: path.join(root, "libs/providers/dist/scripted-agent.mjs"),
  extensionDir: path.join(root, "apps/extension/dist"),
  sdkBundle: path.join(root, "libs/sdk/dist/pedelec.browser.js"),
  demoDir: path.join(root, "apps/demo/dist"),
  probeEntry: path.join(root, "libs/chain/src/page/probe.ts")
} as const

/** What each built file needs, for the message when it is missing. */
const BUILDS: ReadonlyArray<readonly [string, string]> = [
  [path.join(root, "apps/core-daemon/dist/pedelec-core.mjs"), "core-daemon"],
  [path.join(root, "apps/cli/dist/pedelec-cli.mjs"), "cli"],
  [LAYOUT.hostEntry, "native-host"],
  [LAYOUT.scriptedAgent, "providers"],
  [path.join(LAYOUT.extensionDir, "manifest.json"), "extension"],
  [LAYOUT.sdkBundle, "sdk"]
]

/** The Nx projects whose build output is missing (empty when the chain can run). */
export const missingBuilds = (extra: ReadonlyArray<readonly [string, string]> = []): Array<string> => [
  ...new Set([...BUILDS, ...extra].filter(([file]) => !existsSync(file)).map(([, project]) => project))
]

/** Chrome's id for a manifest `key`: sha256 of the DER public key, first 32 hex digits mapped 0-f → a-p. */
export const extensionIdFromKey = (key: string): string =>
  [...createHash("sha256").update(Buffer.from(key, "base64")).digest("hex").slice(0, 32)]
    .map((digit) => String.fromCharCode(97 + Number.parseInt(digit, 16)))
    .join("")

/** The id Chromium gives the unpacked extension in `dir`, recomputed from its manifest rather than assumed. */
export const extensionIdOf = (dir: string): string => {
  const manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8")) as { readonly key?: string }
  if (manifest.key === undefined) throw new Error(`${dir}/manifest.json has no "key", so its id is not fixed`)
  return extensionIdFromKey(manifest.key)
}
