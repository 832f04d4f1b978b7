// The Chrome Web Store zip: the store build (bundle.ts, no source maps) staged in a temp folder, then only the files
// reachable from manifest.json (named by the manifest, or by a page or script it reaches, e.g. the worker's
// `approval.html`) zipped, so nothing stray ships. It refuses a manifest whose version is not the release version
// (the root package.json's). It does not test the zip (package.test.ts does) nor set versions (tools/release).
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { zipSync } from "fflate"
import { bundleExtension } from "./bundle.ts"

export interface StoreZip {
  readonly file: string
  readonly bytes: number
  readonly entries: ReadonlyArray<string>
}

const TEXT = /\.(json|html|js|css)$/

/** Every file under `dir`, by its `/`-separated path relative to `dir`. */
const listFiles = async (dir: string): Promise<Map<string, Uint8Array>> => {
  const files = new Map<string, Uint8Array>()
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    files.set(path.relative(dir, full).split(path.sep).join("/"), await readFile(full))
  }
  return files
}

/**
 * The files reachable from manifest.json: a file is reached when its path occurs in the text of one already
 * reached. A plain substring match errs towards shipping a file, never towards dropping one a page needs.
 */
export const reachableFiles = (files: ReadonlyMap<string, Uint8Array>): ReadonlyArray<string> => {
  const reached = new Set(["manifest.json"])
  const queue = ["manifest.json"]
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (!TEXT.test(next)) continue
    const text = new TextDecoder().decode(files.get(next))
    for (const candidate of files.keys()) {
      if (reached.has(candidate) || !text.includes(candidate)) continue
      reached.add(candidate)
      queue.push(candidate)
    }
  }
  return [...reached].sort()
}

const releaseVersion = async (workspaceRoot: string): Promise<string> => {
  const root = JSON.parse(await readFile(path.join(workspaceRoot, "package.json"), "utf8")) as { version?: unknown }
  if (typeof root.version === "string") return root.version
  throw new Error("The root package.json has no version; set one with `npm run release:version -- <x.y.z>`.")
}

/** A fixed time for every entry, so the same sources give the same zip (zip times start in 1980). */
const ENTRY_TIME = new Date("1980-01-02T00:00:00Z")

/** Builds the store zip into `outDir` as `pedelec-extension-<version>.zip`. */
export const writeStoreZip = async (workspaceRoot: string, outDir: string): Promise<StoreZip> => {
  const staging = await mkdtemp(path.join(tmpdir(), "pedelec-extension-store-"))
  try {
    const version = await bundleExtension(staging, { sourcemap: false, minify: true })
    const release = await releaseVersion(workspaceRoot)
    if (version !== release)
      throw new Error(
        `The extension manifest says ${version} but the release is ${release}; run \`npm run release:version -- ${release}\` first.`
      )
    const files = await listFiles(staging)
    const entries = reachableFiles(files)
    const zip = zipSync(
      Object.fromEntries(entries.map((name) => [name, [files.get(name) ?? new Uint8Array(), { mtime: ENTRY_TIME }]])),
      { level: 9 }
    )
    const file = path.join(outDir, `pedelec-extension-${version}.zip`)
    await writeFile(file, zip)
    return { file, bytes: zip.length, entries }
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}
