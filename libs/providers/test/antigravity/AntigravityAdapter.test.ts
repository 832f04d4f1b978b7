/**
 * AntigravityAdapter without the real CLI (it cannot be installed here): the argv and stdin line of a turn in both
 * permission modes, detection through Discovery, and the process path with a shell-script `agy` double that
 * replays a hand-written fixture (what it was given on argv and stdin is checked), refuses a sign-in on stderr,
 * crashes, or hangs until cancelled.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  ANTIGRAVITY_EFFORT_ALLOW_LIST,
  antigravityArgs,
  antigravityEnv,
  antigravityInput,
  makeAntigravityAdapter
} from "../../src/antigravity/AntigravityAdapter.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/antigravity")
const turn = { prompt: "x", providerSessionId: undefined, kind: "user" } as const

/** An `agy` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE (or not). */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "agy version 1.2.14"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
if [ "$STUB_MODE" = "stderr" ]; then cat "$STUB_FIXTURE" >&2; exit 1; fi
cat "$STUB_FIXTURE"
`

const withStub = Effect.gen(function* () {
  const bin = yield* tempDir("agy-bin")
  const workspace = yield* tempDir("agy-ws")
  writeFileSync(path.join(bin, "agy"), STUB)
  chmodSync(path.join(bin, "agy"), 0o755)
  const adapter = makeAntigravityAdapter({ env: { PATH: bin, HOME: bin } })
  const start = (fixture: string, mode = "replay") =>
    adapter.start(
      sessionOptions({
        workspace,
        env: { STUB_DIR: bin, STUB_FIXTURE: path.join(fixtures, fixture), STUB_MODE: mode, PEDELEC_THREAD_ID: "t1" }
      })
    )
  return { bin, workspace, adapter, start }
})

describe("AntigravityAdapter invocation", () => {
  it("least privilege by default: stream-json both ways, accept-edits, no skipped permissions", () => {
    assert.deepStrictEqual(antigravityArgs(sessionOptions(), turn), [
      ...["--output-format", "stream-json", "--input-format", "stream-json", "--disable-slash-commands"],
      ...["--add-dir", "/tmp/ws", "--print-timeout", "18060s", "--mode", "accept-edits"]
    ])
  })

  it("full access, a model, a resume and an effort profile", () => {
    const args = antigravityArgs(
      sessionOptions({ fullAccess: true, model: "gemini-3.1-pro", effort: { argv: ["--effort=high"], env: {} } }),
      { prompt: "x", providerSessionId: "c1", kind: "user" }
    )
    assert.deepStrictEqual(args.slice(11), [
      ...["--dangerously-skip-permissions", "--model", "gemini-3.1-pro", "--conversation", "c1", "--effort=high"]
    ])
    assert.notInclude(antigravityArgs(sessionOptions(), turn), "--dangerously-skip-permissions")
  })

  it("the prompt is one stream-json user line, whatever it contains", () => {
    const prompt = 'line one\n"quoted" /not-a-command'
    const line = antigravityInput(prompt)
    assert.isTrue(line.endsWith("\n"))
    assert.strictEqual(line.indexOf("\n"), line.length - 1)
    assert.deepStrictEqual(JSON.parse(line), { event: "user", message: { content: prompt } })
  })

  it("the environment keeps the session's and turns agy's self-update off", () => {
    const env = antigravityEnv(sessionOptions())
    assert.strictEqual(env.PEDELEC_THREAD_ID, "t1")
    assert.strictEqual(env.AGY_CLI_DISABLE_AUTO_UPDATE, "1")
  })

  it("effort tokens are single --effort=<level> tokens only, and none by default", () => {
    const allowed = (token: string) => ANTIGRAVITY_EFFORT_ALLOW_LIST.argv.some((pattern) => pattern.test(token))
    assert.isTrue(allowed("--effort=low") && allowed("--effort=medium") && allowed("--effort=high"))
    assert.isFalse(allowed("high") || allowed("--effort") || allowed("--effort=max") || allowed("--effort=low; rm"))
    assert.deepStrictEqual(makeAntigravityAdapter().defaultEffort.medium, { argv: [], env: {} })
  })
})

describe("AntigravityAdapter detection and processes", () => {
  it.live("not installed: unavailable, experimental, with how to install and sign in", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("agy-none")
      const info = yield* makeAntigravityAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.isFalse(info.available)
      assert.isNull(info.version)
      assert.include(info.error ?? "", "https://antigravity.google/cli/install.sh")
      assert.include(info.error ?? "", "running `agy`")
      assert.isTrue(info.experimental)
      assert.isFalse(info.effort.supported)
    })
  )

  it.live("installed: available with the version agy --version prints", () =>
    Effect.gen(function* () {
      const { adapter } = yield* withStub
      const info = yield* adapter.detect
      assert.deepStrictEqual([info.available, info.version, info.error], [true, "1.2.14", null])
    })
  )

  it.live("a turn: the prompt goes on stdin as a user line, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, workspace, start } = yield* withStub
      const sp = yield* start("text-turn.jsonl")
      const events = yield* Stream.runCollect(sp.send({ ...turn, prompt: "say hello" }))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "delta", "delta", "message", "usage", "completed"]
      )
      assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), antigravityInput("say hello"))
      const argv = readFileSync(path.join(bin, "argv"), "utf8").split("\n")
      assert.notInclude(argv, "say hello")
      assert.strictEqual(argv[argv.indexOf("--add-dir") + 1], workspace)
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("a failed result ends the turn with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("error-result.jsonl")
      const events = yield* Stream.runCollect(sp.send(turn))
      assert.strictEqual(events.at(-1)?.type, "error")
    })
  )

  it.live("a sign-in prompt on stderr without a result becomes an authentication error", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("auth-failure.stderr.txt", "stderr")
      const events = yield* Stream.runCollect(sp.send(turn))
      const last = events.at(-1)
      assert.strictEqual(last?.type === "error" && last.code, "PROVIDER_AUTH_REQUIRED")
    })
  )

  it.live("agy dying without a result fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send(turn)).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills agy and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, turn, bin)
      })
    )
  )
})
