// How each pinned CLI is pointed at the scripted model server: its home, config files and environment, all under a
// temp root (never the user's). Shared by the live conformance suite and the provider bench
// (tools/bench/Providers.ts), so both run the CLIs exactly alike.
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import type { ModelServer } from "@pedelec/test-kit/model-server/ModelServer"

/** Writes the CLI's home and config under `root` and returns what else the Core's (and so the CLI's) env needs. */
export type CliEnvironment = (root: string, server: ModelServer) => Promise<Record<string, string>>

/** claude keeps its config and sessions under CLAUDE_CONFIG_DIR (and HOME): never the user's real ones. */
export const claudeEnvironment: CliEnvironment = async (root, server) => ({
  HOME: root,
  CLAUDE_CONFIG_DIR: path.join(root, ".claude"),
  ANTHROPIC_BASE_URL: server.url,
  ANTHROPIC_API_KEY: "sk-ant-fake",
  CLAUDE_CODE_MAX_RETRIES: "0"
})

/** codex's own config: the scripted server as its only provider, no retries so errors come back at once. */
const codexConfigToml = (baseUrl: string) =>
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

/** The scripted server's Responses API as a custom provider in codex's own config. */
export const codexEnvironment: CliEnvironment = async (root, server) => {
  // CODEX_HOME must not lie inside TMPDIR: the sandbox then hides codex's own helper and every command fails.
  const home = path.join(root, "home")
  const codexHome = path.join(home, ".codex")
  const tmp = path.join(root, "tmp")
  await mkdir(codexHome, { recursive: true })
  await mkdir(tmp, { recursive: true })
  await writeFile(path.join(codexHome, "config.toml"), codexConfigToml(server.url))
  return { HOME: home, CODEX_HOME: codexHome, TMPDIR: tmp, FAKE_API_KEY: "sk-fake" }
}

/** An API key login that never asks, and nothing phoning home or updating itself during a run. */
const GEMINI_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true }
}

/** The scripted server by GOOGLE_GEMINI_BASE_URL, with an API-key login. */
export const geminiEnvironment: CliEnvironment = async (root, server) => {
  await mkdir(path.join(root, ".gemini"), { recursive: true })
  await writeFile(path.join(root, ".gemini", "settings.json"), `${JSON.stringify(GEMINI_SETTINGS, null, 2)}\n`)
  return {
    HOME: root,
    GEMINI_API_KEY: "fake-key",
    GOOGLE_GEMINI_BASE_URL: server.url,
    // Under GitHub Actions (a non-empty GITHUB_SHA, or SURFACE=Github) gemini strips every unlisted variable from
    // its shell's environment, PEDELEC_* included; it tests them for truthiness, so empty ones are "not set".
    GITHUB_SHA: "",
    SURFACE: ""
  }
}

/** The user-level provider below; Core passes the session's model to opencode as `-m`. */
export const OPENCODE_MODEL = "fake/fake-model"

const opencodeUserConfig = (baseUrl: string) => ({
  $schema: "https://opencode.ai/config.json",
  autoupdate: false,
  share: "disabled",
  model: OPENCODE_MODEL,
  small_model: OPENCODE_MODEL,
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake local",
      options: { baseURL: `${baseUrl}/v1`, apiKey: "sk-fake" },
      models: { "fake-model": { name: "Fake model", tool_call: true, limit: { context: 128000, output: 8192 } } }
    }
  }
})

/** The scripted server as a user-level Chat Completions provider (research §3.4). */
export const opencodeEnvironment: CliEnvironment = async (root, server) => {
  // opencode keeps its config, database and caches in XDG folders: all of them under this temp home.
  const configDir = path.join(root, ".config", "opencode")
  await mkdir(configDir, { recursive: true })
  await writeFile(path.join(configDir, "opencode.json"), `${JSON.stringify(opencodeUserConfig(server.url), null, 2)}\n`)
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
}
