/**
 * OpencodeAdapter without the real CLI: the argv and environment of a turn (new and resumed, least privilege and
 * full access, model, effort), detection through Discovery, and the process path with a shell-script `opencode`
 * double that replays a real fixture (what it was given on argv and stdin is checked), fails, exits early, or hangs
 * until cancelled. The real CLI is exercised by live conformance outside this package.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  LEAST_PRIVILEGE_CONFIG,
  makeOpencodeAdapter,
  OPENCODE_EFFORT_ALLOW_LIST,
  opencodeArgs,
  opencodeEnv,
  opencodeMcpConfig
} from "../../src/opencode/OpencodeAdapter.ts"
import { PEDELEC_MCP_TOOL_TIMEOUT_MS } from "../../src/PedelecMcp.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/opencode")

/** An `opencode` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE (or hangs). */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "1.18.33"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
if [ "$STUB_MODE" = "early" ]; then head -n 2 "$STUB_FIXTURE"; exit 0; fi
cat "$STUB_FIXTURE"
`

const fresh = { prompt: "x", providerSessionId: undefined, kind: "user" } as const

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("opencode-bin")
  const workspace = yield* tempDir("opencode-ws")
  writeFileSync(path.join(bin, "opencode"), STUB)
  chmodSync(path.join(bin, "opencode"), 0o755)
  const adapter = makeOpencodeAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay") =>
    adapter.start(
      sessionOptions({
        workspace,
        env: { STUB_DIR: bin, STUB_FIXTURE: path.join(fixtures, fixture), STUB_MODE: mode, PEDELEC_THREAD_ID: "t1" }
      })
    )
  return { bin, workspace, adapter, start }
})

describe("OpencodeAdapter invocation", () => {
  it("a new turn, least privilege: json output, the workspace as --dir, the pedelec agent", () => {
    assert.deepStrictEqual(opencodeArgs(sessionOptions(), fresh), [
      ...["run", "--format", "json", "--dir", "/tmp/ws", "--agent", "pedelec"]
    ])
  })

  it("a resumed turn with a model and an effort profile", () => {
    const args = opencodeArgs(
      sessionOptions({ model: "anthropic/claude-sonnet-4-5", effort: { argv: ["--variant=high"], env: {} } }),
      {
        prompt: "x",
        providerSessionId: "ses_abc",
        kind: "user"
      }
    )
    assert.deepStrictEqual(args.slice(5), [
      ...["--agent", "pedelec", "-m", "anthropic/claude-sonnet-4-5", "-s", "ses_abc", "--variant=high"]
    ])
  })

  it("full access: opencode's own agent with --auto, still in the workspace", () => {
    const args = opencodeArgs(sessionOptions({ fullAccess: true }), {
      prompt: "x",
      providerSessionId: "ses_abc",
      kind: "user"
    })
    assert.deepStrictEqual(args, ["run", "--format", "json", "--dir", "/tmp/ws", "--auto", "-s", "ses_abc"])
  })

  it("least privilege: the agent's rules in OPENCODE_CONFIG_CONTENT, project config off, session env kept", () => {
    const env = opencodeEnv(sessionOptions())
    assert.strictEqual(env.PEDELEC_THREAD_ID, "t1")
    assert.strictEqual(env.PEDELEC_SESSION_CAP, "cap")
    assert.strictEqual(env.OPENCODE_DISABLE_PROJECT_CONFIG, "1")
    assert.strictEqual(env.OPENCODE_DISABLE_AUTOUPDATE, "1")
    assert.strictEqual(env.OPENCODE_DISABLE_SHARE, "1")
    assert.isAbove(Number(env.OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS), 30 * 60_000)
    const config = JSON.parse(env.OPENCODE_CONFIG_CONTENT ?? "{}")
    assert.deepStrictEqual(config, LEAST_PRIVILEGE_CONFIG)
    assert.deepStrictEqual(config.agent.pedelec.permission, {
      "*": "deny",
      read: "allow",
      edit: "allow",
      glob: "allow",
      grep: "allow",
      list: "allow",
      todowrite: "allow",
      "pedelec_*": "allow",
      external_directory: "deny",
      bash: { "*": "deny", "pedelec-cli *": "allow", "pedelec-deno *": "allow" }
    })
    // Broad rules first: opencode applies the last matching rule.
    assert.strictEqual(Object.keys(config.agent.pedelec.permission)[0], "*")
    assert.strictEqual(Object.keys(config.agent.pedelec.permission.bash)[0], "*")
  })

  it("full access adds no config of ours and leaves project config on", () => {
    const env = opencodeEnv(sessionOptions({ fullAccess: true }))
    assert.isUndefined(env.OPENCODE_CONFIG_CONTENT)
    assert.isUndefined(env.OPENCODE_DISABLE_PROJECT_CONFIG)
    assert.strictEqual(env.OPENCODE_DISABLE_SHARE, "1")
  })

  it("the pedelec MCP server joins the config in both modes, by command only: the capability stays in the env", () => {
    const mcp = { command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] }
    const server = {
      type: "local",
      command: ["/opt/pedelec/bin/pedelec-cli", "mcp"],
      enabled: true,
      timeout: PEDELEC_MCP_TOOL_TIMEOUT_MS
    }
    const least = opencodeEnv(sessionOptions(), mcp)
    assert.deepStrictEqual(JSON.parse(least.OPENCODE_CONFIG_CONTENT ?? "{}"), {
      ...LEAST_PRIVILEGE_CONFIG,
      mcp: { pedelec: server }
    })
    const full = opencodeEnv(sessionOptions({ fullAccess: true }), mcp)
    assert.deepStrictEqual(JSON.parse(full.OPENCODE_CONFIG_CONTENT ?? "{}"), { mcp: { pedelec: server } })
    assert.isUndefined(full.OPENCODE_DISABLE_PROJECT_CONFIG)
    assert.notInclude(least.OPENCODE_CONFIG_CONTENT ?? "", `"${least.PEDELEC_SESSION_CAP}"`)
    assert.deepStrictEqual(opencodeMcpConfig(undefined), {})
  })

  it("effort tokens are single --variant=<name> tokens", () => {
    const allowed = (token: string) => OPENCODE_EFFORT_ALLOW_LIST.argv.some((pattern) => pattern.test(token))
    assert.isTrue(allowed("--variant=high") && allowed("--variant=minimal") && allowed("--variant=max"))
    assert.isFalse(allowed("high") || allowed("--variant") || allowed("--variant=high; rm") || allowed("--auto"))
    assert.isFalse(allowed("--variant=") || allowed("--model=x") || allowed("--variant=a b"))
    assert.deepStrictEqual(OPENCODE_EFFORT_ALLOW_LIST.env, [])
  })
})

describe("OpencodeAdapter detection and processes", () => {
  it.live("not installed: unavailable, with what to do about it", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("opencode-none")
      const info = yield* makeOpencodeAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.isFalse(info.available)
      assert.isNull(info.version)
      assert.include(info.error ?? "", "npm install -g opencode-ai")
      assert.isFalse(info.experimental)
      assert.isTrue(info.effort.supported)
    })
  )

  it.live("installed: available with the version opencode --version prints", () =>
    Effect.gen(function* () {
      const { adapter } = yield* withStub
      const info = yield* adapter.detect
      assert.deepStrictEqual([info.available, info.version, info.error], [true, "1.18.33", null])
    })
  )

  it.live("a turn: the prompt goes on stdin, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, workspace, start } = yield* withStub
      const sp = yield* start("tool-turn.jsonl")
      const prompt = `Use the page tool. RUN[pedelec-cli --thread-id t1 tool-call page_title '{"tab":1}']END`
      const events = yield* Stream.runCollect(sp.send({ prompt, providerSessionId: undefined, kind: "user" }))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "tool_activity", "message", "usage", "completed"]
      )
      assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), prompt)
      const argv = readFileSync(path.join(bin, "argv"), "utf8").split("\n")
      assert.deepStrictEqual(argv.slice(0, 7), ["run", "--format", "json", "--dir", workspace, "--agent", "pedelec"])
      const env = readFileSync(path.join(bin, "env"), "utf8")
      assert.include(env, "PEDELEC_THREAD_ID=t1")
      assert.include(env, "OPENCODE_DISABLE_PROJECT_CONFIG=1")
    })
  )

  it.live("an error turn ends with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-400.jsonl")
      const events = yield* Stream.runCollect(sp.send(fresh))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "error"]
      )
    })
  )

  it.live("a clean exit before the last step still completes the turn", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "early")
      const events = yield* Stream.runCollect(sp.send(fresh))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "message", "completed"]
      )
    })
  )

  it.live("opencode dying without a result fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send(fresh)).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills opencode and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, fresh, bin)
      })
    )
  )
})
