// The ollama provider through a real Core and the real pedelec-agent, against the scripted model server (and a raw
// one that never stops calling tools): the workspace tools act on the session's workspace and refuse a way out,
// scripts run through pedelec-deno (DENO_UNAVAILABLE without its runtime), a model stuck in tool calls is stopped at
// the round limit, a missing key or model is told apart, the conversation file goes when the session ends, and a
// server that echoes the API key in its errors does not get it to the page, the session log or Core's log.
import { existsSync } from "node:fs"
import { readdir, readFile, writeFile } from "node:fs/promises"
import http from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import {
  coreForFile,
  desktopClient,
  failureCode,
  hostClient,
  ORIGIN,
  openSession,
  removeHome,
  runTurnAnswering,
  startCore,
  stopCore
} from "@pedelec/test-kit/core/Harness"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll } from "vitest"

const core = coreForFile()
let server: ModelServer
beforeAll(async () => {
  server = await startModelServer()
})
afterAll(() => server.close())

/** As the user does it: through the desktop role (the host role cannot change settings). */
const configure = (baseUrl: string, apiKey: string | null = "ollama", info: CoreRuntimeInfo = core.info) =>
  Effect.gen(function* () {
    const desktop = yield* desktopClient(info)
    yield* desktop["desktop.settings.set"]({
      settings: { ...DEFAULT_SETTINGS, ollama: { baseUrl, timeoutMs: 10_000 } }
    })
    yield* apiKey === null
      ? desktop["desktop.settings.clear_secret"]({ name: "ollamaApiKey" })
      : desktop["desktop.settings.set_secret"]({ name: "ollamaApiKey", value: apiKey })
  })

const ollamaSession = (model = "scripted-model", baseUrl = server.url) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    yield* configure(baseUrl)
    const opened = yield* openSession(client, { provider: "ollama", model })
    const turn = (text: string) =>
      runTurnAnswering(client, opened.events, opened.sessionId, text, () => ({ ok: true, result: "page" }))
    return { client, ...opened, turn, workspace: path.join(core.home, "workspaces", opened.sessionId) }
  })

/** Every file of the home but secrets.json (where the key belongs), with its text. */
const homeFiles = async (home: string) => {
  const names = await readdir(home, { recursive: true, withFileTypes: true })
  const files = names.filter((entry) => entry.isFile() && entry.name !== "secrets.json")
  return Promise.all(
    files.map(async (entry) => {
      const file = path.join(entry.parentPath, entry.name)
      return { file: path.relative(home, file), text: await readFile(file, "utf8").catch(() => "") }
    })
  )
}

