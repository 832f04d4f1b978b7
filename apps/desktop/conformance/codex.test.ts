// Codex CLI: the shared live scenarios (LiveProvider.ts) through codex's default workspace-write sandbox, pointed at
// the scripted server's Responses API by a custom provider in its own config.
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { inject } from "vitest"
import { describeLiveProvider } from "./LiveProvider.ts"

/** codex's own config: the scripted server as its only provider, no retries so errors come back at once. */
const configToml = (baseUrl: string) =>
  [
    'model = "fake-model"',
    'model_provider = "fake"',
    "[model_providers.fake]",
    'name = "Fake local"',
    `base_url = "${baseUrl}/v1"`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    ""
  ].join("\n")

describeLiveProvider({
  code: "codex",
  title: "Codex CLI",
  version: inject("codexVersion"),
  binDir: inject("codexBinDir"),
  environment: async (root, server) => {
    // CODEX_HOME must not lie inside TMPDIR: the sandbox then hides codex's own helper and every command fails.
    const home = path.join(root, "home")
    const codexHome = path.join(home, ".codex")
    const tmp = path.join(root, "tmp")
    await mkdir(codexHome, { recursive: true })
    await mkdir(tmp, { recursive: true })
    await writeFile(path.join(codexHome, "config.toml"), configToml(server.url))
    return { HOME: home, CODEX_HOME: codexHome, TMPDIR: tmp, FAKE_API_KEY: "sk-fake" }
  },
  turnTimeoutMs: 60_000,
  testTimeoutMs: 120_000,
  processName: "codex",
  errorScenario: "same-session",
  checksSignIn: true
})
