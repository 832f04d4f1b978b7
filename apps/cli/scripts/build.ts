// Bundles pedelec-cli with esbuild: one small entry (dist/pedelec-cli.mjs) that answers help, version and usage
// errors without loading effect, plus a lazily imported chunk with effect and the effect/rpc client for commands
// that talk to Core; pedelec-agent beside it; pedelec-deno as CommonJS (dist/pedelec-deno.cjs and its bundle).
// Everything is bundled (effect included), so the CLI needs nothing but node at run time.
import { chmod, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
// Built aside, then moved in file by file (chunks before the entry that imports them): agents and other suites
// may be running dist/pedelec-cli.mjs right now, and must never see it missing or half-written.
const outdir = path.join(root, `dist.${process.pid}.tmp`)

const filesUnder = async (dir: string): Promise<Array<string>> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
}

await rm(outdir, { recursive: true, force: true })
const shared = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  metafile: true,
  logLevel: "warning"
} as const
const cli = await build({
  ...shared,
  entryPoints: { "pedelec-cli": "src/main.ts", "pedelec-agent": "src/pedelec-agent/main.ts" },
  splitting: true,
  format: "esm",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" }
})
// pedelec-deno: CommonJS, started by a shell front (bin/pedelec-deno): Node 20 starts it about 10 ms of CPU sooner
// than an ESM entry and its chunks, and its start is most of what it adds to a `deno run`. dist/pedelec-deno.cjs
// turns on the compile cache (Node >= 22.1; nothing on Node 20) before it loads the bundle, which is in chunks/ so
// it is moved in first. import.meta.url (Runtime finds Deno from it) is the bundle's own.
const denoFront = await build({
  ...shared,
  entryPoints: { "chunks/pedelec-deno-main": "src/pedelec-deno/main.ts" },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__pedelecDenoUrl" },
  banner: { js: 'const __pedelecDenoUrl = require("node:url").pathToFileURL(__filename).href;' }
})
await writeFile(
  path.join(outdir, "pedelec-deno.cjs"),
  '"use strict";require("node:module").enableCompileCache?.();require("./chunks/pedelec-deno-main.cjs");\n'
)
const built = (await filesUnder(outdir)).sort(
  (a, b) => Number(!a.startsWith("chunks")) - Number(!b.startsWith("chunks"))
)
for (const file of built) {
  await mkdir(path.dirname(path.join(dist, file)), { recursive: true })
  await rename(path.join(outdir, file), path.join(dist, file))
}
const stale = (await filesUnder(dist)).filter((file) => !built.includes(file))
await Promise.all(stale.map((file) => rm(path.join(dist, file), { force: true })))
await rm(outdir, { recursive: true, force: true })
for (const bin of ["pedelec-cli", "pedelec-agent", "pedelec-deno"]) await chmod(path.join(root, "bin", bin), 0o755)
const sizes = Object.entries({ ...cli.metafile.outputs, ...denoFront.metafile.outputs }).map(
  ([file, out]) => `${path.relative(outdir, file)} ${out.bytes} B`
)
console.log(`built ${sizes.join(", ")}`)
