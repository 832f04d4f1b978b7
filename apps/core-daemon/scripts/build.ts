// Bundles the headless Core into one ESM file, so `pedelec-core` starts without resolving a workspace at run time.
import { copyFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

await build({
  entryPoints: [path.join(root, "src/main.ts")],
  outfile: path.join(root, "dist/pedelec-core.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // Bundled CommonJS dependencies call require(); ESM output has none unless it is made.
  banner: {
    js: "import { createRequire as __pedelecRequire } from 'node:module'; const require = __pedelecRequire(import.meta.url);"
  },
  logLevel: "warning"
})

// The argument-validation worker runs as a file of its own, found beside this bundle (libs/core ToolRouter/Validation).
await copyFile(path.join(root, "../../libs/core/dist/args-worker.cjs"), path.join(root, "dist/args-worker.cjs"))
