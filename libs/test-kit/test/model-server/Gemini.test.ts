/** Gemini over real HTTP, with requests shaped like gemini-cli 0.61.0's. */
import { assert, describe, it } from "@effect/vitest"
import { geminiRequest } from "./shapes.ts"
import { call, json, parseSse, sseJson, useModelServer } from "./support.ts"

const server = useModelServer()

const STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
const HEADERS = { "x-goog-api-key": "fake-key" }

const stream = async (body: unknown) => {
  const reply = await call(server(), STREAM, body, { headers: HEADERS })
  assert.strictEqual(reply.status, 200)
  assert.strictEqual(reply.contentType, "text/event-stream")
  // Gemini's SSE has no event names.
  for (const frame of parseSse(reply.text)) assert.isUndefined(frame.event)
  return sseJson(reply.text)
}

const user = (text: string) => ({ role: "user", parts: [{ text }] })

/** The text of every part of every streamed response, as gemini-cli accumulates it. */
const streamedText = (responses: Awaited<ReturnType<typeof stream>>): string =>
  responses
    .flatMap((response) => response.candidates[0].content.parts.map((part: { text: string }) => part.text))
    .join("")

describe("Gemini (gemini-cli)", () => {
  it("streams a TEXT answer, one response per delta, finishReason STOP on the last only", async () => {
    const responses = await stream(geminiRequest([user("TEXT[hello gemini]END")]))
    assert.strictEqual(responses.length, 3)
    assert.deepStrictEqual(
      responses.map((response) => response.candidates[0].finishReason),
      [undefined, undefined, "STOP"]
    )
    for (const response of responses) {
      assert.strictEqual(response.candidates[0].content.role, "model")
      assert.strictEqual(response.modelVersion, "gemini-2.5-flash")
      assert.strictEqual(response.usageMetadata.totalTokenCount, 110)
    }
    assert.strictEqual(streamedText(responses), "hello gemini")
  })

  it("RUN calls run_shell_command with a functionCall part", async () => {
    const responses = await stream(geminiRequest([user("RUN[echo PEDELEC_OK]END")]))
    assert.strictEqual(responses.length, 1)
    assert.deepStrictEqual(responses[0].candidates[0].content.parts, [
      { functionCall: { name: "run_shell_command", args: { command: "echo PEDELEC_OK" } } }
    ])
    assert.strictEqual(responses[0].candidates[0].finishReason, "STOP")
  })

  it("answers the functionResponse of a resumed history with its output", async () => {
    const responses = await stream(
      geminiRequest([
        user("RUN[echo PEDELEC_OK]END"),
        {
          role: "model",
          parts: [{ functionCall: { name: "run_shell_command", args: { command: "echo PEDELEC_OK" } } }]
        },
        {
          role: "user",
          parts: [{ functionResponse: { id: "c1", name: "run_shell_command", response: { output: "PEDELEC_OK" } } }]
        }
      ])
    )
    assert.strictEqual(streamedText(responses), "tool said: PEDELEC_OK")
  })

  it("RECALL answers the earlier user texts, skipping the model's thoughts and calls", async () => {
    const responses = await stream(
      geminiRequest([
        user("first prompt"),
        { role: "model", parts: [{ text: "thinking", thought: true }, { text: "an answer" }] },
        user("second prompt"),
        user("RECALL")
      ])
    )
    assert.strictEqual(streamedText(responses), "first prompt\nsecond prompt")
  })

  it("answers the router's JSON-mode side call with an object of its schema", async () => {
    const classifier = {
      contents: [user("Run the marker command FAIL_HTTP[500]END")],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "object",
          properties: { reasoning: { type: "string" }, model_choice: { type: "string", enum: ["flash", "pro"] } },
          required: ["reasoning", "model_choice"]
        }
      }
    }
    const reply = await call(server(), "/v1beta/models/gemini-3.5-flash-lite:generateContent", classifier)
    assert.strictEqual(reply.status, 200)
    const response = json(reply)
    assert.strictEqual(response.candidates[0].finishReason, "STOP")
    assert.deepStrictEqual(JSON.parse(response.candidates[0].content.parts[0].text), {
      reasoning: "scripted",
      model_choice: "flash"
    })
  })

  it("answers :generateContent with one whole response", async () => {
    const reply = await call(
      server(),
      "/v1beta/models/gemini-2.5-flash:generateContent",
      geminiRequest([user("TEXT[whole]END")])
    )
    assert.strictEqual(reply.contentType, "application/json")
    assert.deepStrictEqual(json(reply).candidates[0].content, { role: "model", parts: [{ text: "whole" }] })
  })

  it("answers :countTokens", async () => {
    const reply = await call(server(), "/v1beta/models/gemini-2.5-flash:countTokens", { contents: [user("hi")] })
    assert.deepStrictEqual(json(reply), { totalTokens: 100 })
  })

  it("FAIL_HTTP answers Google's error body with that status", async () => {
    for (const [status, name] of [
      [400, "INVALID_ARGUMENT"],
      [403, "PERMISSION_DENIED"],
      [429, "RESOURCE_EXHAUSTED"],
      [503, "UNAVAILABLE"]
    ] as const) {
      const reply = await call(server(), STREAM, geminiRequest([user(`FAIL_HTTP[${status}]END`)]))
      assert.strictEqual(reply.status, status)
      assert.deepStrictEqual(json(reply), {
        error: { code: status, message: `scripted failure (FAIL_HTTP ${status})`, status: name }
      })
    }
  })

  it("GARBAGE sends a 200 event stream that is not the protocol", async () => {
    const reply = await call(server(), STREAM, geminiRequest([user("GARBAGE")]))
    assert.strictEqual(reply.status, 200)
    assert.throws(() => sseJson(reply.text))
  })
})
