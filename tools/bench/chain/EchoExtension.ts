/**
 * EchoExtension — the bench's floor: a bench-only MV3 extension whose service worker relays each page port to
 * `connectNative` of a tiny echo host, both written at run time into a temp dir (a fresh key each run, so nothing is
 * committed and the id is computed, research/browser-e2e.md §3.1). It is Chromium's own transport and nothing else:
 * no approval, no Schema, no chunking, no Core. The host speaks Chrome framing (4-byte little-endian length + UTF-8
 * JSON), echoes each frame's bytes unchanged, and answers `{"burst":n,…}` with n frames, the one-way floor for deltas.
 */
import { generateKeyPairSync } from "node:crypto"
import { chmod, mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { extensionIdFromKey } from "@pedelec/chain/Layout"

export const ECHO_HOST_NAME = "com.pedelec.bench_echo"

export interface EchoExtension {
  readonly dir: string
  readonly id: string
  /** Writes the host's manifest into `<profile>/NativeMessagingHosts/` (the only place a custom profile reads, P3). */
  readonly registerIn: (profileDir: string) => Promise<void>
}

// Relays without a queue: connectNative is synchronous and Chrome holds what is posted until the host is up.
const SERVICE_WORKER = `const HOST = ${JSON.stringify(ECHO_HOST_NAME)}
chrome.runtime.onConnectExternal.addListener((page) => {
  const host = chrome.runtime.connectNative(HOST)
  host.onMessage.addListener((message) => page.postMessage(message))
  host.onDisconnect.addListener(() => {
    const reason = chrome.runtime.lastError ? chrome.runtime.lastError.message : "closed"
    try { page.postMessage({ hostGone: reason }) } catch {}
    page.disconnect()
  })
  page.onMessage.addListener((message) => host.postMessage(message))
  page.onDisconnect.addListener(() => host.disconnect())
})
`

// Parses only the burst command (its first bytes say so); every other frame goes back as the same bytes.
const hostScript = (node: string) => `#!${node}
const out = process.stdout
const frame = (body) => {
  const header = Buffer.allocUnsafe(4)
  header.writeUInt32LE(body.length, 0)
  out.write(header)
  out.write(body)
}
const BURST = Buffer.from('{"burst":')
const handle = (body) => {
  if (!body.subarray(0, BURST.length).equals(BURST)) return frame(body)
  const { burst, chars, char } = JSON.parse(body.toString("utf8"))
  const data = char.repeat(chars)
  for (let i = 0; i < burst; i++) frame(Buffer.from(JSON.stringify({ i, data }), "utf8"))
}
let parts = []
let have = 0
let need = -1
const take = (n) => {
  const all = parts.length === 1 ? parts[0] : Buffer.concat(parts)
  parts = all.length > n ? [all.subarray(n)] : []
  have = all.length - n
  return all.subarray(0, n)
}
process.stdin.on("data", (chunk) => {
  parts.push(chunk)
  have += chunk.length
  for (;;) {
    if (need < 0) {
      if (have < 4) return
      need = take(4).readUInt32LE(0)
    }
    if (have < need) return
    const body = take(need)
    need = -1
    handle(body)
  }
})
process.stdin.on("end", () => process.exit(0))
`

export const writeEchoExtension = async (dir: string): Promise<EchoExtension> => {
  const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const key = publicKey.export({ type: "spki", format: "der" }).toString("base64")
  const id = extensionIdFromKey(key)
  const extensionDir = path.join(dir, "echo-extension")
  const hostPath = path.join(dir, "echo-host.mjs")
  await mkdir(extensionDir, { recursive: true })
  const manifest = {
    manifest_version: 3,
    name: "Pedelec bench echo relay",
    version: "0.0.1",
    key,
    background: { service_worker: "sw.js" },
    permissions: ["nativeMessaging"],
    externally_connectable: { matches: ["http://127.0.0.1/*", "http://localhost/*"] }
  }
  await writeFile(path.join(extensionDir, "manifest.json"), JSON.stringify(manifest, null, 2))
  await writeFile(path.join(extensionDir, "sw.js"), SERVICE_WORKER)
  await writeFile(hostPath, hostScript(process.execPath))
  // The umask filters the open mode; a host that is not executable is "Native host has exited."
  await chmod(hostPath, 0o755)
  const registerIn = async (profileDir: string) => {
    const hostsDir = path.join(profileDir, "NativeMessagingHosts")
    await mkdir(hostsDir, { recursive: true })
    const hostManifest = {
      name: ECHO_HOST_NAME,
      description: "Pedelec bench echo host",
      path: hostPath,
      type: "stdio",
      allowed_origins: [`chrome-extension://${id}/`]
    }
    await writeFile(path.join(hostsDir, `${ECHO_HOST_NAME}.json`), JSON.stringify(hostManifest))
  }
  return { dir: extensionDir, id, registerIn }
}
