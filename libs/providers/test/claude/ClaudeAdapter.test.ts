/**
 * ClaudeAdapter without the real CLI: the argv and environment of a turn, detection through Discovery, and the
 * process path with a shell-script `claude` double that replays a real fixture (what it was given on argv and stdin
 * is checked), fails, or hangs until cancelled. The real CLI runs in apps/desktop/conformance.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { CLAUDE_EFFORT_ALLOW_LIST, claudeArgs, claudeEnv, makeClaudeAdapter } from "../../src/claude/ClaudeAdapter.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/claude")

/** A `claude` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE (or hangs). */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
cat "$STUB_FIXTURE"
`

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
  return { bin, adapter, start }
})

describe("ClaudeAdapter invocation", () => {
  it("least privilege by default: claude's own file tools, acceptEdits, only pedelec-cli and pedelec-deno pre-approved", () => {
    assert.deepStrictEqual(claudeArgs(sessionOptions(), { prompt: "x", providerSessionId: undefined, kind: "user" }), [
      ...["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"],
      ...["--tools", "Bash,Read,Edit,Write,Glob,Grep", "--permission-mode", "acceptEdits"],
      ...["--setting-sources", "user", "--allowedTools", "Bash(pedelec-cli:*)", "Bash(pedelec-deno:*)"]
    ])
  })

  it("full access, a model, a resume and an effort profile", () => {
    const args = claudeArgs(
      sessionOptions({ fullAccess: true, model: "claude-sonnet-4-5", effort: { argv: ["--effort=low"], env: {} } }),
      { prompt: "x", providerSessionId: "abc", kind: "user" }
    )
    assert.deepStrictEqual(args.slice(5), [
      ...["--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5", "--resume", "abc", "--effort=low"]
    ])
  })

  it("the environment keeps the session's and raises claude's 2-minute shell timeout", () => {
    const env = claudeEnv(sessionOptions())
    assert.strictEqual(env.PEDELEC_THREAD_ID, "t1")
    assert.strictEqual(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1")
    assert.strictEqual(env.DISABLE_AUTOUPDATER, "1")
    assert.isAbove(Number(env.BASH_DEFAULT_TIMEOUT_MS), 30 * 60_000)
    assert.strictEqual(env.BASH_MAX_TIMEOUT_MS, env.BASH_DEFAULT_TIMEOUT_MS)
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

  it.live("a turn: the prompt goes on stdin, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, start } = yield* withStub
      const sp = yield* start("text-turn.jsonl")
      const events = yield* Stream.runCollect(
        sp.send({ prompt: "say hello", providerSessionId: undefined, kind: "user" })
      )
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "delta", "delta", "message", "usage", "completed"]
      )
      assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), "say hello")
      assert.include(readFileSync(path.join(bin, "argv"), "utf8"), "stream-json")
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("an error turn ends with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-400.jsonl")
      const events = yield* Stream.runCollect(sp.send({ prompt: "x", providerSessionId: undefined, kind: "user" }))
      assert.strictEqual(events.at(-1)?.type === "error" && events.at(-1)?.type, "error")
    })
  )

  it.live("claude dying without a result fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send({ prompt: "x", providerSessionId: undefined, kind: "user" })).pipe(
        Effect.flip
      )
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills claude and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, { prompt: "x", providerSessionId: undefined, kind: "user" }, bin)
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
