/**
 * CodexAdapter without the real CLI: the app-server argv and thread settings (default and full access, with and
 * without model and effort, the MCP server), exec's argv for the bench, the effort allow-list, detection through
 * Discovery, and the process path with a shell-script `codex` double that replays real app-server output (what it
 * was given on argv, stdin and env is checked), dies, or hangs until cancelled. The real CLI is wired into live
 * conformance separately.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  CODEX_EFFORT_ALLOW_LIST,
  codexAppServerArgs,
  codexExecArgs,
  codexThreadSettings,
  makeCodexAdapter
} from "../../src/codex/CodexAdapter.ts"
import type { SessionProcessOptions, TurnInput } from "../../src/Provider.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir, waitFor } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "app-server")

/**
 * A `codex` double: answers --version, records argv and env, reads the handshake and thread request (three lines),
 * then replays STUB_FIXTURE (real app-server output answering the adapter's request ids), or hangs, or dies; it
 * records what else arrives on stdin until it closes.
 */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "codex-cli 0.171.0"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
for i in 1 2 3; do IFS= read -r line; printf '%s\\n' "$line" >> "$STUB_DIR/stdin"; done
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "truncated" ]; then grep -v turn/completed "$STUB_FIXTURE"; exit 1; fi
cat "$STUB_FIXTURE"
cat >> "$STUB_DIR/stdin"
`

const fresh: TurnInput = { prompt: "x", providerSessionId: undefined, kind: "user" }
const resumed: TurnInput = { prompt: "x", providerSessionId: "01a2297c-faf9-7a31-bba3-0a98311945d1", kind: "user" }

const SANDBOX = [
  ...["-c", "sandbox_mode=workspace-write", "-c", "sandbox_workspace_write.network_access=true"],
  ...["-c", `approval_policy="never"`]
]
const FULL = ["-c", `sandbox_mode="danger-full-access"`, "-c", `approval_policy="never"`]
const QUIET = [
  ...["-c", "allow_login_shell=false", "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"],
  ...["-c", "features.skill_search=false"]
]
const LOW = { argv: ["--config=model_reasoning_effort=low"], env: {} }

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("codex-bin")
  const workspace = yield* tempDir("codex-ws")
  writeFileSync(path.join(bin, "codex"), STUB)
  chmodSync(path.join(bin, "codex"), 0o755)
  const adapter = makeCodexAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay", overrides: Partial<SessionProcessOptions> = {}) =>
    adapter.start(
      sessionOptions({
        workspace,
        env: { STUB_DIR: bin, STUB_FIXTURE: path.join(fixtures, fixture), STUB_MODE: mode, PEDELEC_THREAD_ID: "t1" },
        ...overrides
      })
    )
  const written = () =>
    readFileSync(path.join(bin, "stdin"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
  return { bin, workspace, adapter, start, written }
})

describe("CodexAdapter invocation", () => {
  it("app-server, least privilege: workspace-write with network, approval never, no login shell or skill trial", () => {
    assert.deepStrictEqual(codexAppServerArgs(sessionOptions()), ["app-server", ...SANDBOX, ...QUIET])
    assert.deepStrictEqual(codexThreadSettings(sessionOptions({ workspace: "/ws" })), {
      cwd: "/ws",
      sandbox: "workspace-write",
      approvalPolicy: "never"
    })
  })

  it("app-server, full access with a model and an effort profile: no sandbox, the model in the thread settings", () => {
    const session = sessionOptions({ fullAccess: true, model: "gpt-5.5", workspace: "/ws", effort: LOW })
    assert.deepStrictEqual(codexAppServerArgs(session), ["app-server", ...FULL, ...QUIET, ...LOW.argv])
    assert.deepStrictEqual(codexThreadSettings(session), {
      cwd: "/ws",
      sandbox: "danger-full-access",
      approvalPolicy: "never",
      model: "gpt-5.5"
    })
  })

  it("the pedelec MCP server: command, args, env by name, required, approval and timeout; no capability", () => {
    const session = sessionOptions({ effort: LOW })
    const args = codexAppServerArgs(session, { command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] })
    const key = "mcp_servers.pedelec"
    assert.deepStrictEqual(args, [
      ...["app-server", ...SANDBOX, ...QUIET],
      ...["-c", `${key}.command="/opt/pedelec/bin/pedelec-cli"`, "-c", `${key}.args=["mcp"]`],
      ...["-c", `${key}.env_vars=["PEDELEC_THREAD_ID","PEDELEC_SESSION_CAP","PEDELEC_HOME","PATH"]`],
      ...["-c", `${key}.required=true`],
      ...["-c", `${key}.default_tools_approval_mode="approve"`, "-c", `${key}.tool_timeout_sec=18060`],
      ...LOW.argv
    ])
    assert.isFalse(args.some((arg) => arg.includes(session.env.PEDELEC_SESSION_CAP!)))
  })

  it("exec (the bench's bare baseline): new and resumed turns, the same sandbox, its own bypass flag", () => {
    const tail = ["--skip-git-repo-check", "--"]
    assert.deepStrictEqual(codexExecArgs(sessionOptions(), fresh), [
      "exec",
      "--json",
      ...SANDBOX,
      ...QUIET,
      ...tail,
      "-"
    ])
    assert.deepStrictEqual(codexExecArgs(sessionOptions(), resumed), [
      ...["exec", "resume", "--json", ...SANDBOX, ...QUIET, ...tail, resumed.providerSessionId, "-"]
    ])
    const full = sessionOptions({ fullAccess: true, model: "o4", effort: LOW })
    assert.deepStrictEqual(codexExecArgs(full, fresh), [
      ...["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", ...QUIET, "--skip-git-repo-check"],
      ...["--model", "o4", ...LOW.argv, "--", "-"]
    ])
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

  it.live("a turn: handshake, thread and turn as JSON-RPC on stdin, the prompt untouched, events from stdout", () =>
    Effect.gen(function* () {
      const { bin, workspace, start, written } = yield* withStub
      const sp = yield* start("tool-turn.jsonl")
      const prompt = '--looks like a flag\n  ünïcode "q" $HOME\n'
      const events = yield* Stream.runCollect(sp.send({ ...fresh, prompt }))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "tool_activity", "tool_activity", "delta", "delta", "delta", "message", "usage", "completed"]
      )
      const requests = yield* waitFor(
        "the turn/start request",
        Effect.sync(() => {
          const seen = written()
          return seen.length === 4 ? seen : undefined
        })
      )
      assert.deepStrictEqual(
        requests.map((message) => message.method),
        ["initialize", "initialized", "thread/start", "turn/start"]
      )
      assert.deepStrictEqual(requests[2].params, {
        cwd: workspace,
        sandbox: "workspace-write",
        approvalPolicy: "never"
      })
      assert.strictEqual(requests[3].params.input[0].text, prompt)
      assert.strictEqual(readFileSync(path.join(bin, "argv"), "utf8").trim().split("\n")[0], "app-server")
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("a resumed turn in full access: thread/resume of its thread, no sandbox", () =>
    Effect.gen(function* () {
      const { start, written } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "replay", { fullAccess: true, model: "o4" })
      yield* Stream.runDrain(sp.send(resumed))
      const thread = written()[2]
      assert.strictEqual(thread.method, "thread/resume")
      assert.deepStrictEqual(
        [thread.params.threadId, thread.params.sandbox, thread.params.model],
        [resumed.providerSessionId, "danger-full-access", "o4"]
      )
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
        STUB_FIXTURE: path.join(fixtures, "text-turn.jsonl"),
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

  it.live("codex dying after an error notification but before turn/completed reports that error", () =>
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
