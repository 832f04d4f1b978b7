/**
 * CodexAdapter without the real CLI: the argv of new and resumed turns (default and full access, with and without
 * model and effort), the effort allow-list, detection through Discovery, and the process path with a shell-script
 * `codex` double that replays a real fixture (what it was given on argv, stdin and env is checked), dies, or hangs
 * until cancelled. The real CLI is wired into live conformance separately.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { CODEX_EFFORT_ALLOW_LIST, codexArgs, makeCodexAdapter } from "../../src/codex/CodexAdapter.ts"
import type { TurnInput } from "../../src/Provider.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/codex")

/** A `codex` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE (or hangs, or dies). */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "codex-cli 0.171.0"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
if [ "$STUB_MODE" = "truncated" ]; then grep -v turn.failed "$STUB_FIXTURE"; exit 1; fi
cat "$STUB_FIXTURE"
`

const fresh: TurnInput = { prompt: "x", providerSessionId: undefined, kind: "user" }
const resumed: TurnInput = { prompt: "x", providerSessionId: "01a2297c-faf9-7a31-bba3-0a98311945d1", kind: "user" }

const SANDBOX = ["-c", "sandbox_mode=workspace-write", "-c", "sandbox_workspace_write.network_access=true"]
const COMMON = [
  ...["-c", "allow_login_shell=false", "--skip-git-repo-check"],
  ...["-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"]
]

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("codex-bin")
  const workspace = yield* tempDir("codex-ws")
  writeFileSync(path.join(bin, "codex"), STUB)
  chmodSync(path.join(bin, "codex"), 0o755)
  const adapter = makeCodexAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay") =>
    adapter.start(
      sessionOptions({
        workspace,
        env: { STUB_DIR: bin, STUB_FIXTURE: path.join(fixtures, fixture), STUB_MODE: mode, PEDELEC_THREAD_ID: "t1" }
      })
    )
  return { bin, adapter, start }
})

describe("CodexAdapter invocation", () => {
  it("a new turn, least privilege: workspace-write sandbox with network, no login shell, prompt from stdin", () => {
    assert.deepStrictEqual(codexArgs(sessionOptions(), fresh), ["exec", "--json", ...SANDBOX, ...COMMON, "--", "-"])
  })

  it("a resumed turn: `exec resume`, the same sandbox, the thread id after `--`", () => {
    assert.deepStrictEqual(codexArgs(sessionOptions(), resumed), [
      ...["exec", "resume", "--json", ...SANDBOX, ...COMMON, "--", resumed.providerSessionId, "-"]
    ])
  })

  it("full access, a model and an effort profile, new and resumed", () => {
    const session = sessionOptions({
      fullAccess: true,
      model: "gpt-5.5",
      effort: { argv: ["--config=model_reasoning_effort=low"], env: {} }
    })
    const tail = ["--model", "gpt-5.5", "--config=model_reasoning_effort=low", "--"]
    assert.deepStrictEqual(codexArgs(session, fresh), [
      ...["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", ...COMMON, ...tail, "-"]
    ])
    assert.deepStrictEqual(codexArgs(session, resumed), [
      ...["exec", "resume", "--json", "--dangerously-bypass-approvals-and-sandbox", ...COMMON, ...tail],
      ...[resumed.providerSessionId, "-"]
    ])
  })

  it("a model without effort, and effort without a model, under the sandbox", () => {
    assert.deepStrictEqual(codexArgs(sessionOptions({ model: "o4" }), fresh).slice(-4), ["--model", "o4", "--", "-"])
    const effort = sessionOptions({ effort: { argv: ["--config=model_reasoning_effort=high"], env: {} } })
    assert.deepStrictEqual(codexArgs(effort, fresh), [
      ...["exec", "--json", ...SANDBOX, ...COMMON, "--config=model_reasoning_effort=high", "--", "-"]
    ])
  })

  it("the pedelec MCP server: command, args, env by name, required, approval and timeout, before the model; no capability", () => {
    const session = sessionOptions({ model: "o4" })
    const args = codexArgs(session, fresh, { command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] })
    const key = "mcp_servers.pedelec"
    assert.deepStrictEqual(args.slice(0, -4), [
      ...["exec", "--json", ...SANDBOX, ...COMMON],
      ...["-c", `${key}.command="/opt/pedelec/bin/pedelec-cli"`, "-c", `${key}.args=["mcp"]`],
      ...["-c", `${key}.env_vars=["PEDELEC_THREAD_ID","PEDELEC_SESSION_CAP","PEDELEC_HOME","PATH"]`],
      ...["-c", `${key}.required=true`],
      ...["-c", `${key}.default_tools_approval_mode="approve"`, "-c", `${key}.tool_timeout_sec=18060`]
    ])
    assert.deepStrictEqual(args.slice(-4), ["--model", "o4", "--", "-"])
    assert.isFalse(args.some((arg) => arg.includes(session.env.PEDELEC_SESSION_CAP!)))
  })

  it("effort tokens are single --config=model_reasoning_effort=<level> tokens; nothing else gets through", () => {
    const allowed = (token: string) => CODEX_EFFORT_ALLOW_LIST.argv.some((pattern) => pattern.test(token))
    for (const level of ["none", "minimal", "low", "medium", "high", "xhigh"]) {
      assert.isTrue(allowed(`--config=model_reasoning_effort=${level}`), level)
    }
    for (const token of ["-c", "model_reasoning_effort=low", "--config=sandbox_mode=danger-full-access", "low"]) {
      assert.isFalse(allowed(token), token)
    }
    assert.isFalse(allowed("--config=model_reasoning_effort=low\n-c") || allowed("--dangerously-bypass-approvals"))
    assert.deepStrictEqual(CODEX_EFFORT_ALLOW_LIST.env, [])
  })
})

describe("CodexAdapter detection and processes", () => {
  it.live("not installed: unavailable, with what to do about it", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("codex-none")
      const info = yield* makeCodexAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.deepStrictEqual([info.available, info.version, info.experimental], [false, null, false])
      assert.include(info.error ?? "", "npm install -g @openai/codex")
      assert.isTrue(info.effort.supported)
    })
  )

  it.live("installed: available with the version `codex --version` prints", () =>
    Effect.gen(function* () {
      const { adapter } = yield* withStub
      const info = yield* adapter.detect
      assert.deepStrictEqual([info.code, info.available, info.version, info.error], ["codex", true, "0.171.0", null])
    })
  )

  it.live("a turn: the prompt goes on stdin untouched, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, start } = yield* withStub
      const sp = yield* start("tool-turn.jsonl")
      const prompt = '--looks like a flag\n  ünïcode "q" $HOME\n'
      const events = yield* Stream.runCollect(sp.send({ ...fresh, prompt }))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "tool_activity", "tool_activity", "message", "usage", "completed"]
      )
      assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), prompt)
      assert.deepStrictEqual(readFileSync(path.join(bin, "argv"), "utf8").trim().split("\n").slice(-2), ["--", "-"])
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("a session whose PATH has pedelec-cli gets it as the pedelec MCP server, by absolute path", () =>
    Effect.gen(function* () {
      const { bin, adapter } = yield* withStub
      const workspace = yield* tempDir("codex-mcp-ws")
      const pedelecBin = yield* tempDir("codex-pedelec-bin")
      writeFileSync(path.join(pedelecBin, "pedelec-cli"), "#!/bin/sh\n")
      chmodSync(path.join(pedelecBin, "pedelec-cli"), 0o755)
      const env = {
        STUB_DIR: bin,
        STUB_FIXTURE: path.join(fixtures, "tool-turn.jsonl"),
        PATH: [pedelecBin, process.env.PATH].join(path.delimiter)
      }
      const sp = yield* adapter.start(sessionOptions({ workspace, env }))
      yield* Stream.runDrain(sp.send(fresh))
      const argv = readFileSync(path.join(bin, "argv"), "utf8").trim().split("\n")
      assert.include(argv, `mcp_servers.pedelec.command=${JSON.stringify(path.join(pedelecBin, "pedelec-cli"))}`)
    })
  )

  it.live("a failed turn ends with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-401.jsonl")
      const events = yield* Stream.runCollect(sp.send(fresh))
      const last = events.at(-1)
      assert.strictEqual(last?.type === "error" && last.code, "PROVIDER_AUTH_REQUIRED")
    })
  )

  it.live("codex dying after an error line but before turn.failed reports that error", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-400.jsonl", "truncated")
      const events = yield* Stream.runCollect(sp.send(fresh))
      assert.deepStrictEqual(events.at(-1), {
        type: "error",
        code: "PROVIDER_FAILED",
        message: "scripted failure (FAIL_HTTP 400)",
        details: { provider: "codex", apiErrorType: "invalid_request_error", apiErrorCode: "scripted" }
      })
    })
  )

  it.live("codex dying without a word on stdout fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send(fresh)).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills codex and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, fresh, bin)
      })
    )
  )
})
