// The store zip as the Chrome Web Store gets it: built by writeStoreZip into a temp folder, unzipped with fflate and
// checked for what a listing needs (the release version, every icon a real PNG of its size, every file the manifest
// or a page names, nothing else: no source maps, no tests). It does not test the unpacked dev build (e2e loads that).
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { unzipSync, unzlibSync } from "fflate"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { projectRoot } from "./bundle.ts"
import { ICON_SIZES } from "./icons.ts"
import { reachableFiles, writeStoreZip } from "./store-zip.ts"

interface Manifest {
  readonly name: string
  readonly version: string
  readonly description: string
  readonly icons: Record<string, string>
  readonly background: { readonly service_worker: string }
  readonly action: { readonly default_icon: Record<string, string>; readonly default_popup: string }
  readonly options_page: string
}

const workspaceRoot = path.resolve(projectRoot, "../..")
let outDir = ""
let entries: Record<string, Uint8Array> = {}
const text = (name: string) => new TextDecoder().decode(entries[name])
const manifest = () => JSON.parse(text("manifest.json")) as Manifest

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), "pedelec-store-zip-"))
  const zip = await writeStoreZip(workspaceRoot, outDir)
  console.log(`store zip: ${path.basename(zip.file)}, ${zip.bytes} bytes, ${zip.entries.length} files`)
  entries = unzipSync(await readFile(zip.file))
}, 60_000)

afterAll(() => rm(outDir, { recursive: true, force: true }))

/** Width, height and whether the image data inflates to exactly the rows an RGBA or RGB PNG of that size needs. */
const readPng = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (!signature.every((byte, i) => bytes[i] === byte)) return undefined
  const chunks: Array<{ type: string; data: Uint8Array }> = []
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = view.getUint32(at)
    const type = new TextDecoder().decode(bytes.subarray(at + 4, at + 8))
    chunks.push({ type, data: bytes.subarray(at + 8, at + 8 + length) })
    at += 12 + length
  }
  const header = chunks[0]?.type === "IHDR" ? new DataView(chunks[0].data.buffer, chunks[0].data.byteOffset) : undefined
  if (header === undefined || chunks.at(-1)?.type !== "IEND") return undefined
  const [width, height, depth, colour] = [
    header.getUint32(0),
    header.getUint32(4),
    header.getUint8(8),
    header.getUint8(9)
  ]
  const channels = colour === 6 ? 4 : colour === 2 ? 3 : 0
  const idat = chunks.filter((chunk) => chunk.type === "IDAT").map((chunk) => Array.from(chunk.data))
  const pixels = unzlibSync(new Uint8Array(idat.flat()))
  return { width, height, complete: depth === 8 && pixels.length === height * (1 + width * channels) }
}

describe("the Chrome Web Store zip", () => {
  it("carries the release version, the name and a description the store accepts", async () => {
    const root = JSON.parse(await readFile(path.join(workspaceRoot, "package.json"), "utf8")) as { version: string }
    expect(manifest().version).toBe(root.version)
    expect(manifest().name).toBe("Pedelec")
    expect(manifest().description.length).toBeGreaterThan(20)
    expect(manifest().description.length).toBeLessThanOrEqual(132)
  })

  it.each(ICON_SIZES)("has a %i px icon, a valid PNG of that size, in icons and action.default_icon", (size) => {
    const file = manifest().icons[String(size)]
    expect(file).toBeDefined()
    expect(manifest().action.default_icon[String(size)]).toBe(file)
    expect(readPng(entries[file ?? ""] ?? new Uint8Array())).toEqual({ width: size, height: size, complete: true })
  })

  it("holds every file the manifest and its pages name", () => {
    const named = [
      manifest().background.service_worker,
      manifest().action.default_popup,
      manifest().options_page,
      ...Object.values(manifest().icons),
      ...Object.values(manifest().action.default_icon)
    ]
    const pages = Object.keys(entries).filter((name) => name.endsWith(".html"))
    for (const page of pages)
      for (const [, ref] of text(page).matchAll(/(?:src|href)="([^"#?:]+)"/g)) named.push(ref ?? "")
    expect(pages).toContain("approval.html")
    expect(named.filter((name) => entries[name] === undefined)).toEqual([])
  })

  it("holds nothing else: no source maps, no tests, no file nothing names", () => {
    const names = Object.keys(entries)
    expect(names.filter((name) => name.endsWith(".map"))).toEqual([])
    expect(names.filter((name) => text(name).includes("sourceMappingURL") && name.endsWith(".js"))).toEqual([])
    expect(names.filter((name) => /(^|\/)tests?\/|\.(test|spec)\./.test(name))).toEqual([])
    expect(reachableFiles(new Map(Object.entries(entries)))).toEqual(names.sort())
  })

  it("says on the options page what it stores and that it talks only to the local native host", () => {
    const options = text("options.html")
    expect(options).toContain('id="privacy"')
    for (const fact of ["chrome.storage.local", "chrome.storage.session", "com.pedelec.host"])
      expect(options).toContain(fact)
  })
})
