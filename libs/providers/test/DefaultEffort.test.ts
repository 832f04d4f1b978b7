/**
 * Every adapter's default effort profiles: what a session runs with when the user's settings leave a level out.
 * They must pass the adapter's own allow-list (ProviderChoice checks them like user profiles), differ per level
 * where they set the CLI's knob, and add nothing where it has none (or one not every model takes).
 */
import { assert, describe, it } from "@effect/vitest"
import { EFFORT_LEVELS } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { AntigravityAdapter } from "../src/antigravity/AntigravityAdapter.ts"
import { ClaudeAdapter } from "../src/claude/ClaudeAdapter.ts"
import { CodexAdapter } from "../src/codex/CodexAdapter.ts"
import { CursorAdapter } from "../src/cursor/CursorAdapter.ts"
import { GeminiAdapter } from "../src/gemini/GeminiAdapter.ts"
import { makeOllamaAdapter } from "../src/ollama/OllamaAdapter.ts"
import { OpencodeAdapter } from "../src/opencode/OpencodeAdapter.ts"
import type { ProviderAdapter } from "../src/Provider.ts"
import { ScriptedAdapter } from "../src/scripted/ScriptedAdapter.ts"

const ADAPTERS: ReadonlyArray<ProviderAdapter> = [
  ClaudeAdapter,
  CodexAdapter,
  GeminiAdapter,
  OpencodeAdapter,
  CursorAdapter,
  AntigravityAdapter,
  makeOllamaAdapter({ agentCommand: undefined, connection: Effect.die("not used") }),
  ScriptedAdapter
]

describe("default effort profiles", () => {
  for (const adapter of ADAPTERS) {
    it(`${adapter.code}: each level passes the allow-list and matches what listProviders says`, () => {
      const argvOf = EFFORT_LEVELS.map((level) => adapter.defaultEffort[level].argv.join(" "))
      for (const level of EFFORT_LEVELS) {
        const profile = adapter.defaultEffort[level]
        for (const token of profile.argv) {
          assert.isTrue(
            adapter.effortAllowList.argv.some((pattern) => pattern.test(token)),
            `${level}: ${token}`
          )
        }
        for (const name of Object.keys(profile.env)) assert.include(adapter.effortAllowList.env, name)
      }
      // A knob every model does not take (Ollama's think) is left to the user's profiles.
      const setByDefault = argvOf.some((argv) => argv !== "")
      if (setByDefault) assert.isTrue(adapter.effort.supported)
      if (setByDefault) assert.strictEqual(new Set(argvOf).size, EFFORT_LEVELS.length)
      else assert.deepStrictEqual(argvOf, ["", "", ""])
    })
  }

  it("maps each level to the CLI's own knob", () => {
    assert.deepStrictEqual(ClaudeAdapter.defaultEffort.low.argv, ["--effort=low"])
    assert.deepStrictEqual(CodexAdapter.defaultEffort.high.argv, ["--config=model_reasoning_effort=high"])
    assert.deepStrictEqual(OpencodeAdapter.defaultEffort.medium.argv, ["--variant=medium"])
  })
})
