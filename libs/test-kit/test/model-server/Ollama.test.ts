/** Ollama over real HTTP, with requests shaped like pedelec-agent's (research/providers.md §6). */
import { assert, describe, it } from "@effect/vitest"
import { CONTEXT_LENGTH, OLLAMA_VERSION } from "../../src/model-server/Ollama.ts"
import { ollamaRequest } from "./shapes.ts"
import { call, json, parseNdjson, useModelServer } from "./support.ts"

const server = useModelServer({ ollamaModels: ["qwen3:0.6b", "scripted-model"] })

const chat = async (body: unknown) => {
  const reply = await call(server(), "/api/chat", body, { headers: { authorization: "Bearer ollama-key" } })
  assert.strictEqual(reply.status, 200)
  assert.strictEqual(reply.contentType, "application/x-ndjson")
  const lines = parseNdjson(reply.text)
  // Exactly one line is done, the last.
  assert.deepStrictEqual(
    lines.map((line) => line.done),
    lines.map((_, i) => i === lines.length - 1)
  )
  for (const line of lines) assert.strictEqual(line.model, "scripted-model")
  return lines
}

const user = (content: string) => ({ role: "user", content })

describe("Ollama /api/chat (pedelec-agent)", () => {
  it("streams a TEXT answer as NDJSON content deltas and a done:true line", async () => {
    const lines = await chat(ollamaRequest([user("TEXT[hello ollama]END")]))
    assert.strictEqual(lines.length, 4)
    assert.strictEqual(
      lines
        .slice(0, -1)
        .map((line) => line.message.content)
        .join(""),
      "hello ollama"
    )
    const last = lines.at(-1)
    assert.deepStrictEqual(last.message, { role: "assistant", content: "" })
    assert.strictEqual(last.done_reason, "stop")
    assert.strictEqual(last.prompt_eval_count, 100)
    assert.strictEqual(last.eval_count, 10)
    assert.isFalse(Number.isNaN(Date.parse(last.created_at)))
  })

  it("TOOL calls a page tool through native tool_calls, arguments as an object", async () => {
    const lines = await chat(ollamaRequest([user('TOOL[page_title]ARGS[{"tab":1}]END')]))
    assert.strictEqual(lines.length, 2)
    assert.deepStrictEqual(lines[0].message, {
      role: "assistant",
      content: "",
      tool_calls: [{ function: { name: "page_title", arguments: { tab: 1 } } }]
    })
  })

  it("answers the role:tool message with its content, after an object-argument call in the history", async () => {
    const lines = await chat(
      ollamaRequest([
        user('TOOL[page_title]ARGS[{"tab":1}]END'),
        { role: "assistant", content: "", tool_calls: [{ function: { name: "page_title", arguments: { tab: 1 } } }] },
        { role: "tool", content: '{"title":"Demo"}', tool_name: "page_title" }
      ])
    )
    const text = lines
      .slice(0, -1)
      .map((line) => line.message.content)
      .join("")
    assert.strictEqual(text, 'tool said: {"title":"Demo"}')
  })

  it("RECALL answers the earlier user texts", async () => {
    const lines = await chat(
      ollamaRequest([user("one"), { role: "assistant", content: "ok" }, user("two"), user("RECALL")])
    )
    const text = lines
      .slice(0, -1)
      .map((line) => line.message.content)
      .join("")
    assert.strictEqual(text, "one\ntwo")
  })

  it("answers stream:false with one done message", async () => {
    const reply = await call(
      server(),
      "/api/chat",
      ollamaRequest([user('TOOL[page_title]ARGS[{"tab":2}]END')], { stream: false })
    )
    assert.strictEqual(reply.contentType, "application/json")
    const body = json(reply)
    assert.isTrue(body.done)
    assert.deepStrictEqual(body.message.tool_calls, [{ function: { name: "page_title", arguments: { tab: 2 } } }])
  })

  it("FAIL_HTTP provokes the statuses behind the OLLAMA_* errors, with Ollama's {error} body", async () => {
    for (const status of [401, 403, 429, 500]) {
      const reply = await call(server(), "/api/chat", ollamaRequest([user(`FAIL_HTTP[${status}]END`)]))
      assert.strictEqual(reply.status, status)
      assert.deepStrictEqual(json(reply), { error: `scripted failure (FAIL_HTTP ${status})` })
    }
    const missing = await call(server(), "/api/chat", ollamaRequest([user("FAIL_HTTP[404]END")]))
    assert.strictEqual(missing.status, 404)
    assert.deepStrictEqual(json(missing), {
      error: 'model "scripted-model" not found, try pulling it first: scripted failure (FAIL_HTTP 404)'
    })
  })

  it("GARBAGE sends NDJSON lines that are not JSON and no done line", async () => {
    const reply = await call(server(), "/api/chat", ollamaRequest([user("GARBAGE")]))
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.contentType, "application/x-ndjson")
    assert.throws(() => parseNdjson(reply.text))
    assert.notInclude(reply.text, '"done"')
  })
})

describe("Ollama model endpoints", () => {
  it("lists the configured models on /api/tags and reports a version", async () => {
    const tags = json(await call(server(), "/api/tags"))
    assert.deepStrictEqual(
      tags.models.map((model: { name: string }) => model.name),
      ["qwen3:0.6b", "scripted-model"]
    )
    assert.deepStrictEqual(json(await call(server(), "/api/version")), { version: OLLAMA_VERSION })
  })

  it("/api/show describes a listed model (with or without :latest) and 404s any other", async () => {
    for (const model of ["qwen3:0.6b", "scripted-model:latest"]) {
      const shown = await call(server(), "/api/show", { model })
      assert.strictEqual(shown.status, 200)
      assert.strictEqual(json(shown).model_info["llama.context_length"], CONTEXT_LENGTH)
      assert.include(json(shown).capabilities, "tools")
    }
    const missing = await call(server(), "/api/show", { model: "llama3" })
    assert.strictEqual(missing.status, 404)
    assert.match(json(missing).error, /^model "llama3" not found/)
  })
})
