// pedelec-agent's conversation store and context window: saved privately and read back, appended (each message written
// once, its folder made again when it went), a torn last line dropped and cut off, a damaged file starts the
// conversation over, one saved whole by the version before is moved to JSONL, ids cannot name a path, and the window
// keeps the current turn while the oldest turns go first, in one pass that measures each message once.
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import {
  appendConversation,
  conversationFile,
  estimateTokens,
  fitToWindow,
  loadConversation,
  newConversationId
} from "../../src/pedelec-agent/Conversation.ts"
import type { ChatMessage } from "../../src/pedelec-agent/Ollama.ts"

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-agent-conv-"))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

const turn = (n: number, size: number): Array<ChatMessage> => [
  { role: "user", content: `question ${n}` },
  { role: "assistant", content: "", tool_calls: [{ function: { name: "t", arguments: {} } }] },
  { role: "tool", tool_name: "t", content: "r".repeat(size) },
  { role: "assistant", content: `answer ${n}` }
]

describe("conversation store", () => {
  it("saves privately and reads back; a damaged or missing file starts over", async () => {
    const file = conversationFile(dir, "session-1", newConversationId())
    const messages = turn(1, 10)
    expect(appendConversation(file, messages, 0)).toBe(messages.length)
    expect(await loadConversation(file)).toEqual(messages)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700)
    await writeFile(file, "{not json}\n")
    expect(await loadConversation(file)).toEqual([])
    await writeFile(file, `${JSON.stringify({ role: "boss", content: 1 })}\n`)
    expect(await loadConversation(file)).toEqual([])
    expect(await loadConversation(path.join(dir, "none.jsonl"))).toEqual([])
  })

  it("appends only what the file lacks: a turn's saves write each message once", async () => {
    const file = conversationFile(dir, "session-1", newConversationId())
    const messages: Array<ChatMessage> = [{ role: "user", content: "first" }]
    let saved = appendConversation(file, messages, 0)
    messages.push({ role: "assistant", content: "one" })
    saved = appendConversation(file, messages, saved)
    expect(appendConversation(file, messages, saved)).toBe(2)
    expect((await readFile(file, "utf8")).split("\n")).toHaveLength(3)
    expect(await loadConversation(file)).toEqual(messages)
  })

  it("makes the folder again when it was removed between appends (a user cleaning up), privately", async () => {
    const file = conversationFile(dir, "session-gone", newConversationId())
    const messages = turn(1, 10)
    appendConversation(file, messages.slice(0, 2), 0)
    await rm(path.dirname(file), { recursive: true })
    expect(appendConversation(file, messages, 2)).toBe(messages.length)
    expect(await loadConversation(file)).toEqual(messages.slice(2))
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700)
  })

  it("drops a torn last line (a crash mid-append) and cuts it off, so the next append reads back", async () => {
    const file = conversationFile(dir, "session-1", newConversationId())
    const messages: Array<ChatMessage> = [{ role: "user", content: "kept" }]
    appendConversation(file, messages, 0)
    await appendFile(file, '{"role":"assistant","cont')
    const loaded = await loadConversation(file)
    expect(loaded).toEqual(messages)
    loaded.push({ role: "assistant", content: "after the crash" })
    appendConversation(file, loaded, 1)
    expect(await loadConversation(file)).toEqual(loaded)
  })

  it("reads a conversation the version before JSONL saved (one array in <id>.json) once, moving it to the JSONL file", async () => {
    const file = conversationFile(dir, "session-2", newConversationId())
    const legacy = file.replace(/\.jsonl$/, ".json")
    const messages = turn(1, 10)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(legacy, JSON.stringify(messages))
    const loaded = await loadConversation(file)
    expect(loaded).toEqual(messages)
    await expect(stat(legacy)).rejects.toMatchObject({ code: "ENOENT" })
    // The next turn appends after what the JSONL file now holds, and a new process reads it all back.
    loaded.push({ role: "user", content: "after the upgrade" })
    appendConversation(file, loaded, messages.length)
    expect(await loadConversation(file)).toEqual(loaded)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  it("never lets an id name a path", () => {
    expect(() => conversationFile(dir, "s", "../../etc/passwd")).toThrow()
    expect(() => conversationFile(dir, "s", "short")).toThrow()
  })
})

