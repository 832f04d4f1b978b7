// Builds the renderer into dist/: src/index.html (its strict CSP in a meta tag) and src/styles.css copied as is, and
// src/main.tsx bundled with Preact into app.js (minified ESM, JSX through esbuild's automatic runtime, no compiler
// plugin). Electron main loads dist/index.html; the loopback transport serves the same folder for the tests and
// `npm run desktop:preview`.
import { copyFile, mkdir } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")

await mkdir(dist, { recursive: true })
await build({
  entryPoints: [path.join(root, "src/main.tsx")],
  outfile: path.join(dist, "app.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  minify: true,
  sourcemap: true,
  logLevel: "warning"
})
await copyFile(path.join(root, "src/index.html"), path.join(dist, "index.html"))
await copyFile(path.join(root, "src/styles.css"), path.join(dist, "styles.css"))
