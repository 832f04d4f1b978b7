// The ollama row of the provider bench: Pedelec's own loop (pedelec-agent, one process per turn, through the real
// Core) next to the floor an Ollama client cannot go below, one streaming POST /api/chat from this process to the
// same scripted server, timed to its first text line and its `done` line. The difference is pedelec-agent's start,
// its /api/show and tool listing, and Core.
import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import { startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import * as Effect from "effect/Effect"
import { hostClient, removeHome, startCore, stopCore } from "../test/harness.ts"
import { type PedelecTurn, pedelecSession } from "./PedelecTurns.ts"

const MODEL = "scripted-model"

export interface OllamaMeasured {
  readonly turn1: Array<PedelecTurn>
  readonly later: Array<PedelecTurn>
  readonly direct: Array<{ readonly firstText: number; readonly done: number }>
}

/** One streaming /api/chat: milliseconds to the first line carrying text and to the `done` line. */
const directChat = async (baseUrl: string, text: string) => {
  const started = performance.now()
  const response = await fetch(`${baseUrl}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer ollama" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: text }], tools: [], stream: true })
  })
  let firstText = Number.NaN
  let buffered = ""
  for await (const chunk of response.body ?? []) {
    buffered += Buffer.from(chunk).toString("utf8")
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      const line = JSON.parse(buffered.slice(0, newline)) as { message?: { content?: string }; done?: boolean }
      buffered = buffered.slice(newline + 1)
      if (Number.isNaN(firstText) && (line.message?.content ?? "") !== "") firstText = performance.now() - started
      if (line.done === true) return { firstText, done: performance.now() - started }
    }
  }
  throw new Error("the scripted server's stream ended without a done line")
}

export const measureOllama = async (
  text: string,
  sessions: number,
  turns: number,
  timeoutMs: number
): Promise<OllamaMeasured> => {
  const server = await startModelServer()
  const core = await startCore()
  try {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* hostClient(core.info)
          const settings = { ...DEFAULT_SETTINGS, ollama: { baseUrl: server.url, timeoutMs: 60_000 } }
          yield* client["settings.set"]({ settings })
          yield* client["settings.set_secret"]({ name: "ollamaApiKey", value: "ollama" })
        })
      )
    )
    const measured: OllamaMeasured = { turn1: [], later: [], direct: [] }
    // The scripted server answers "TEXT[…]END" only when tools are offered; a plain chat gets its default text.
    for (let round = 0; round < sessions; round++) {
      const timed = await pedelecSession(core, { code: "ollama", model: MODEL }, text, turns, timeoutMs)
      measured.turn1.push(timed[0]!)
      measured.later.push(...timed.slice(1))
      for (let turn = 0; turn < turns; turn++) measured.direct.push(await directChat(server.url, text))
    }
    return measured
  } finally {
    await stopCore(core)
    await removeHome(core.home)
    await server.close()
  }
}
