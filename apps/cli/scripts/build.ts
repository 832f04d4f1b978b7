// Bundles pedelec-cli with esbuild: one small entry (dist/pedelec-cli.mjs) that answers help, version and usage
// errors without loading effect, plus a lazily imported chunk with effect and the effect/rpc client for commands
// that talk to Core. Everything is bundled (effect included), so the CLI needs nothing but node at run time.
import { chmod, rm } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const outdir = path.join(root, "dist")

await rm(outdir, { recursive: true, force: true })
const result = await build({
  absWorkingDir: root,
  entryPoints: { "pedelec-cli": "src/main.ts" },
  outdir,
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "none",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  metafile: true,
  logLevel: "warning"
})
await chmod(path.join(root, "bin", "pedelec-cli"), 0o755)
const sizes = Object.entries(result.metafile.outputs).map(
  ([file, out]) => `${path.relative(root, file)} ${out.bytes} B`
)
console.log(`built ${sizes.join(", ")}`)
