// What a warm pedelec-agent keeps between turns, against the scripted model server and a temp folder: the model's
// window is asked of the server once (again after a failed turn), a conversation it holds is taken from memory, one
// it does not from its saved file, and a warm-up answers at once with a new conversation, asking the window ahead.
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { CONTEXT_LENGTH } from "@pedelec/test-kit/model-server/Ollama"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { appendConversation, conversationFile } from "../../src/pedelec-agent/Conversation.ts"
import { conversationOf, emptyKept, forgetKept, windowOf } from "../../src/pedelec-agent/Kept.ts"
import { warmUp } from "../../src/pedelec-agent/Loop.ts"
import type { Connection } from "../../src/pedelec-agent/Ollama.ts"

let server: ModelServer
let dir: string
beforeAll(async () => {
  server = await startModelServer()
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-kept-"))
})
afterAll(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

const shows = () => server.requests().filter((request) => request.route === "ollama-show").length

describe("kept between turns", () => {
  it("asks /api/show once per model, and again after a failed turn", async () => {
    const connection: Connection = {
      baseUrl: server.url,
      apiKey: "ollama",
      timeoutMs: 5_000,
      signal: new AbortController().signal
    }
    const kept = emptyKept()
    const before = shows()
    expect(await windowOf(kept, connection, "scripted-model")).toBe(CONTEXT_LENGTH)
    expect(await windowOf(kept, connection, "scripted-model")).toBe(CONTEXT_LENGTH)
    expect(shows() - before).toBe(1)
    forgetKept(kept)
    expect(await windowOf(kept, connection, "scripted-model")).toBe(CONTEXT_LENGTH)
    expect(shows() - before).toBe(2)
  })

  it("takes a conversation it holds from memory and one it does not from its file", async () => {
    const id = "kept-conversation-0001"
    const file = conversationFile(dir, "session", id)
    appendConversation(file, [{ role: "user", content: "saved" }], 0)
    const kept = emptyKept()
    const resumed = await conversationOf(kept, id, true, file)
    expect(resumed).toEqual([{ role: "user", content: "saved" }])
    resumed.push({ role: "assistant", content: "in memory only" })
    expect(await conversationOf(kept, id, true, file)).toBe(resumed)
    const fresh = await conversationOf(
      kept,
      "kept-conversation-0002",
      false,
      conversationFile(dir, "session", "x".repeat(16))
    )
    expect(fresh).toEqual([])
    // Holding another one now: the first comes back from its file, without what was only in memory.
    expect(await conversationOf(kept, id, true, file)).toEqual([{ role: "user", content: "saved" }])
  })
  it("a warm-up answers at once with a new conversation, held for the first turn, and asks the window ahead", async () => {
    const kept = emptyKept()
    const emitted: Array<ProviderEvent> = []
    const context = {
      threadId: "session",
      workspace: dir,
      agentDir: dir,
      version: "test",
      think: undefined,
      signal: new AbortController().signal,
      emit: (event: ProviderEvent) => void emitted.push(event),
      emitted: () => Promise.resolve()
    }
    const before = shows()
    const request = { prompt: "", model: "scripted-model", baseUrl: server.url, apiKey: "ollama", timeoutMs: 5_000 }
    warmUp({ ...request, warmUp: true }, context, kept)
    const [session, completed] = emitted
    expect(session?.type === "session" && completed?.type === "completed").toBe(true)
    const id = session?.type === "session" ? session.providerSessionId : ""
    // Asked by the warm-up itself, before any turn.
    expect(kept.windows.size).toBe(1)
    const connection: Connection = { ...request, signal: context.signal }
    expect(await windowOf(kept, connection, "scripted-model")).toBe(CONTEXT_LENGTH)
    expect(shows() - before).toBe(1)
    // Held in memory: nothing was saved, and the first turn continues it all the same.
    expect(await conversationOf(kept, id, true, conversationFile(dir, "session", id))).toEqual([])
    expect(kept.conversation?.id).toBe(id)
  })
})
