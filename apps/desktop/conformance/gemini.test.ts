// Gemini CLI: the shared live scenarios (LiveProvider.ts) under Pedelec's admin policy, pointed at the scripted
// server by GOOGLE_GEMINI_BASE_URL with an API-key login.
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { inject } from "vitest"
import { describeLiveProvider } from "./LiveProvider.ts"

/** An API key login that never asks, and nothing phoning home or updating itself during a run. */
const SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true }
}

describeLiveProvider({
  code: "gemini",
  title: "Gemini CLI",
  version: inject("geminiVersion"),
  binDir: inject("geminiBinDir"),
  environment: async (root, server) => {
    await mkdir(path.join(root, ".gemini"), { recursive: true })
    await writeFile(path.join(root, ".gemini", "settings.json"), `${JSON.stringify(SETTINGS, null, 2)}\n`)
    return {
      HOME: root,
      GEMINI_API_KEY: "fake-key",
      GOOGLE_GEMINI_BASE_URL: server.url,
      // Under GitHub Actions (a non-empty GITHUB_SHA, or SURFACE=Github) gemini strips every unlisted variable from
      // its shell's environment, PEDELEC_* included; it tests them for truthiness, so empty ones are "not set".
      GITHUB_SHA: "",
      SURFACE: ""
    }
  },
  turnTimeoutMs: 90_000,
  testTimeoutMs: 240_000,
  processName: "gemini",
  // A gemini session whose very first turn fails is never saved, yet Core keeps the id from gemini's `init` line and
  // resumes it, so every later turn exits 42. A bug of Core/the adapter (in the issue notes), not what this checks.
  errorScenario: "good-turn-first",
  checksSignIn: false
})