describe("fitToWindow", () => {
  it("sends everything that fits", () => {
    const messages = [...turn(1, 10), ...turn(2, 10)]
    expect(fitToWindow(messages, 10_000)).toEqual(messages)
  })

  it("drops the oldest whole turns first and always keeps the current one", () => {
    const current: Array<ChatMessage> = [{ role: "user", content: "now" }]
    const messages = [...turn(1, 3_000), ...turn(2, 3_000), ...current]
    const kept = fitToWindow(messages, 1_500)
    expect(kept[0]).toEqual({ role: "user", content: "question 2" })
    expect(kept.at(-1)).toEqual(current[0])
    const tiny = fitToWindow(messages, 10)
    expect(tiny).toEqual(current)
  })

  it("shortens the current turn's longest tool results when it alone is too long", () => {
    const messages = turn(1, 60_000).slice(0, 3)
    const kept = fitToWindow(messages, 5_000)
    expect(kept).toHaveLength(3)
    const tool = kept[2] as { content: string }
    expect(tool.content.length).toBeLessThan(60_000)
    expect(tool.content).toContain("cut by pedelec-agent")
    expect(kept.reduce((sum, message) => sum + estimateTokens(message), 0)).toBeLessThanOrEqual(5_200)
  })

  // The definition, written the slow way: the first turn boundary (the start, or a user message up to the current
  // turn's) from which the rest fits, else the current turn alone.
  const expectedStart = (messages: ReadonlyArray<ChatMessage>, budget: number) => {
    let lastUser = messages.length - 1
    while (lastUser > 0 && messages[lastUser]?.role !== "user") lastUser--
    const rest = (from: number) => messages.slice(from).reduce((sum, message) => sum + estimateTokens(message), 0)
    const boundaries = [0, ...messages.flatMap((message, index) => (message.role === "user" ? [index] : []))]
    return boundaries.find((index) => index <= lastUser && rest(index) <= budget) ?? lastUser
  }

  const messageArb: fc.Arbitrary<ChatMessage> = fc.oneof(
    fc.string({ maxLength: 300 }).map((content): ChatMessage => ({ role: "user", content })),
    fc.string({ maxLength: 300 }).map((content): ChatMessage => ({ role: "assistant", content })),
    fc.string({ maxLength: 3_000 }).map((content): ChatMessage => ({ role: "tool", tool_name: "t", content }))
  )

  it("keeps the turns from the first boundary from which the rest fits, or the current turn", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 60 }), fc.integer({ min: 0, max: 20_000 }), (messages, budget) => {
        const kept = fitToWindow(messages, budget)
        const start = Math.max(0, expectedStart(messages, budget))
        expect(kept.map((message) => message.role)).toEqual(messages.slice(start).map((message) => message.role))
        const shortened = kept.filter((message, index) => message.content !== messages[start + index]?.content)
        expect(
          shortened.every((message) => message.role === "tool" && message.content.endsWith("context window]"))
        ).toBe(true)
      })
    )
  })

  it("measures each message once, however many turns it drops and rounds it serves", () => {
    const messages = Array.from({ length: 300 }, (_, n) => turn(n, 2_000)).flat()
    const stringify = vi.spyOn(JSON, "stringify")
    try {
      fitToWindow(messages, 24_576)
      expect(stringify.mock.calls.length).toBeLessThanOrEqual(messages.length)
      stringify.mockClear()
      messages.push({ role: "user", content: "one more" })
      fitToWindow(messages, 24_576)
      expect(stringify.mock.calls.length).toBe(1)
    } finally {
      stringify.mockRestore()
    }
  })
})
