/**
 * `npm run desktop:preview` as a user runs it, in a temp home and a temp user folder: it finds or starts the Core of
 * that home, serves the renderer, and opens "Chromium" on the page, here a stand-in that asks the page's own bridge
 * (with the token from the URL it was given) for Core's status and the native host's registration, writes what it
 * got, and exits, which ends the preview. The registration must not say "unavailable": the preview's Health can
 * register the native host as the app would. The Core the preview started is stopped after.
 */
import { spawn } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { stopLiveCore } from "@pedelec/test-kit/core/CoreProcess"
import { afterAll, describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
const PREVIEW = path.join(root, "apps/desktop/src/preview/preview.ts")
const TSX = path.join(root, "node_modules/.bin/tsx")

/** The stand-in browser: node, given `--app=<url>`, calls the bridge twice and writes the answers to `out`. */
const standIn = (out: string) => `#!/usr/bin/env node
import { writeFileSync } from "node:fs"
const url = new URL(process.argv.find((a) => a.startsWith("--app=")).slice(6))
const token = new URLSearchParams(url.hash.slice(1)).get("token")
const ask = (method) => fetch(new URL("/call", url), {
  method: "POST",
  headers: { "content-type": "application/json", "x-pedelec-desktop-token": token },
  body: JSON.stringify({ method, params: {} })
}).then((r) => r.json())
const page = await fetch(url).then((r) => r.text())
const answers = { page: page.includes("<script"), status: await ask("desktop.status"), host: await ask("app.native_host.status") }
writeFileSync(${JSON.stringify(out)}, JSON.stringify(answers))
`

let home = ""
afterAll(async () => {
  if (home !== "") {
    await stopLiveCore(path.join(home, "pedelec"))
    await rm(home, { recursive: true, force: true })
  }
})

describe("npm run desktop:preview", () => {
  it("opens the renderer on this home's Core, with the native host's registration available to Health", async () => {
    home = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-preview-")))
    const out = path.join(home, "answers.json")
    const browser = path.join(home, "chromium.mjs")
    await writeFile(browser, standIn(out))
    await chmod(browser, 0o755)
    await mkdir(path.join(home, "user"), { recursive: true })
    const env = {
      ...process.env,
      PEDELEC_HOME: path.join(home, "pedelec"),
      HOME: path.join(home, "user"),
      CHROMIUM: browser
    }
    const preview = spawn(TSX, [PREVIEW], { env, stdio: ["ignore", "ignore", "pipe"] })
    let said = ""
    preview.stderr.on("data", (chunk) => (said += String(chunk)))
    const code = await new Promise<number | null>((resolve) => preview.on("exit", resolve))
    expect(said).toContain("Core is running")
    expect(code).toBe(0)
    const answers = JSON.parse(await readFile(out, "utf8"))
    expect(answers.page).toBe(true)
    expect(answers.status).toMatchObject({ ok: true, result: { home: path.join(home, "pedelec") } })
    expect(answers.host.ok).toBe(true)
    expect(JSON.stringify(answers.host.result)).not.toContain("unavailable")
  }, 120_000)
})
