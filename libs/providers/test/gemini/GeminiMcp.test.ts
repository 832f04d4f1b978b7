/**
 * GeminiMcp on real folders: what the workspace settings file says (the server, its variables by name only, the
 * long timeout, trust), that it is written only into a workspace without a `.gemini` of its own, rewritten before a
 * turn whatever the agent did to it (a symlink in its place is replaced, never written through), and removed with the
 * session. The real gemini reading it is verified by the live conformance suite.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { geminiMcpFile, geminiMcpSettings, geminiWorkspaceSettings } from "../../src/gemini/GeminiMcp.ts"
import { PEDELEC_MCP_TOOL_TIMEOUT_MS } from "../../src/PedelecMcp.ts"
import { tempDir } from "../support.ts"

const server = { command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] }
const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as unknown

describe("GeminiMcp settings", () => {
  it("names the server's variables for gemini to expand, never their values; trusted, with the long timeout", () => {
    assert.deepStrictEqual(geminiMcpSettings(server), {
      mcpServers: {
        pedelec: {
          command: "/opt/pedelec/bin/pedelec-cli",
          args: ["mcp"],
          env: {
            PEDELEC_THREAD_ID: "$PEDELEC_THREAD_ID",
            PEDELEC_SESSION_CAP: "$PEDELEC_SESSION_CAP",
            PEDELEC_HOME: "$PEDELEC_HOME",
            PATH: "$PATH"
          },
          timeout: PEDELEC_MCP_TOOL_TIMEOUT_MS,
          trust: true
        }
      }
    })
  })
})

describe("GeminiMcp file", () => {
  it.live("a workspace without .gemini: the file for the session's life (0600), then no trace", () =>
    Effect.gen(function* () {
      const workspace = yield* tempDir("gemini-mcp-ws")
      const file = geminiWorkspaceSettings(workspace)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const owned = yield* geminiMcpFile(workspace, server)
          assert.isDefined(owned)
          assert.deepStrictEqual(read(file), geminiMcpSettings(server))
          assert.strictEqual(statSync(file).mode & 0o777, 0o600)
        })
      )
      assert.isFalse(existsSync(path.join(workspace, ".gemini")))
    })
  )

  it.live("the agent's edits are undone before the next turn, and a symlink in the file's place is not followed", () =>
    Effect.gen(function* () {
      const workspace = yield* tempDir("gemini-mcp-ws")
      const elsewhere = yield* tempDir("gemini-mcp-elsewhere")
      const victim = path.join(elsewhere, "settings.json")
      writeFileSync(victim, "the user's own file\n")
      const file = geminiWorkspaceSettings(workspace)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const owned = yield* geminiMcpFile(workspace, server)
          writeFileSync(file, JSON.stringify({ mcpServers: { pedelec: { command: "/bin/sh" } } }))
          assert.isTrue(owned?.refresh())
          assert.deepStrictEqual(read(file), geminiMcpSettings(server))
          // The whole folder swapped for a link to another one: replaced by a real folder, the other one untouched.
          const dir = path.dirname(file)
          rmSync(dir, { recursive: true })
          symlinkSync(elsewhere, dir)
          assert.isTrue(owned?.refresh())
          assert.isFalse(lstatSync(dir).isSymbolicLink())
          assert.deepStrictEqual(read(file), geminiMcpSettings(server))
          assert.strictEqual(readFileSync(victim, "utf8"), "the user's own file\n")
          // The file itself a link: the link goes, the file it pointed at stays.
          rmSync(file)
          symlinkSync(victim, file)
          assert.isTrue(owned?.refresh())
          assert.deepStrictEqual(read(file), geminiMcpSettings(server))
          assert.strictEqual(readFileSync(victim, "utf8"), "the user's own file\n")
          // At the end a link in the folder's place just goes: nothing is removed through it.
          rmSync(dir, { recursive: true })
          symlinkSync(elsewhere, dir)
        })
      )
      assert.isFalse(existsSync(path.join(workspace, ".gemini")))
      assert.strictEqual(readFileSync(victim, "utf8"), "the user's own file\n")
    })
  )

  it.live("a workspace with a .gemini of its own (a user's folder) is left as it is: no server for the session", () =>
    Effect.gen(function* () {
      const workspace = yield* tempDir("gemini-mcp-user")
      mkdirSync(path.join(workspace, ".gemini"))
      writeFileSync(path.join(workspace, ".gemini", "GEMINI.md"), "project notes\n")
      yield* Effect.scoped(
        Effect.gen(function* () {
          assert.isUndefined(yield* geminiMcpFile(workspace, server))
          assert.isFalse(existsSync(geminiWorkspaceSettings(workspace)))
        })
      )
      assert.strictEqual(readFileSync(path.join(workspace, ".gemini", "GEMINI.md"), "utf8"), "project notes\n")
    })
  )

  it.live("no pedelec-cli on the session's PATH: no file", () =>
    Effect.gen(function* () {
      const workspace = yield* tempDir("gemini-mcp-none")
      yield* Effect.scoped(geminiMcpFile(workspace, undefined))
      assert.isFalse(existsSync(path.join(workspace, ".gemini")))
    })
  )
})
