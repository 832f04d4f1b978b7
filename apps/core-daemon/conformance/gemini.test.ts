// Gemini CLI: the shared live scenarios (LiveProvider.ts) under Pedelec's admin policy, pointed at the scripted
// server by GOOGLE_GEMINI_BASE_URL with an API-key login.
import { inject } from "vitest"
import { geminiEnvironment } from "./CliEnvironments.ts"
import { describeLiveProvider } from "./LiveProvider.ts"

describeLiveProvider({
  code: "gemini",
  title: "Gemini CLI",
  version: inject("geminiVersion"),
  binDir: inject("geminiBinDir"),
  environment: geminiEnvironment,
  turnTimeoutMs: 90_000,
  testTimeoutMs: 240_000,
  processName: "gemini",
  // gemini saves no session whose first turn failed; the adapter reports the id only with a success, so the next
  // turn of the same Pedelec session starts afresh instead of resuming nothing.
  errorScenario: "same-session",
  checksSignIn: false,
  mcpToolName: (name) => `mcp_pedelec_${name}`
})
