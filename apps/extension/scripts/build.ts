// Builds the unpacked extension into dist/: the static files (manifest, HTML, CSS) copied, and one ESM bundle per
// entry (the service worker, the approval window, the options page). Load dist/ with --load-extension.
import { cp, mkdir, readFile, rm } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")

await rm(dist, { recursive: true, force: true })
await mkdir(dist, { recursive: true })
await cp(path.join(root, "static"), dist, { recursive: true })

await build({
  entryPoints: {
    "service-worker": path.join(root, "src/service-worker.ts"),
    approval: path.join(root, "src/approval/approval-page.ts"),
    options: path.join(root, "src/options/options-page.ts")
  },
  outdir: dist,
  bundle: true,
  platform: "browser",
  // The error catalog with the extension's own codes (contracts' `#error-catalog`); pages get the SDK's alone.
  conditions: ["pedelec-extension"],
  format: "esm",
  target: "chrome116",
  // One file per entry: MV3 loads the worker as a module, and a shared chunk would be one more file to keep in sync.
  splitting: false,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning"
})

const manifest = JSON.parse(await readFile(path.join(dist, "manifest.json"), "utf8")) as { version: string }
console.log(`extension ${manifest.version} built in ${path.relative(process.cwd(), dist) || "."}`)
