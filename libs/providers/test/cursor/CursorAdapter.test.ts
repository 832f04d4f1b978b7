/**
 * CursorAdapter without the real CLI (it cannot be installed here): the argv of a turn in both permission modes,
 * detection through Discovery under either command name, and the process path with a shell-script `cursor-agent`
 * double that replays a hand-written fixture (what it was given on argv and stdin is checked), fails on stderr the
 * way the docs describe, or hangs until cancelled.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  CURSOR_EFFORT_ALLOW_LIST,
  cursorArgs,
  cursorMcpConfig,
  makeCursorAdapter
} from "../../src/cursor/CursorAdapter.ts"
import { cancelLeavesNoProcess, sessionOptions, tempDir } from "../support.ts"

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/cursor")
const turn = { prompt: "x", providerSessionId: undefined, kind: "user" } as const

/** A `cursor-agent` double: answers --version, records argv, stdin and env, then replays STUB_FIXTURE (or not). */
const STUB = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2026.08.04-aaa8809"; exit 0; fi
printf '%s\\n' "$@" > "$STUB_DIR/argv"
cat > "$STUB_DIR/stdin"
if [ -f .cursor/mcp.json ]; then cp .cursor/mcp.json "$STUB_DIR/mcp.json"; fi
env > "$STUB_DIR/env"
if [ "$STUB_MODE" = "hang" ]; then head -n 1 "$STUB_FIXTURE"; sleep 60 & echo $! > "$STUB_DIR/child"; wait; fi
if [ "$STUB_MODE" = "crash" ]; then echo "boom" >&2; exit 1; fi
if [ "$STUB_MODE" = "stderr" ]; then cat "$STUB_FIXTURE" >&2; exit 1; fi
cat "$STUB_FIXTURE"
`

const withStub = (command = "cursor-agent") =>
  Effect.gen(function* () {
    const bin = yield* tempDir("cursor-bin")
    const workspace = yield* tempDir("cursor-ws")
    writeFileSync(path.join(bin, command), STUB)
    chmodSync(path.join(bin, command), 0o755)
    const adapter = makeCursorAdapter({ env: { PATH: bin, HOME: bin } })
    const start = (fixture: string, mode = "replay", fullAccess = false) =>
      adapter.start(
        sessionOptions({
          workspace,
          fullAccess,
          env: {
            STUB_DIR: bin,
            STUB_FIXTURE: path.join(fixtures, fixture),
            STUB_MODE: mode,
            PEDELEC_THREAD_ID: "t1",
            PATH: `${bin}:/usr/bin:/bin`
          }
        })
      )
    return { bin, workspace, adapter, start }
  })

describe("CursorAdapter invocation", () => {
  it("least privilege by default: print mode with partial output, cursor's sandbox, no --force", () => {
    assert.deepStrictEqual(cursorArgs(sessionOptions(), turn), [
      ...["-p", "--output-format", "stream-json", "--stream-partial-output"],
      ...["--workspace", "/tmp/ws", "--trust", "--sandbox", "enabled"]
    ])
  })

  it("full access, a model, a resume and a profile's tokens", () => {
    const args = cursorArgs(
      sessionOptions({ fullAccess: true, model: "gpt-5.2", effort: { argv: ["--extra"], env: {} } }),
      { prompt: "x", providerSessionId: "abc", kind: "user" }
    )
    assert.deepStrictEqual(args.slice(7), [
      ...["--force", "--sandbox", "disabled", "--model", "gpt-5.2", "--resume", "abc", "--extra"]
    ])
    assert.notInclude(cursorArgs(sessionOptions(), turn), "--force")
    assert.notInclude(args, "--approve-mcps")
  })

  it("the pedelec server (docs only): --approve-mcps with full access and Pedelec's .cursor/mcp.json, never else", () => {
    assert.deepStrictEqual(cursorArgs(sessionOptions({ fullAccess: true }), turn, true).slice(7), [
      ...["--force", "--sandbox", "disabled", "--approve-mcps"]
    ])
    assert.notInclude(cursorArgs(sessionOptions(), turn, true), "--approve-mcps")
    assert.deepStrictEqual(cursorMcpConfig({ command: "/opt/pedelec/bin/pedelec-cli", args: ["mcp"] }), {
      mcpServers: {
        pedelec: {
          command: "/opt/pedelec/bin/pedelec-cli",
          args: ["mcp"],
          env: {
            // biome-ignore lint/suspicious/noTemplateCurlyInString: cursor's own interpolation, not JavaScript's
            PEDELEC_THREAD_ID: "${env:PEDELEC_THREAD_ID}",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: cursor's own interpolation, not JavaScript's
            PEDELEC_SESSION_CAP: "${env:PEDELEC_SESSION_CAP}",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: cursor's own interpolation, not JavaScript's
            PEDELEC_HOME: "${env:PEDELEC_HOME}",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: cursor's own interpolation, not JavaScript's
            PATH: "${env:PATH}"
          }
        }
      }
    })
  })

  it("no effort tokens: cursor's reasoning level is part of the model", () => {
    assert.deepStrictEqual(CURSOR_EFFORT_ALLOW_LIST, { argv: [], env: [] })
  })
})

describe("CursorAdapter detection and processes", () => {
  it.live("not installed: unavailable, experimental, with how to install and sign in", () =>
    Effect.gen(function* () {
      const empty = yield* tempDir("cursor-none")
      const info = yield* makeCursorAdapter({ env: { PATH: empty, HOME: empty } }).detect
      assert.isFalse(info.available)
      assert.isNull(info.version)
      assert.include(info.error ?? "", "curl https://cursor.com/install -fsS | bash")
      assert.include(info.error ?? "", "cursor-agent login")
      assert.isTrue(info.experimental)
      assert.isFalse(info.effort.supported)
    })
  )

  it.live("installed as `cursor-agent`: available with the version it prints; a bare `agent` is not taken for it", () =>
    Effect.gen(function* () {
      const installed = yield* (yield* withStub("cursor-agent")).adapter.detect
      assert.deepStrictEqual([installed.available, installed.version, installed.error], [true, "2026.08.04", null])
      // `agent` is too generic a name: another program called so would be taken for Cursor.
      const generic = yield* (yield* withStub("agent")).adapter.detect
      assert.isFalse(generic.available)
    })
  )

  it.live("a turn: the prompt goes on stdin, the events come from stdout", () =>
    Effect.gen(function* () {
      const { bin, workspace, start } = yield* withStub()
      const sp = yield* start("delta-turn.jsonl")
      const events = yield* Stream.runCollect(sp.send({ ...turn, prompt: "say hello" }))
      assert.deepStrictEqual(
        events.map((event) => event.type),
        ["session", "delta", "delta", "delta", "message", "usage", "completed"]
      )
      assert.strictEqual(readFileSync(path.join(bin, "stdin"), "utf8"), "say hello")
      const argv = readFileSync(path.join(bin, "argv"), "utf8").split("\n")
      assert.include(argv, "stream-json")
      assert.strictEqual(argv[argv.indexOf("--workspace") + 1], workspace)
      assert.include(readFileSync(path.join(bin, "env"), "utf8"), "PEDELEC_THREAD_ID=t1")
    })
  )

  it.live("full access with pedelec-cli on PATH: the workspace's .cursor/mcp.json during the turn, gone after", () =>
    Effect.gen(function* () {
      const { bin, workspace, start } = yield* withStub()
      writeFileSync(path.join(bin, "pedelec-cli"), "#!/bin/sh\n")
      chmodSync(path.join(bin, "pedelec-cli"), 0o755)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const sp = yield* start("delta-turn.jsonl", "replay", true)
          yield* Stream.runDrain(sp.send(turn))
        })
      )
      assert.include(readFileSync(path.join(bin, "argv"), "utf8").split("\n"), "--approve-mcps")
      const config = JSON.parse(readFileSync(path.join(bin, "mcp.json"), "utf8"))
      assert.deepStrictEqual(config, cursorMcpConfig({ command: path.join(bin, "pedelec-cli"), args: ["mcp"] }))
      assert.isFalse(existsSync(path.join(workspace, ".cursor")))
      // Least privilege: no file and no approval, whatever is on PATH.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const sp = yield* start("delta-turn.jsonl")
          yield* Stream.runDrain(sp.send(turn))
          assert.isFalse(existsSync(path.join(workspace, ".cursor")))
        })
      )
      assert.notInclude(readFileSync(path.join(bin, "argv"), "utf8").split("\n"), "--approve-mcps")
    })
  )

  it.live("an error result ends the turn with its error event", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub()
      const sp = yield* start("error-result.jsonl")
      const events = yield* Stream.runCollect(sp.send(turn))
      assert.strictEqual(events.at(-1)?.type, "error")
    })
  )

  it.live("no credentials: cursor's stderr becomes an authentication error", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub()
      const sp = yield* start("auth-failure.stderr.txt", "stderr")
      const events = yield* Stream.runCollect(sp.send(turn))
      const last = events.at(-1)
      assert.strictEqual(last?.type === "error" && last.code, "PROVIDER_AUTH_REQUIRED")
      assert.include(last?.type === "error" ? last.message : "", "agent login")
    })
  )

  it.live("cursor dying without a result fails the turn with its stderr", () =>
    Effect.gen(function* () {
      const { start } = yield* withStub()
      const sp = yield* start("text-turn.jsonl", "crash")
      const error = yield* Stream.runCollect(sp.send(turn)).pipe(Effect.flip)
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(String(error.details?.stderr), "boom")
    })
  )

  it.live("cancelling a hung turn kills cursor and its child", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { bin, start } = yield* withStub()
        const sp = yield* start("text-turn.jsonl", "hang")
        yield* cancelLeavesNoProcess(sp, turn, bin)
      })
    )
  )
})
