/**
 * OllamaBench — the ollama rows of the providers scenario: Pedelec's own loop (pedelec-agent, one warm process per
 * session, through the real Core) next to the floor an Ollama client cannot go below, one streaming POST /api/chat
 * from this process to the same scripted server, timed to its first text line and its `done` line. The agent starts
 * with the session (its node start, Core connection, tool listing and /api/show happen then), so turn 1 is sent
 * SETTLE_MS after the session opened, as a page's user types after it loaded; a turn sent at once still waits for
 * that start (0.2–0.4 s on 2 cores). Any turn's difference to the floor is then Core's work around the agent, two
 * pipe hops and the event path to the client. Last, one session of CPU_TURNS turns gives the CPU Core and
 * pedelec-agent each spend on a later turn (Cpu), which the VM's wake-ups move less than the times. It does not
 * print (Providers does).
 */
import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import { connectDesktop } from "@pedelec/core-client/CoreClient"
import { startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import * as Effect from "effect/Effect"
import { type BenchCore, withCore } from "../BenchCore.ts"
import { type CpuSnapshot, cpuPerOperation, cpuSnapshot } from "../Cpu.ts"
import { type PedelecTurn, pedelecSession } from "./PedelecTurns.ts"

const MODEL = "scripted-model"
const OLLAMA = { code: "ollama", model: MODEL } as const
/** Enough for pedelec-agent's start with the session on a loaded 2-core box (0.2–0.4 s idle). */
const SETTLE_MS = 1_500
/**
 * Untimed turns of a session of their own and as many direct chats, first: Core lives as long as the user's
 * machine session and has run turns before a page's; each measured session still starts its own pedelec-agent, as
 * a user's does. As the ipc and mcp scenarios do (Mcp.ts WARM_UP_CALLS).
 */
const WARM_UP_TURNS = 20
/** Later turns of the CPU session: a 10 ms tick is then under 1% of what Core spends on them. */
const CPU_TURNS = 200

export interface OllamaMeasured {
  readonly turn1: Array<PedelecTurn>
  readonly later: Array<PedelecTurn>
  readonly direct: Array<{ readonly firstText: number; readonly done: number }>
  /** CPU ms per later turn: Core's and pedelec-agent's. */
  readonly coreCpu: number
  readonly agentCpu: number
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
  // A reader, not `for await`: the page types the bench also compiles with give web streams no async iterator.
  const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader()
  for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done; chunk = await reader?.read()) {
    buffered += chunk.value
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      const line = JSON.parse(buffered.slice(0, newline)) as { message?: { content?: string }; done?: boolean }
      buffered = buffered.slice(newline + 1)
      if (Number.isNaN(firstText) && (line.message?.content ?? "") !== "") firstText = performance.now() - started
      if (line.done === true) return { firstText, done: performance.now() - started }
    }
  }
  throw new Error("the scripted server's stream ended without a done line")
}

/** Core's settings point the ollama provider at the scripted server, with the API key it expects. */
const configure = (core: BenchCore, baseUrl: string) =>
  Effect.gen(function* () {
    // Settings are the user's to change: the desktop role, not the host role.
    const client = yield* connectDesktop(core.info, { component: "cli", version: "bench" })
    const settings = { ...DEFAULT_SETTINGS, ollama: { baseUrl, timeoutMs: 60_000 } }
    yield* client["desktop.settings.set"]({ settings })
    yield* client["desktop.settings.set_secret"]({ name: "ollamaApiKey", value: "ollama" })
  }).pipe(Effect.scoped, Effect.runPromise)

/** One session of CPU_TURNS + 1 turns; its first turn (the new conversation) stays out of the figures. */
const cpuPerLaterTurn = async (core: BenchCore, text: string, timeoutMs: number) => {
  let before: CpuSnapshot | undefined
  let after: CpuSnapshot | undefined
  await pedelecSession(core.info, OLLAMA, text, CPU_TURNS + 1, timeoutMs, SETTLE_MS, async (turn) => {
    if (turn === 0) before = await cpuSnapshot()
    if (turn === CPU_TURNS) after = await cpuSnapshot()
  })
  if (before === undefined || after === undefined) throw new Error("the CPU session ended before its last turn")
  return {
    coreCpu: cpuPerOperation(before, after, "pedelec-core", CPU_TURNS),
    agentCpu: cpuPerOperation(before, after, "pedelec-agent", CPU_TURNS)
  }
}

export const measureOllama = async (
  text: string,
  sessions: number,
  turns: number,
  timeoutMs: number
): Promise<OllamaMeasured> => {
  const server = await startModelServer()
  try {
    return await withCore("pedelec-bench-ollama-", async (core) => {
      await configure(core, server.url)
      const measured: Pick<OllamaMeasured, "turn1" | "later" | "direct"> = { turn1: [], later: [], direct: [] }
      await pedelecSession(core.info, OLLAMA, text, WARM_UP_TURNS, timeoutMs, SETTLE_MS)
      for (let turn = 0; turn < WARM_UP_TURNS; turn++) await directChat(server.url, text)
      // The scripted server answers "TEXT[…]END" only when tools are offered; a plain chat gets its default text.
      for (let round = 0; round < sessions; round++) {
        const timed = await pedelecSession(core.info, OLLAMA, text, turns, timeoutMs, SETTLE_MS)
        measured.turn1.push(timed[0]!)
        measured.later.push(...timed.slice(1))
        for (let turn = 0; turn < turns; turn++) measured.direct.push(await directChat(server.url, text))
      }
      return { ...measured, ...(await cpuPerLaterTurn(core, text, timeoutMs)) }
    })
  } finally {
    await server.close()
  }
}
