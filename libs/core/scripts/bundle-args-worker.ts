// Builds the argument-validation worker (src/ToolRouter/Validation/worker-entry.ts, with Effect Schema and re2js)
// into dist/args-worker.cjs, one CommonJS script ToolRouter/Validation starts as a worker thread: Node 20 cannot load
// a .ts worker, and pedelec-core is one bundled file, so the worker is a built file of its own (core-daemon's build
// copies it next to pedelec-core.mjs). `nx run core:build`; core's tests depend on it.
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const ARGS_WORKER_FILE = path.join(root, "dist/args-worker.cjs")

await mkdir(path.dirname(ARGS_WORKER_FILE), { recursive: true })
await build({
  entryPoints: [path.join(root, "src/ToolRouter/Validation/worker-entry.ts")],
  outfile: ARGS_WORKER_FILE,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  absWorkingDir: root,
  logLevel: "warning"
})
