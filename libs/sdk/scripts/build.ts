// Builds what the SDK ships: `dist/index.js` + `dist/effect.js` with `.d.ts` for bundlers (Effect stays a dependency,
// contracts are inlined, code and types: they are an internal vocabulary, not a package of their own, so a page
// installs one package and the SDK's types never point at one it cannot get), and `dist/pedelec.browser.js`, one
// self-contained minified module a page can load with <script type="module"> (the E2E pages and the demo do).
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build as esbuild } from "esbuild"
import { build as tsup } from "tsup"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const src = (file: string) => path.join(root, "src", file)

await tsup({
  entry: { index: src("index.ts"), effect: src("effect.ts") },
  outDir: path.join(root, "dist"),
  format: "esm",
  platform: "browser",
  target: "es2022",
  // `@internal` members (the session hooks the client calls) stay out of what page authors see.
  dts: {
    // Contracts' types are inlined (resolved to their sources, not left as imports of an unpublished package).
    compilerOptions: {
      stripInternal: true,
      baseUrl: root,
      paths: { "@pedelec/contracts/*": ["../contracts/src/*"] }
    }
  },
  noExternal: [/^@pedelec\//],
  external: [/^effect(\/|$)/],
  tsconfig: path.join(root, "tsconfig.json"),
  clean: true,
  silent: true
})

await esbuild({
  entryPoints: [src("index.ts")],
  outfile: path.join(root, "dist/pedelec.browser.js"),
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  logLevel: "warning"
})