describe("ollama through pedelec-agent and a real Core", () => {
  it.live(
    "an API key the server echoes back in its errors reaches neither the page, the session log nor Core's log",
    () =>
      Effect.gen(function* () {
        const key = "sk-pedelec-echoed-0123456789"
        const client = yield* hostClient(core.info)
        yield* configure(server.url, key)
        const { events, sessionId } = yield* openSession(client, { provider: "ollama", model: "scripted-model" })
        const turn = (text: string) =>
          runTurnAnswering(client, events, sessionId, text, () => ({ ok: true, result: "page" }))
        const refused = yield* turn("ECHO_AUTH[401]END")
        assert.strictEqual(refused.error?.code, "OLLAMA_AUTH_FAILED")
        const broken = yield* turn("ECHO_AUTH[500]END")
        assert.strictEqual(broken.error?.code, "PROVIDER_FAILED")
        // The server's words still arrive, with the key taken out.
        assert.include(JSON.stringify(refused.error), "invalid API key: Bearer (hidden)")
        assert.include(JSON.stringify(broken.error), "upstream said: Bearer (hidden)")
        assert.notInclude(JSON.stringify(events.seen), key, "no event the page received carries the key")
        yield* client["session.end"]({ origin: ORIGIN, sessionId })
        const leaks = (yield* Effect.promise(() => homeFiles(core.home))).filter(({ text }) => text.includes(key))
        assert.deepStrictEqual(
          leaks.map(({ file }) => file),
          [],
          "no file of the home but secrets.json holds the key"
        )
        assert.notInclude(core.stderr(), key, "Core's log")
        yield* configure(server.url)
      }).pipe(Effect.scoped)
  )

  it.live("writes and reads the session's workspace, and refuses a path out of it", () =>
    Effect.gen(function* () {
      const { turn, workspace } = yield* ollamaSession()
      const wrote = yield* turn('TOOL[pedelec_write_file]ARGS[{"path":"out/r.txt","content":"from the model"}]END')
      assert.strictEqual(wrote.reason, "completed")
      assert.strictEqual(
        yield* Effect.promise(() => readFile(path.join(workspace, "out", "r.txt"), "utf8")),
        "from the model"
      )
      const read = yield* turn('TOOL[pedelec_read_file]ARGS[{"path":"out/r.txt"}]END')
      assert.include(read.text, "from the model")
      const outside = yield* turn('TOOL[pedelec_read_file]ARGS[{"path":"../../settings.json"}]END')
      assert.strictEqual(outside.reason, "completed")
      assert.include(outside.text, "INVALID_INPUT")
      assert.notInclude(outside.text, "baseUrl")
    })
  )

  it.live("a script the model wrote runs through pedelec-deno in the session's workspace", () =>
    Effect.gen(function* () {
      const { turn, workspace } = yield* ollamaSession()
      const script =
        'const n = Number(Deno.args[0]); await Deno.writeTextFile("twice.txt", String(n * 2)); console.log("twice", n * 2)'
      const wrote = yield* turn(
        `TOOL[pedelec_write_file]ARGS[${JSON.stringify({ path: "main.ts", content: script })}]END`
      )
      assert.strictEqual(wrote.reason, "completed")
      const ran = yield* turn('TOOL[pedelec_run_script]ARGS[{"script":"main.ts","args":["21"]}]END')
      assert.strictEqual(ran.reason, "completed")
      const said = JSON.parse(ran.text.replace(/^tool said: /, "")) as {
        ok: boolean
        result: { exitCode: number; stdout: string; stderr: string }
      }
      assert.deepStrictEqual(said, { ok: true, result: { exitCode: 0, stdout: "twice 42\n", stderr: "" } })
      assert.strictEqual(yield* Effect.promise(() => readFile(path.join(workspace, "twice.txt"), "utf8")), "42")
      const denied = yield* turn('TOOL[pedelec_run_script]ARGS[{"script":"../../settings.json"}]END')
      // pedelec-deno's own refusal reaches the model as a failed call, not as a script's output.
      assert.include(denied.text, '"ok":false,"error":{"code":"SCRIPT_PATH_INVALID"')
    })
  )

  it.live("without its Deno runtime a script is DENO_UNAVAILABLE, never run another way", () =>
    Effect.gen(function* () {
      const other = yield* Effect.acquireRelease(
        Effect.promise(() => startCore({ env: { PEDELEC_DENO_BIN: "/nonexistent/deno" } })),
        (started) => Effect.promise(() => stopCore(started).then(() => removeHome(started.home)))
      )
      const client = yield* hostClient(other.info)
      yield* configure(server.url, "ollama", other.info)
      const { events, sessionId } = yield* openSession(client, { provider: "ollama", model: "scripted-model" })
      const workspace = path.join(other.home, "workspaces", sessionId)
      yield* Effect.promise(() => writeFile(path.join(workspace, "main.ts"), 'console.log("ran")'))
      const ran = yield* runTurnAnswering(
        client,
        events,
        sessionId,
        'TOOL[pedelec_run_script]ARGS[{"script":"main.ts"}]END',
        () => ({ ok: true, result: "page" })
      )
      assert.include(ran.text, '"ok":false,"error":{"code":"DENO_UNAVAILABLE"')
      assert.include(ran.text, "do not run the script with node, bun or another deno")
      assert.notInclude(ran.text, "ran\\n")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a model that never stops calling tools is stopped at the round limit; the conversation goes with the session",
    () =>
      Effect.gen(function* () {
        let chats = 0
        const endless = http.createServer((req, res) => {
          if (req.url?.endsWith("/api/chat")) chats++
          const call = { function: { name: "pedelec_list_files", arguments: {} } }
          const line = req.url?.endsWith("/api/chat")
            ? { message: { role: "assistant", content: "", tool_calls: [call] }, done: true }
            : { model_info: { "llama.context_length": 4096 } }
          res.end(`${JSON.stringify(line)}\n`)
        })
        yield* Effect.promise(() => new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve)))
        yield* Effect.addFinalizer(() =>
          Effect.promise(() => new Promise<void>((resolve) => endless.close(() => resolve())))
        )
        const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`
        const { client, sessionId, turn } = yield* ollamaSession("scripted-model", url)
        const stuck = yield* turn("go")
        assert.strictEqual(stuck.reason, "failed")
        assert.strictEqual(stuck.error?.code, "PROVIDER_FAILED")
        assert.include(stuck.error?.message, "32 rounds")
        assert.strictEqual(chats, 32)
        const conversations = path.join(core.home, "agent", sessionId)
        assert.isTrue(existsSync(conversations))
        yield* client["session.end"]({ origin: ORIGIN, sessionId })
        assert.isFalse(existsSync(conversations))
      }).pipe(Effect.scoped)
  )

  it.live("a model Ollama does not have is OLLAMA_MODEL_NOT_FOUND, with the pull command", () =>
    Effect.gen(function* () {
      const { turn } = yield* ollamaSession("no-such-model")
      const failed = yield* turn("TEXT[x]END")
      assert.strictEqual(failed.error?.code, "OLLAMA_MODEL_NOT_FOUND")
      assert.include(failed.error?.message, "ollama pull no-such-model")
    })
  )

  it.live("without an API key ollama is unavailable and says how to fix it; setting one is enough, no rescan", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      yield* configure(server.url, null)
      const listed = (yield* client["providers.list"]({ rescan: true })).find((info) => info.code === "ollama")
      assert.isFalse(listed?.available)
      assert.include(listed?.error, "non-empty API key")
      const create = client["session.create"]({
        origin: ORIGIN,
        input: { provider: "ollama", model: "scripted-model" }
      })
      assert.strictEqual(yield* failureCode(create), "PROVIDER_UNAVAILABLE")
      yield* configure(server.url)
      const created = yield* client["session.create"]({
        origin: ORIGIN,
        input: { provider: "ollama", model: "scripted-model", autoEndOnDisconnect: false }
      })
      assert.isString(created.sessionId)
    })
  )
})
