// opencode: the shared live scenarios (LiveProvider.ts) as Pedelec's least-privilege `pedelec` agent, with the
// scripted server as a user-level Chat Completions provider (research §3.4).
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { inject } from "vitest"
import { describeLiveProvider } from "./LiveProvider.ts"

/** The user-level provider below; Core passes the session's model to opencode as `-m`. */
const MODEL = "fake/fake-model"

const userConfig = (baseUrl: string) => ({
  $schema: "https://opencode.ai/config.json",
  autoupdate: false,
  share: "disabled",
  model: MODEL,
  small_model: MODEL,
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake local",
      options: { baseURL: `${baseUrl}/v1`, apiKey: "sk-fake" },
      models: { "fake-model": { name: "Fake model", tool_call: true, limit: { context: 128000, output: 8192 } } }
    }
  }
})

describeLiveProvider({
  code: "opencode",
  title: "opencode",
  version: inject("opencodeVersion"),
  binDir: inject("opencodeBinDir"),
  environment: async (root, server) => {
    // opencode keeps its config, database and caches in XDG folders: all of them under this temp home.
    const configDir = path.join(root, ".config", "opencode")
    await mkdir(configDir, { recursive: true })
    await writeFile(path.join(configDir, "opencode.json"), `${JSON.stringify(userConfig(server.url), null, 2)}\n`)
    return {
      HOME: root,
      XDG_CONFIG_HOME: path.join(root, ".config"),
      XDG_DATA_HOME: path.join(root, ".local", "share"),
      XDG_CACHE_HOME: path.join(root, ".cache"),
      XDG_STATE_HOME: path.join(root, ".local", "state"),
      // No models.dev catalog and no language servers: the suite is offline apart from the scripted server.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1"
    }
  },
  model: MODEL,
  turnTimeoutMs: 90_000,
  testTimeoutMs: 240_000,
  processName: "opencode",
  errorScenario: "same-session",
  checksSignIn: false
})
