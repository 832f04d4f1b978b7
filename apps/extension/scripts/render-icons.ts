// Renders assets/logo.svg into the manifest's PNG icons (static/icons/icon-<size>.png) with the Chromium and
// playwright-core the e2e suites already use. Run by hand after the logo changes (`npm run icons -w
// @pedelec/extension`) and commit the PNGs: the build then needs no browser. It does not touch the manifest, which
// names the files (ICON_SIZES in icons.ts is the one list of sizes).
import { readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import { ICON_SIZES, iconFile } from "./icons.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium"

const svg = await readFile(path.join(root, "assets/logo.svg"), "utf8")
const browser = await chromium.launch({ executablePath, headless: true }).catch((error: unknown) => {
  throw new Error(
    `Chromium did not start from ${executablePath} (${error}); install it (apt-get install chromium) or set CHROMIUM.`
  )
})
try {
  for (const size of ICON_SIZES) {
    // One device pixel per CSS pixel, so Chromium rasterises the vector at exactly this size (no scaling blur).
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 })
    const image = `<img width="${size}" height="${size}" src="data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}">`
    await page.setContent(`<style>html,body{margin:0;background:transparent}img{display:block}</style>${image}`)
    const png = await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } })
    await writeFile(path.join(root, "static", iconFile(size)), png)
    console.log(`${iconFile(size)}: ${png.length} bytes`)
    await page.close()
  }
} finally {
  await browser.close()
}
