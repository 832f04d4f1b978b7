/** ModelServer: routing by path suffix, the request log and its helpers, and both ways to start and stop a server. */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { request } from "node:http"
import os from "node:os"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { modelServer, routeOf, startModelServer } from "../../src/model-server/ModelServer.ts"
import { historyOf, mainRequests, REDACTED, toolNamesOf, userTextsOf } from "../../src/model-server/RequestLog.ts"
import { DEFAULT_TEXT } from "../../src/model-server/Script.ts"
import { claudeRequest, codexRequest, codexUser, opencodeRequest } from "./shapes.ts"
import { call, json } from "./support.ts"

describe("routeOf", () => {
  it("routes by path suffix, whatever the base-URL prefix", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["POST", "/v1/responses", "responses"],
      ["POST", "/proxy/openai/v1/responses", "responses"],
      ["POST", "/v1/chat/completions", "chat-completions"],
      ["POST", "/v1/messages", "anthropic-messages"],
      ["POST", "/v1/messages/count_tokens", "anthropic-count-tokens"],
      ["HEAD", "/", "anthropic-preflight"],
      ["POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini"],
      ["POST", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini"],
      ["POST", "/v1beta/models/gemini-2.5-flash:countTokens", "gemini-count-tokens"],
      ["POST", "/api/chat", "ollama-chat"],
      ["POST", "/ollama/api/show", "ollama-show"],
      ["GET", "/api/tags", "ollama-tags"],
      ["GET", "/api/version", "ollama-version"],
      ["GET", "/v1/responses", "unrouted"],
      ["POST", "/v1/responses/extra", "unrouted"],
      ["GET", "/v1/models", "unrouted"]
    ]
    for (const [method, url, route] of cases) assert.strictEqual(routeOf(method, url), route, `${method} ${url}`)
  })
})

describe("the request log", () => {
  it("keeps every request in order with redacted credentials, the parsed body, the history and the answer", async () => {
    const server = await startModelServer()
    try {
      await call(server, "/", undefined, { method: "HEAD" })
      await call(server, "/v1/messages?beta=true", claudeRequest([{ role: "user", content: "TEXT[one]END" }], []), {
        headers: { "x-api-key": "sk-ant-secret" }
      })
      const main = claudeRequest([
        { role: "user", content: "first" },
        { role: "assistant", content: [{ type: "text", text: "ok" }] },
        { role: "user", content: "RUN[ls]END" }
      ])
      await call(server, "/v1/messages?beta=true", main, { headers: { authorization: "Bearer sk-secret" } })
      await call(server, "/v1beta/models/g:countTokens", "not json", { headers: { "x-goog-api-key": "goog-secret" } })
      await call(server, "/nowhere")

      const log = server.requests()
      assert.deepStrictEqual(
        log.map((entry) => [entry.seq, entry.method, entry.route]),
        [
          [1, "HEAD", "anthropic-preflight"],
          [2, "POST", "anthropic-messages"],
          [3, "POST", "anthropic-messages"],
          [4, "POST", "gemini-count-tokens"],
          [5, "GET", "unrouted"]
        ]
      )
      assert.strictEqual(log[1]!.url, "/v1/messages?beta=true")
      assert.strictEqual(log[1]!.headers["x-api-key"], REDACTED)
      assert.strictEqual(log[2]!.headers.authorization, `Bearer ${REDACTED}`)
      assert.strictEqual(log[3]!.headers["x-goog-api-key"], REDACTED)
      assert.notInclude(JSON.stringify(log), "secret")
      assert.strictEqual(log[3]!.body, "not json")
      assert.isNull(log[4]!.body)
      assert.isUndefined(log[4]!.answer)

      assert.deepStrictEqual(log[1]!.answer, { _tag: "Text", text: DEFAULT_TEXT })
      assert.deepStrictEqual(log[2]!.answer, { _tag: "ToolCall", name: "Bash", args: { command: "ls" } })
      assert.deepStrictEqual(mainRequests(log), [log[2]!])
      assert.deepStrictEqual(toolNamesOf(log[2]!), ["Agent", "Bash", "Read"])
      assert.deepStrictEqual(userTextsOf(log[2]!), ["first", "RUN[ls]END"])
      assert.deepStrictEqual(
        historyOf(log[2]!).map((m) => [m.role, m.text]),
        [
          ["system", "You are Claude Code, Anthropic's official CLI for Claude."],
          ["user", "first"],
          ["assistant", "ok"],
          ["user", "RUN[ls]END"]
        ]
      )
      assert.deepStrictEqual(historyOf(log[0]!), [])
      // requests() is a snapshot, not the live array.
      assert.strictEqual(server.requests().length, 5)
      assert.notStrictEqual(server.requests(), server.requests())
    } finally {
      await server.close()
    }
  })

  it("writes each request to <logDir>/NNN-<route>.json before answering", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "model-server-"))
    const logDir = path.join(dir, "nested", "log")
    const server = await startModelServer({ logDir })
    try {
      await call(server, "/v1/responses", codexRequest([codexUser("TEXT[logged]END")]))
      await call(server, "/v1/chat/completions", opencodeRequest([{ role: "user", content: "hi" }]))
      assert.deepStrictEqual(await readdir(logDir), ["001-responses.json", "002-chat-completions.json"])
      const written = JSON.parse(await readFile(path.join(logDir, "001-responses.json"), "utf8"))
      assert.deepStrictEqual(written, JSON.parse(JSON.stringify(server.requests()[0])))
      assert.deepStrictEqual(written.answer, { _tag: "Text", text: "logged" })
      assert.strictEqual(written.body.prompt_cache_key, "01a22889-c6df-7003-afda-1b9400e6a30c")
    } finally {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("answers an unknown route with 404 and a JSON body naming it", async () => {
    const server = await startModelServer()
    try {
      const reply = await call(server, "/v1/models")
      assert.strictEqual(reply.status, 404)
      assert.deepStrictEqual(json(reply), { error: { message: "scripted model server: no route for GET /v1/models" } })
    } finally {
      await server.close()
    }
  })
})

const reachable = (url: string) =>
  fetch(`${url}/api/version`).then(
    () => "answered",
    () => "refused"
  )

/** A request whose body never finishes, as from a CLI that hangs mid-call; resolves once the server has it. */
const hangingRequest = (url: string) =>
  new Promise<void>((resolve) => {
    const req = request(`${url}/v1/responses`, { method: "POST", headers: { "content-length": "1000" } })
    // The server drops the connection on close; that is the point.
    req.on("error", () => undefined)
    req.write("{", () => setTimeout(resolve, 50))
  })

describe("starting and stopping", () => {
  it("listens on 127.0.0.1 at a random port; close() is prompt with a request hanging, and idempotent", async () => {
    const server = await startModelServer()
    assert.strictEqual(server.url, `http://127.0.0.1:${server.port}`)
    assert.isAbove(server.port, 0)
    await hangingRequest(server.url)
    const started = Date.now()
    await server.close()
    await server.close()
    assert.isBelow(Date.now() - started, 1000)
    assert.strictEqual(await reachable(server.url), "refused")
  })

  it.effect("modelServer() serves for the life of its scope", () =>
    Effect.gen(function* () {
      const url = yield* Effect.scoped(
        Effect.gen(function* () {
          const server = yield* modelServer()
          const reply = yield* Effect.promise(() => call(server, "/api/version"))
          assert.strictEqual(reply.status, 200)
          assert.strictEqual(server.requests().length, 1)
          return server.url
        })
      )
      assert.strictEqual(yield* Effect.promise(() => reachable(url)), "refused")
    })
  )
})
