/**
 * GeminiAdapter without the real CLI: the argv and environment of a turn, the least-privilege policy file's life,
 * detection through Discovery, and the process path with a shell-script `gemini` double that replays a real fixture
 * (what it was given on argv, stdin and env is checked), fails the way gemini does (exit 41 without credentials, 42
 * for a session of another folder), or hangs until cancelled. The real CLI is verified live, outside these tests.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  GEMINI_EFFORT_ALLOW_LIST,
  GEMINI_POLICY,
  geminiArgs,
  geminiEnv,
  makeGeminiAdapter
} from "../../src/gemini/GeminiAdapter.ts"
import type { SessionProcessOptions, TurnInput } from "../../src/Provider.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/gemini")

/** A `gemini` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE, fails or hangs. */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "0.61.0"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
env > "$STUB_DIR/env"
if [ -f .gemini/settings.json ]; then cp .gemini/settings.json "$STUB_DIR/settings"; fi
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "no-key" ]; then echo "When using Gemini API, you must specify the GEMINI_API_KEY environment variable." >&2; exit 41; fi
if [ "$STUB_MODE" = "other-folder" ]; then echo 'Error resuming session: Invalid session identifier "x".' >&2; exit 42; fi
cat "$STUB_FIXTURE"
`

const newTurn: TurnInput = { prompt: "x", providerSessionId: undefined, kind: "user" }

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("gemini-bin")
  const workspace = yield* tempDir("gemini-ws")
  writeFileSync(path.join(bin, "gemini"), STUB)
  chmodSync(path.join(bin, "gemini"), 0o755)
  const adapter = makeGeminiAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay", overrides: Partial<SessionProcessOptions> = {}) =>
    adapter.start(
      sessionOptions({
        workspace,
        env: {
          STUB_DIR: bin,
          STUB_FIXTURE: path.join(fixtures, fixture),
          STUB_MODE: mode,
          PEDELEC_THREAD_ID: "t1",
          PATH: `${bin}:/usr/bin:/bin`
        },
        ...overrides
      })
    )
  const argv = () => readFileSync(path.join(bin, "argv"), "utf8").split("\n").slice(0, -1)
  return { bin, adapter, start, argv }
})

describe("GeminiAdapter invocation", () => {
  it("a new turn with least privilege: headless, prompt on stdin, auto_edit and Pedelec's admin policy", () => {
    assert.deepStrictEqual(geminiArgs(sessionOptions(), newTurn, "/p/policy.toml"), [
      ...["-p", "", "--output-format", "stream-json", "--skip-trust"],
      ...["--approval-mode", "auto_edit", "--admin-policy", "/p/policy.toml"]
    ])
  })

  it("full access, a model and a resume: yolo and no policy", () => {
    const args = geminiArgs(
      sessionOptions({ fullAccess: true, model: "gemini-2.5-flash" }),
      { ...newTurn, providerSessionId: "abc" },
      ""
    )
    assert.deepStrictEqual(args.slice(5), [
      ...["--approval-mode", "yolo", "--model", "gemini-2.5-flash", "--resume", "abc"]
    ])
  })

  it("a resumed least-privilege turn keeps the policy", () => {
    const args = geminiArgs(sessionOptions(), { ...newTurn, providerSessionId: "abc" }, "/p/policy.toml")
    assert.deepStrictEqual(args.slice(5), [
      ...["--approval-mode", "auto_edit", "--admin-policy", "/p/policy.toml", "--resume", "abc"]
    ])
  })

  it("effort: gemini has no knob, so profiles hold no tokens; the session's environment passes unchanged", () => {
    assert.deepStrictEqual(GEMINI_EFFORT_ALLOW_LIST, { argv: [], env: [] })
    assert.deepStrictEqual(geminiEnv(sessionOptions()), { PEDELEC_THREAD_ID: "t1", PEDELEC_SESSION_CAP: "cap" })
  })

  it("with the pedelec server (least privilege): no other MCP server; with full access the user's stay", () => {
    const args = geminiArgs(sessionOptions(), newTurn, "/p/policy.toml", true)
    assert.deepStrictEqual(args.slice(5), [
      ...["--approval-mode", "auto_edit", "--admin-policy", "/p/policy.toml"],
      ...["--allowed-mcp-server-names", "pedelec"]
    ])
    assert.notInclude(geminiArgs(sessionOptions({ fullAccess: true }), newTurn, "", true), "--allowed-mcp-server-names")
    assert.strictEqual(geminiEnv(sessionOptions(), true).GEMINI_CLI_TRUST_WORKSPACE, "true")
    assert.isUndefined(geminiEnv(sessionOptions(), false).GEMINI_CLI_TRUST_WORKSPACE)
  })

  it("the policy denies every shell command but pedelec-cli and pedelec-deno, and the web tools", () => {
    assert.include(GEMINI_POLICY, `mcpName = "pedelec"\ntoolName = "*"\ndecision = "allow"\npriority = 200`)
    assert.include(GEMINI_POLICY, `commandPrefix = ["pedelec-cli", "pedelec-deno"]\ndecision = "allow"\npriority = 200`)
    assert.include(GEMINI_POLICY, `toolName = "run_shell_command"\ndecision = "deny"\npriority = 100`)
    assert.include(GEMINI_POLICY, `toolName = ["web_fetch", "google_web_search"]\ndecision = "deny"`)
  })
})

describe("GeminiAdapter detection and processes", () => {
  it.live("not installed: unavailable, with what to do about it", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("gemini-none")
      const info = yield* makeGeminiAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.deepStrictEqual([info.available, info.version, info.experimental], [false, null, false])
      assert.include(info.error ?? "", "npm install -g @google/gemini-cli")
      assert.isFalse(info.effort.supported)
    })
  )

  it.live("installed: available with the version gemini --version prints", () =>
    Effect.gen(function* () {
      const { adapter } = yield* withStub
      const info = yield* adapter.detect
      assert.deepStrictEqual([info.available, info.version, info.error], [true, "0.61.0", null])
    })
  )

  it.live("a turn: the prompt on stdin, PEDELEC_* in the environment, the policy file for the session's life", () =>
    Effect.gen(function* () {
      const { bin, start, argv } = yield* withStub
      const policy = yield* Effect.scoped(
        Effect.gen(function* () {
          const sp = yield* start("text-turn.jsonl")
          const events = yield* Stream.runCollect(sp.send({ ...newTurn, prompt: "say hello" }))
          assert.deepStrictEqual(
            events.map((event) => event.type),
            ["delta", "delta", "delta", "message", "usage", "session", "completed"]
          )
          assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), "say hello")
          assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
          const file = argv()[argv().indexOf("--admin-policy") + 1] ?? ""
          assert.strictEqual(readFileSync(file, "utf8"), GEMINI_POLICY)
          assert.strictEqual(statSync(file).mode & 0o777, 0o600)
          return file
        })
      )
      assert.isFalse(existsSync(policy))
    })
  )

  it.live("pedelec-cli on the session's PATH: gemini finds the pedelec server in the workspace, gone after", () =>
    Effect.gen(function* () {
      const { bin, start, argv } = yield* withStub
      writeFileSync(path.join(bin, "pedelec-cli"), "#!/bin/sh\n")
      chmodSync(path.join(bin, "pedelec-cli"), 0o755)
      const workspace = yield* tempDir("gemini-mcp-ws")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const sp = yield* start("text-turn.jsonl", "replay", { workspace })
          yield* Stream.runDrain(sp.send(newTurn))
        })
      )
      assert.deepStrictEqual(argv().slice(-2), ["--allowed-mcp-server-names", "pedelec"])
      const settings = JSON.parse(readFileSync(path.join(bin, "settings"), "utf8"))
      assert.strictEqual(settings.mcpServers.pedelec.command, path.join(bin, "pedelec-cli"))
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "GEMINI_CLI_TRUST_WORKSPACE=true")
      assert.isFalse(existsSync(path.join(workspace, ".gemini")))
    })
  )

  it.live("an error turn ends with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("http-400.jsonl")
      const events = yield* Stream.runCollect(sp.send(newTurn))
      assert.strictEqual(events.at(-1)?.type === "error" && events.at(-1)?.type, "error")
    })
  )

  it.live("gemini without credentials (exit 41) asks for authentication with its own words", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "no-key")
      const events = yield* Stream.runCollect(sp.send(newTurn))
      assert.strictEqual(events.length, 1)
      assert.strictEqual(events[0]?.type === "error" && events[0].code, "PROVIDER_AUTH_REQUIRED")
      assert.include(events[0]?.type === "error" ? events[0].message : "", "GEMINI_API_KEY")
    })
  )

  it.live("a resume of another folder's session (exit 42) fails the turn with gemini's stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "other-folder")
      const error = yield* Stream.runCollect(sp.send({ ...newTurn, providerSessionId: "x" })).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.strictEqual(error.details?.exitCode, 42)
      assert.include(String(error.details?.stderr), "Error resuming session")
    })
  )

  it.live("cancelling a hung turn kills gemini and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, newTurn, bin)
      })
    )
  )
})
