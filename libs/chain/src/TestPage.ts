/**
 * TestPage — the routes of the page the tests drive: a blank HTML page that loads the probe (src/page/probe.ts,
 * bundled here with esbuild) and the SDK's built browser bundle, imported by the probe as `/pedelec.browser.js`
 * exactly as a page author would load it. The probe is bundled once per run; the SDK file is read per request.
 */
import { readFile } from "node:fs/promises"
import { build, type Plugin } from "esbuild"
import { LAYOUT } from "./Layout.ts"
import type { Routes } from "./Servers.ts"

export const SDK_PATH = "/pedelec.browser.js"

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>Pedelec E2E</title>
<body>
<p id="state">loading</p>
<script type="module" src="/probe.js" onerror="document.getElementById('state').textContent = 'the probe or the SDK bundle did not load'"></script>
</body>
</html>
`

/** `@pedelec/sdk` stays an import of the served bundle: the tests run the SDK build, not its sources. */
const sdkFromServer: Plugin = {
  name: "sdk-from-server",
  setup: (esbuild) => {
    esbuild.onResolve({ filter: /^@pedelec\/sdk$/ }, () => ({ path: SDK_PATH, external: true }))
  }
}

const bundleProbe = async (): Promise<string> => {
  const result = await build({
    entryPoints: [LAYOUT.probeEntry],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    write: false,
    plugins: [sdkFromServer],
    logLevel: "silent"
  })
  return result.outputFiles[0]!.text
}

export const testPageRoutes = async (): Promise<Routes> => {
  const probe = await bundleProbe()
  return {
    "/": { type: "text/html; charset=utf-8", body: async () => PAGE },
    "/probe.js": { type: "text/javascript", body: async () => probe },
    [SDK_PATH]: { type: "text/javascript", body: () => readFile(LAYOUT.sdkBundle) }
  }
}
