// Bundles pedelec-cli with esbuild: one small entry (dist/pedelec-cli.mjs) that answers help, version and usage
// errors without loading effect, plus a lazily imported chunk with effect and the effect/rpc client for commands
// that talk to Core. Everything is bundled (effect included), so the CLI needs nothing but node at run time.
import { chmod, mkdir, readdir, rename, rm } from "node:fs/promises"
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
const result = await build({
  absWorkingDir: root,
  entryPoints: {
    "pedelec-cli": "src/main.ts",
    "pedelec-agent": "src/pedelec-agent/main.ts",
    "pedelec-deno": "src/pedelec-deno/main.ts"
  },
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
const sizes = Object.entries(result.metafile.outputs).map(
  ([file, out]) => `${path.relative(outdir, file)} ${out.bytes} B`
)
console.log(`built ${sizes.join(", ")}`)
