/**
 * Gemini — the Gemini API as gemini-cli's genai SDK speaks it: `POST …/models/<model>:streamGenerateContent?alt=sse`
 * (the turns), `:generateContent` (side calls) and `:countTokens`. Reads `systemInstruction`, `contents` (text,
 * `functionCall` and `functionResponse` parts) and `tools[].functionDeclarations` into a Conversation; a request in
 * JSON mode (`generationConfig.responseMimeType: "application/json"`, gemini-cli's model router and next-speaker
 * check) carries its `responseJsonSchema` so the script can answer it with a valid object.
 *
 * Stream (`data:` frames, no event names): one GenerateContentResponse per text delta, the last with
 * finishReason "STOP"; a tool call is a single response whose part is a `functionCall {name, args}`.
 * Non-streaming: the same response with the whole text.
 */

import type { ServerResponse } from "node:http"
import { geminiError } from "./Errors.ts"
import { asArray, asObject, asString, isObject, type JsonObject, textOf } from "./Json.ts"
import { type Conversation, type Message, message, type OfferedTool, type Reply } from "./Script.ts"
import { deltas, type ModelRequest, newId, openSse, type Protocol, sendJson, USAGE } from "./Wire.ts"

/** gemini-cli answers a call with `{output: "<text>"}`, or `{error: "<text>"}` when the tool failed. */
const resultText = (response: JsonObject): string => {
  const text = response.output ?? response.error
  return typeof text === "string" ? text : JSON.stringify(response)
}

const readContent = (value: unknown): Message | undefined => {
  const content = asObject(value)
  const parts = asArray(content.parts).map(asObject)
  // Thought summaries are the model's, not the conversation's.
  const text = textOf(parts.filter((part) => typeof part.text === "string" && part.thought !== true))
  const toolCalls = parts
    .filter((part) => isObject(part.functionCall))
    .map((part) => ({ name: asString(asObject(part.functionCall).name), args: asObject(part.functionCall).args }))
  const toolResults = parts
    .filter((part) => isObject(part.functionResponse))
    .map((part) => resultText(asObject(asObject(part.functionResponse).response)))
  if (content.role === "model") return message("assistant", text, { toolCalls })
  if (content.role === "user" || content.role === undefined) return message("user", text, { toolResults })
  return undefined
}

const readGemini = (body: JsonObject): Conversation => {
  const tools: Array<OfferedTool> = asArray(body.tools).flatMap((tool) =>
    asArray(asObject(tool).functionDeclarations).map((value) => {
      const fn = asObject(value)
      return { name: asString(fn.name), schema: asObject(fn.parametersJsonSchema ?? fn.parameters) }
    })
  )
  const system = textOf(asObject(body.systemInstruction).parts)
  const config = asObject(body.generationConfig)
  return {
    tools,
    messages: [
      ...(system === "" ? [] : [message("system", system)]),
      ...asArray(body.contents).flatMap((content) => readContent(content) ?? [])
    ],
    jsonSchema:
      config.responseMimeType === "application/json"
        ? asObject(config.responseJsonSchema ?? config.responseSchema)
        : undefined
  }
}

/** `/v1beta/models/gemini-2.5-flash:streamGenerateContent` → `gemini-2.5-flash`. */
const modelOf = (path: string): string => /\/models\/([^/:]+):/.exec(path)?.[1] ?? "gemini-scripted"

const reply = (res: ServerResponse, { path, streaming }: ModelRequest, answer: Reply): void => {
  const responseId = newId("resp")
  const usageMetadata = {
    promptTokenCount: USAGE.input,
    candidatesTokenCount: USAGE.output,
    totalTokenCount: USAGE.input + USAGE.output
  }
  const response = (parts: ReadonlyArray<JsonObject>, finished: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(finished ? { finishReason: "STOP" } : {}) }],
    usageMetadata,
    modelVersion: modelOf(path),
    responseId
  })
  const whole =
    answer._tag === "Text" ? [{ text: answer.text }] : [{ functionCall: { name: answer.name, args: answer.args } }]
  if (!streaming) {
    sendJson(res, 200, response(whole, true))
    return
  }
  const sse = openSse(res)
  if (answer._tag === "Text") {
    const pieces = deltas(answer.text)
    for (const [i, text] of pieces.entries()) sse.send(response([{ text }], i === pieces.length - 1))
  } else {
    sse.send(response(whole, true))
  }
  sse.end()
}

export const Gemini: Protocol = {
  read: readGemini,
  streams: (_body, path) => path.endsWith(":streamGenerateContent"),
  framing: "sse",
  errorBody: geminiError,
  reply
}

export const answerCountTokens = (res: ServerResponse): void => sendJson(res, 200, { totalTokens: USAGE.input })
