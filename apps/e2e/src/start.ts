/**
 * `npm start` — builds what the chain needs, then runs Pedelec for real: the headless Core for PEDELEC_HOME
 * (default ~/.pedelec; reused if one already runs), the native host registered in a fresh Chromium profile, the demo
 * page on 127.0.0.1, and a headed Chromium with the extension and the demo, on the default provider. With no
 * usable provider it says what it looked for and how to install one, then runs the self-test instead.
 * `npm start -- --self-test` runs only the self-test (headless, scripted agent, temp home). Exit 0 on success.
 */
import { execFile, spawnSync } from "node:child_process"
import os from "node:os"
import path from "node:path"
import { promisify } from "node:util"
import { startChain } from "@pedelec/chain/Chain"
import { liveCore, startCore } from "@pedelec/chain/Core"
import { demoRoutes } from "@pedelec/chain/DemoPage"
import { LAYOUT } from "@pedelec/chain/Layout"
import { PROVIDER_CODES, type ProviderInfo } from "@pedelec/contracts/Provider"
import { runSelfTest } from "./SelfTest.ts"

const print = (line: string) => process.stdout.write(`${line}\n`)

const INSTALL_HINTS = [
  "  codex     npm install -g @openai/codex",
  "  claude    npm install -g @anthropic-ai/claude-code",
  "  gemini    npm install -g @google/gemini-cli",
  "  opencode  npm install -g opencode-ai",
  "  ollama    https://ollama.com/download, then `pedelec-cli settings set ollama.defaultModel <model>`"
]

const build = () => {
  print("Building: npx nx run-many -t build -p sdk extension native-host core-daemon cli providers demo")
  const projects = ["sdk", "extension", "native-host", "core-daemon", "cli", "providers", "demo"]
  const result = spawnSync("npx", ["nx", "run-many", "-t", "build", "-p", ...projects], {
    cwd: LAYOUT.root,
    stdio: "inherit"
  })
  if (result.status !== 0) throw new Error("the build failed; see above")
}

/** `pedelec-cli <args> --json` against `home`, as a user without the desktop app would ask. */
const cli = async <A>(home: string, args: ReadonlyArray<string>): Promise<A> => {
  const run = await promisify(execFile)(
    process.execPath,
    [path.join(LAYOUT.cliBinDir, "pedelec-cli"), ...args, "--json"],
    {
      env: { ...process.env, PEDELEC_HOME: home }
    }
  ).catch((error: { readonly stdout?: string }) => ({ stdout: error.stdout ?? "" }))
  const line = JSON.parse(run.stdout.split("\n")[0] ?? "") as { ok: boolean; result?: A; error?: { message: string } }
  if (!line.ok) throw new Error(line.error?.message ?? "pedelec-cli failed")
  return line.result as A
}

const homeFromArgs = (argv: ReadonlyArray<string>): string => {
  const at = argv.indexOf("--home")
  const given = at >= 0 ? argv[at + 1] : process.env.PEDELEC_HOME
  return path.resolve(given !== undefined && given !== "" ? given : path.join(os.homedir(), ".pedelec"))
}

/** The provider sessions will use, or undefined after saying why there is none. */
const usableProvider = async (home: string): Promise<string | undefined> => {
  const providers = await cli<ReadonlyArray<ProviderInfo>>(home, ["providers", "--rescan"])
  const settings = await cli<{ readonly defaultProvider: string | null }>(home, ["settings", "get"])
  const available = providers.filter((provider) => provider.available)
  const chosen = available.find((provider) => provider.code === settings.defaultProvider)
  if (chosen !== undefined) return chosen.code
  if (available.length === 0) {
    print("\nNo agent provider is available on this machine. Pedelec looked for:")
    // Core lists only the CLIs it found; the ones it looked for and did not find are every other code.
    for (const code of PROVIDER_CODES.filter((code) => code !== "scripted")) {
      const found = providers.find((provider) => provider.code === code)
      print(
        `  ${code.padEnd(12)} ${found === undefined ? "not found on PATH or in the usual install dirs" : (found.error ?? "unavailable")}`
      )
    }
    print("\nInstall one of them, e.g.:")
    for (const hint of INSTALL_HINTS) print(hint)
    return undefined
  }
  const first = available[0]!.code
  print(`\nNo default provider is set; available: ${available.map((provider) => provider.code).join(", ")}.`)
  print(`Set one with: pedelec-cli settings set defaultProvider ${first}`)
  return undefined
}

const runProduct = async (home: string): Promise<number> => {
  const running = await liveCore(home)
  const core = running === undefined ? await startCore({ home }) : undefined
  print(
    running === undefined ? `Started pedelec-core for ${home}` : `Using the running Core (pid ${running}) for ${home}`
  )
  try {
    const provider = await usableProvider(home)
    if (provider === undefined) {
      print("\nRunning the self-test instead (the scripted test agent, in a temporary home):\n")
      return (await runSelfTest()) ? 0 : 1
    }
    if (process.env.DISPLAY === undefined && process.env.WAYLAND_DISPLAY === undefined) {
      print("\nNo display for a browser window: run `xvfb-run -a npm start`, or `npm start -- --self-test`.")
      return 1
    }
    const chain = await startChain({ routes: demoRoutes(), home, core: false, https: false, headless: false })
    const url = `${chain.origins.http}/?extensionId=${chain.extensionId}`
    await (await chain.context.newPage()).goto(url)
    print(`\nDemo page: ${url} (provider ${provider}). Close the browser or press Ctrl-C to stop.`)
    await new Promise<void>((resolve) => {
      chain.context.once("close", () => resolve())
      process.once("SIGINT", () => resolve())
    })
    await chain.close()
    return 0
  } finally {
    await core?.stop()
  }
}

const main = async () => {
  const argv = process.argv.slice(2)
  build()
  process.exitCode = argv.includes("--self-test")
    ? (await runSelfTest())
      ? 0
      : 1
    : await runProduct(homeFromArgs(argv))
}

main().catch((error: unknown) => {
  print(`npm start failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
})
