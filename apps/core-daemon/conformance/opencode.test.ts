// opencode: the shared live scenarios (LiveProvider.ts) as Pedelec's least-privilege `pedelec` agent, with the
// scripted server as a user-level Chat Completions provider (research §3.4).
import { inject } from "vitest"
import { OPENCODE_MODEL, opencodeEnvironment } from "./CliEnvironments.ts"
import { describeLiveProvider } from "./LiveProvider.ts"

describeLiveProvider({
  code: "opencode",
  title: "opencode",
  version: inject("opencodeVersion"),
  binDir: inject("opencodeBinDir"),
  environment: opencodeEnvironment,
  model: OPENCODE_MODEL,
  turnTimeoutMs: 90_000,
  testTimeoutMs: 240_000,
  processName: "opencode",
  errorScenario: "same-session",
  checksSignIn: false,
  mcpToolName: (name) => `pedelec_${name}`
})
