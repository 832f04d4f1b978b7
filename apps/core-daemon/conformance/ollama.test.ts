// Ollama through pedelec-agent, Pedelec's own loop: the shared live scenarios (LiveProvider.ts) against the scripted
// server's /api/chat. Nothing to install: pedelec-agent is built with pedelec-cli. The page's tools are native
// function tools here, so the script calls them by name instead of through a shell.

import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import { OLLAMA_VERSION } from "@pedelec/test-kit/model-server/Ollama"
import * as Effect from "effect/Effect"
import { describeLiveProvider } from "./LiveProvider.ts"

describeLiveProvider({
  code: "ollama",
  title: "Ollama (pedelec-agent)",
  version: OLLAMA_VERSION,
  environment: async () => ({}),
  configure: (client, server) =>
    Effect.gen(function* () {
      yield* client["desktop.settings.set"]({
        settings: { ...DEFAULT_SETTINGS, ollama: { baseUrl: server.url, timeoutMs: 30_000 } }
      })
      yield* client["desktop.settings.set_secret"]({ name: "ollamaApiKey", value: "ollama" })
    }),
  model: "scripted-model",
  turnTimeoutMs: 30_000,
  testTimeoutMs: 60_000,
  processName: "pedelec-agent",
  errorScenario: "same-session",
  checksSignIn: true,
  signInCode: "OLLAMA_AUTH_FAILED",
  toolCall: { directive: (name, args) => `TOOL[${name}]ARGS[${args}]END`, viaShell: false }
})
