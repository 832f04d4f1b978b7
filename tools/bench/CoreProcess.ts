// The built headless Core for a bench, in its own process like a user's: started in a given home with the scripted
// agent enabled and pedelec-cli/pedelec-deno first on its agents' PATH, and ready once it has announced itself.
import { type ChildProcess, spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const coreBin = path.join(repoRoot, "apps/core-daemon/bin/pedelec-core")
export const cliBinDir = path.join(repoRoot, "apps/cli/bin")

export const startCore = async (home: string): Promise<ChildProcess> => {
  const child = spawn(process.execPath, [coreBin, "--home", home], {
    env: { ...process.env, PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_BIN_DIR: cliBinDir },
    stdio: ["ignore", "ignore", "inherit"]
  })
  for (let waited = 0; waited < 15_000; waited += 50) {
    const announced = await readFile(path.join(home, "run/core.json"), "utf8").catch(() => "")
    if (announced.includes(`"pid":${child.pid}`)) return child
    await sleep(50)
  }
  child.kill("SIGKILL")
  throw new Error("pedelec-core did not start; run `npx nx run-many -t build` first")
}
