// Codex CLI: the shared live scenarios (LiveProvider.ts) through codex's default workspace-write sandbox, pointed at
// the scripted server's Responses API by a custom provider in its own config; one warm `codex app-server` a session.
import { inject } from "vitest"
import { codexEnvironment } from "./CliEnvironments.ts"
import { describeLiveProvider } from "./LiveProvider.ts"

describeLiveProvider({
  code: "codex",
  title: "Codex CLI",
  version: inject("codexVersion"),
  binDir: inject("codexBinDir"),
  environment: codexEnvironment,
  turnTimeoutMs: 60_000,
  testTimeoutMs: 120_000,
  processName: "codex",
  errorScenario: "same-session",
  checksSignIn: true,
  mcpToolName: (name) => `mcp__pedelec__${name}`,
  warmProcess: true
})
