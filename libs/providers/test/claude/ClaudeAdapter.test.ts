/**
 * ClaudeAdapter without the real CLI: the argv, stdin lines and environment of its warm process, detection through
 * Discovery, and the process path with a shell-script `claude` double that answers each stdin line by replaying a
 * real fixture (what it was given on argv and stdin is checked), fails, or hangs until cancelled. The real CLI runs
 * in apps/core-daemon/conformance.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  CLAUDE_EFFORT_ALLOW_LIST,
  claudeArgs,
  claudeEnv,
  claudeInterruptRequest,
  claudeUserMessage,
  makeClaudeAdapter
} from "../../src/claude/ClaudeAdapter.ts"
import type { TurnInput } from "../../src/Provider.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/claude")

/**
 * A warm `claude` double: answers --version; records each start's argv and pid, and each stdin line; answers a line
 * by replaying STUB_FIXTURE (or by hanging, or by dying), and waits for the next.
 */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
printf '%s\n' "$@" --- >> "$STUB_DIR/argv"
echo $$ >> "$STUB_DIR/pids"
env > "$STUB_DIR/env"
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$STUB_DIR/stdin"
  if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
  if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
  cat "$STUB_FIXTURE"
done
`

/** The provider session of text-turn.jsonl. */
const SESSION = "46762d75-d34a-4d21-ba10-566715232bbb"

const turn = (prompt: string, providerSessionId?: string): TurnInput => ({ prompt, providerSessionId, kind: "user" })

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("claude-bin")
  const workspace = yield* tempDir("claude-ws")
  writeFileSync(path.join(bin, "claude"), STUB)
  chmodSync(path.join(bin, "claude"), 0o755)
  const adapter = makeClaudeAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay") =>
    adapter.start(
      sessionOptions({
        workspace,
        env: { STUB_DIR: bin, STUB_FIXTURE: path.join(fixtures, fixture), STUB_MODE: mode, PEDELEC_THREAD_ID: "t1" }
      })
    )
  const recorded = (name: string) => readFileSync(path.join(bin, name), "utf8").trim().split("\n")
  return { bin, adapter, start, recorded }
})

describe("ClaudeAdapter invocation", () => {
  it("least privilege by default: claude's own file tools, acceptEdits, only pedelec-cli and pedelec-deno pre-approved", () => {
    assert.deepStrictEqual(claudeArgs(sessionOptions(), { providerSessionId: undefined }), [
      ...["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
      "--include-partial-messages",
      ...["--tools", "Bash,Read,Edit,Write,Glob,Grep", "--permission-mode", "acceptEdits"],
      ...["--setting-sources", "user", "--allowedTools", "Bash(pedelec-cli:*)", "Bash(pedelec-deno:*)"]
    ])
  })

  it("full access, a model, a resume and an effort profile", () => {
    const args = claudeArgs(
      sessionOptions({ fullAccess: true, model: "claude-sonnet-4-5", effort: { argv: ["--effort=low"], env: {} } }),
      { providerSessionId: "abc" }
    )
    assert.deepStrictEqual(args.slice(7), [
      ...["--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5", "--resume", "abc", "--effort=low"]
    ])
  })

  it("the pedelec MCP server: inline --mcp-config by absolute path, the whole server allowed; no capability", () => {
    const server = { command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] }
    const session = sessionOptions()
    const args = claudeArgs(session, { providerSessionId: undefined }, server)
    const config = {
      mcpServers: { pedelec: { type: "stdio", command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] } }
    }
    assert.deepStrictEqual(args.slice(14), [
      ...["Bash(pedelec-cli:*)", "Bash(pedelec-deno:*)", "mcp__pedelec"],
      ...["--mcp-config", JSON.stringify(config)]
    ])
    assert.isFalse(args.some((arg) => arg.includes(session.env.PEDELEC_SESSION_CAP!)))
    const full = claudeArgs(sessionOptions({ fullAccess: true }), { providerSessionId: undefined }, server)
    assert.deepStrictEqual(full.slice(7), [
      "--permission-mode",
      "bypassPermissions",
      "--mcp-config",
      JSON.stringify(config)
    ])
  })

  it("a turn is one stream-json user message; a stop is a control_request interrupt", () => {
    assert.strictEqual(
      claudeUserMessage('say "hi"\nthen stop'),
      '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"say \\"hi\\"\\nthen stop"}]}}'
    )
    assert.strictEqual(
      claudeInterruptRequest("r1"),
      '{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}'
    )
  })

  it("the environment keeps the session's and raises claude's 2-minute shell timeout and its MCP tool timeout", () => {
    const env = claudeEnv(sessionOptions())
    assert.strictEqual(env.PEDELEC_THREAD_ID, "t1")
    assert.strictEqual(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1")
    assert.strictEqual(env.DISABLE_AUTOUPDATER, "1")
    assert.isAbove(Number(env.BASH_DEFAULT_TIMEOUT_MS), 30 * 60_000)
    assert.strictEqual(env.BASH_MAX_TIMEOUT_MS, env.BASH_DEFAULT_TIMEOUT_MS)
    assert.isAbove(Number(env.MCP_TOOL_TIMEOUT), 30 * 60_000)
  })

  it("effort tokens are single --effort=<level> tokens or claude's effort variables", () => {
    const allowed = (token: string) => CLAUDE_EFFORT_ALLOW_LIST.argv.some((pattern) => pattern.test(token))
    assert.isTrue(allowed("--effort=low") && allowed("--effort=high") && allowed("--effort=max"))
    assert.isFalse(allowed("low") || allowed("--effort") || allowed("--effort=low; rm") || allowed("--model=x"))
    assert.deepStrictEqual(CLAUDE_EFFORT_ALLOW_LIST.env, ["CLAUDE_CODE_EFFORT_LEVEL", "MAX_THINKING_TOKENS"])
  })
})

describe("ClaudeAdapter detection and processes", () => {
  it.live("not installed: unavailable, with what to do about it", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("claude-none")
      const info = yield* makeClaudeAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.isFalse(info.available)
      assert.isNull(info.version)
      assert.include(info.error ?? "", "npm install -g @anthropic-ai/claude-code")
      assert.isFalse(info.experimental)
      assert.isTrue(info.effort.supported)
    })
  )

  it.live("installed: available with the version claude --version prints", () =>
    Effect.gen(function* () {
      const { adapter } = yield* withStub
      const info = yield* adapter.detect
      assert.deepStrictEqual([info.available, info.version, info.error], [true, "2.1.197", null])
    })
  )

  it.live("a turn: the prompt goes on stdin as a user message, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, start, recorded } = yield* withStub
      const sp = yield* start("text-turn.jsonl")
      const events = yield* Stream.runCollect(sp.send(turn("say hello")))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "delta", "delta", "message", "usage", "completed"]
      )
      assert.deepStrictEqual(recorded("stdin"), [claudeUserMessage("say hello")])
      assert.includeMembers(recorded("argv"), ["--input-format", "stream-json"])
      assert.notInclude(recorded("argv"), "--resume")
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("the next turn of the conversation goes to the same claude", () =>
    Effect.gen(function* () {
      const { start, recorded } = yield* withStub
      const sp = yield* start("text-turn.jsonl")
      yield* Stream.runCollect(sp.send(turn("one")))
      const second = yield* Stream.runCollect(sp.send(turn("two", SESSION)))
      assert.strictEqual(second.at(-1)?.type, "completed")
      assert.strictEqual(recorded("pids").length, 1)
      assert.deepStrictEqual(recorded("stdin"), [claudeUserMessage("one"), claudeUserMessage("two")])
    })
  )

  it.live("a turn resuming another conversation starts a claude with --resume", () =>
    Effect.gen(function* () {
      const { start, recorded } = yield* withStub
      const sp = yield* start("text-turn.jsonl")
      yield* Stream.runCollect(sp.send(turn("one")))
      yield* Stream.runCollect(sp.send(turn("two", "earlier-conversation")))
      assert.strictEqual(recorded("pids").length, 2)
      const argv = recorded("argv")
      const second = argv.slice(argv.indexOf("---") + 1)
      assert.deepStrictEqual(second.slice(second.indexOf("--resume"), second.indexOf("--resume") + 2), [
        "--resume",
        "earlier-conversation"
      ])
    })
  )

  it.live("an error turn ends with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-400.jsonl")
      const events = yield* Stream.runCollect(sp.send(turn("x")))
      assert.strictEqual(events.at(-1)?.type === "error" && events.at(-1)?.type, "error")
    })
  )

  it.live("claude dying without a result fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send(turn("x"))).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills claude and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, turn("x"), bin)
      })
    )
  )

  it.live("full access as root without IS_SANDBOX=1 is refused with the reason", () =>
    Effect.gen(function* () {
      if (process.getuid?.() !== 0) return
      const { adapter } = yield* withStub
      const error = yield* adapter.start(sessionOptions({ fullAccess: true })).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_START_FAILED")
      assert.include(String(error.details?.reason), "IS_SANDBOX=1")
    })
  )
})
