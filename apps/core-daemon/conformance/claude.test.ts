// Claude Code: the shared live scenarios (LiveProvider.ts) with claude's least-privilege invocation, pointed at the
// scripted server's Messages API; and what `listProviders()` says on a machine without claude.
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { hostClient, removeHome, startCore, stopCore } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import { describe, expect, inject, it } from "vitest"
import { claudeEnvironment } from "./CliEnvironments.ts"
import { describeLiveProvider, live } from "./LiveProvider.ts"

describeLiveProvider({
  code: "claude",
  title: "Claude Code",
  version: inject("claudeVersion"),
  binDir: inject("claudeBinDir"),
  environment: claudeEnvironment,
  turnTimeoutMs: 60_000,
  testTimeoutMs: 90_000,
  processName: "claude",
  // claude merges a failed prompt into the next user message, and the scripted server acts on the first directive.
  errorScenario: "fresh-sessions",
  checksSignIn: true,
  // One `claude --input-format stream-json` per session, fed a user message per turn.
  warmProcess: true,
  mcpToolName: (name) => `mcp__pedelec__${name}`
})

describe("Claude Code missing", () => {
  it("is listed as unavailable, with what to do", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "pedelec-no-claude-"))
    const bare = await startCore({ env: { PATH: process.env.PATH ?? "", HOME: home } })
    try {
      await live(
        Effect.gen(function* () {
          const client = yield* hostClient(bare.info)
          const claude = (yield* client["providers.list"]({ rescan: true })).find((info) => info.code === "claude")
          // A machine with its own claude installed globally says so; this suite's cached copy is not on PATH here.
          if (claude?.available === true) return
          expect(claude?.available).toBe(false)
          expect(claude?.version).toBeNull()
          expect(claude?.error).toContain("npm install -g @anthropic-ai/claude-code")
        })
      )
    } finally {
      await stopCore(bare)
      await removeHome(bare.home)
      await rm(home, { recursive: true, force: true })
    }
  })
})
