// Builds the demo page into dist/: index.html copied as is, and src/main.ts bundled with the SDK into demo.js
// (minified ESM, for any static server). `npm start` serves this folder on 127.0.0.1.
import { copyFile, mkdir } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")

await mkdir(dist, { recursive: true })
await build({
  entryPoints: [path.join(root, "src/main.ts")],
  outfile: path.join(dist, "demo.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: true,
  logLevel: "warning"
})
await copyFile(path.join(root, "src/index.html"), path.join(dist, "index.html"))
