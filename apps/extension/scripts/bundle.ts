// Builds the extension into a folder: the static files (manifest, HTML, CSS, icons) copied, and one ESM bundle per
// entry (the service worker, the approval window, the confirmation window, the options page). build.ts runs it for the unpacked dev build
// (with source maps), package.ts for the store zip (without). What goes into the zip is store-zip.ts's.
import { cp, mkdir, readFile, rm } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

export interface BundleOptions {
  /** Linked source maps for the unpacked build; the store build ships none (they would only add bytes). */
  readonly sourcemap: boolean
  /** The store build is minified (the store allows it; obfuscation it does not): a quarter of the bytes. */
  readonly minify: boolean
}

/** Empties `outDir`, fills it, and returns the manifest's version. */
export const bundleExtension = async (outDir: string, options: BundleOptions): Promise<string> => {
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })
  await cp(path.join(projectRoot, "static"), outDir, { recursive: true })
  await build({
    entryPoints: {
      "service-worker": path.join(projectRoot, "src/service-worker.ts"),
      approval: path.join(projectRoot, "src/approval/approval-page.ts"),
      confirm: path.join(projectRoot, "src/confirm/confirm-page.ts"),
      options: path.join(projectRoot, "src/options/options-page.ts")
    },
    outdir: outDir,
    bundle: true,
    platform: "browser",
    // The error catalog with the extension's own codes (contracts' `#error-catalog`); pages get the SDK's alone.
    conditions: ["pedelec-extension"],
    format: "esm",
    target: "chrome116",
    // One file per entry: MV3 loads the worker as a module, and a shared chunk would be one more file to keep in sync.
    splitting: false,
    sourcemap: options.sourcemap ? "linked" : false,
    minify: options.minify,
    legalComments: "none",
    logLevel: "warning"
  })
  const manifest = JSON.parse(await readFile(path.join(outDir, "manifest.json"), "utf8")) as { version: string }
  return manifest.version
}
