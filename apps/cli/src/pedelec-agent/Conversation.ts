/**
 * Conversation — one pedelec-agent conversation: its messages, kept in `$PEDELEC_HOME/agent/<sessionId>/<id>.jsonl`
 * (folder 0700, file 0600: the page's tool results can be private, and they stay out of the workspace other agents
 * read), so a later turn resumes it even after Core restarts; and which of them fit the model's context window.
 * Core removes the session's folder when the session ends. It does not talk to the model or run tools.
 *
 * The file is append-only, one message a line: a save writes only the messages it does not hold yet. Rewriting the
 * whole file and renaming it over the old one cost a turn 2–8 ms on a busy ext4 disk (a rename over a file flushes
 * the new one), twice a turn (issue 15, warm ollama turns); an append of a few lines costs microseconds. A crash
 * mid-append leaves at worst a torn last line: it is dropped when the file is read, and cut off the file, so the next
 * append starts a line of its own. Any other line that is not a message is a damaged file: the conversation starts
 * over.
 *
 * A conversation saved before the JSONL file (one JSON array in `<id>.json`, written whole) is read from that file
 * once, when the JSONL one is missing: its messages become the JSONL file and the old file goes, so a session that
 * lived through the upgrade resumes where it was.
 */
import { randomBytes } from "node:crypto"
import { appendFileSync, mkdirSync, rmSync, truncateSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { errnoOf } from "../Reach.ts"
import type { ChatMessage } from "./Ollama.ts"

const Stored = Schema.Struct({
  role: Schema.Literals(["user", "assistant", "tool"]),
  content: Schema.String,
  tool_name: Schema.optionalKey(Schema.String),
  tool_calls: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        function: Schema.Struct({ name: Schema.String, arguments: Schema.Record(Schema.String, Schema.Unknown) })
      })
    )
  )
})
const decodeStored = Schema.decodeUnknownOption(Stored)

/** Ids look like Core's own: 128 random bits, URL-safe, so one can never name a path. */
export const newConversationId = (): string => randomBytes(16).toString("base64url")
const ID = /^[A-Za-z0-9_-]{16,64}$/

export const conversationFile = (agentDir: string, sessionId: string, id: string): string => {
  if (!ID.test(id)) throw new Error(`not a pedelec-agent conversation id: ${id}`)
  return path.join(agentDir, sessionId, `${id}.jsonl`)
}

const messageOf = (line: string): ChatMessage | undefined => {
  try {
    return Option.getOrUndefined(decodeStored(JSON.parse(line))) as ChatMessage | undefined
  } catch {
    return undefined
  }
}

const decodeLegacy = Schema.decodeUnknownOption(Schema.Array(Stored))

/** The messages of the older whole-file save beside `file`, moved into `file`; none when there is none or it is bad. */
const migrateLegacy = async (file: string): Promise<Array<ChatMessage>> => {
  const legacy = file.replace(/\.jsonl$/, ".json")
  const text = await readFile(legacy, "utf8").catch(() => undefined)
  if (text === undefined) return []
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return []
  }
  const messages = [...Option.getOrElse(decodeLegacy(json), () => [])] as Array<ChatMessage>
  appendConversation(file, messages, 0)
  rmSync(legacy, { force: true })
  return messages
}

/**
 * The stored messages, or none when the file is missing or damaged (the conversation then starts over). A missing
 * file may still have been saved by the version before the JSONL one: that save is read (and moved) instead.
 */
export const loadConversation = async (file: string): Promise<Array<ChatMessage>> => {
  const text = await readFile(file, "utf8").catch((cause: { code?: unknown }) =>
    cause.code === "ENOENT" ? null : undefined
  )
  if (text === null) return migrateLegacy(file)
  if (text === undefined) return []
  const lines = text.split("\n")
  const torn = lines.pop() ?? ""
  const messages: Array<ChatMessage> = []
  for (const line of lines) {
    if (line === "") continue
    const message = messageOf(line)
    if (message === undefined) return []
    messages.push(message)
  }
  // Cut off, not ended with a newline: ended, it would read as a damaged line once the next append follows it.
  if (torn !== "") truncateSync(file, Buffer.byteLength(text) - Buffer.byteLength(torn))
  return messages
}

/**
 * Appends the messages after the first `saved` (the ones the file holds already) and returns how many it holds now.
 * Blocking on purpose: the turn waits for the file anyway (before its first round, after its completion), and a
 * thread-pool round trip costs a loaded 2-core machine more than the append itself.
 */
export const appendConversation = (file: string, messages: ReadonlyArray<ChatMessage>, saved: number): number => {
  if (saved >= messages.length) return saved
  const text = messages
    .slice(saved)
    .map((message) => `${JSON.stringify(message)}\n`)
    .join("")
  // The folder is made when an append finds none: a warm agent appends twice a turn, and a mkdir each time was two
  // system calls more on the turn's path.
  try {
    appendFileSync(file, text, { mode: 0o600 })
  } catch (cause) {
    if (errnoOf(cause) !== "ENOENT") throw cause
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    appendFileSync(file, text, { mode: 0o600 })
  }
  return messages.length
}

/** Messages are never changed once in a conversation, so each is measured once for all the rounds that send it. */
const estimates = new WeakMap<ChatMessage, number>()

/** A cheap, deliberately high estimate (about 3 characters a token) so the window is never overrun by surprise. */
export const estimateTokens = (message: ChatMessage): number => {
  let tokens = estimates.get(message)
  if (tokens === undefined) {
    tokens = Math.ceil(JSON.stringify(message).length / 3) + 4
    estimates.set(message, tokens)
  }
  return tokens
}

const CUT_MARK = "\n[… cut by pedelec-agent to fit the model's context window]"

/**
 * The messages to send within `budget` tokens: the oldest earlier turns go first, whole (a turn starts at a user
 * message), and the current turn is always sent; if it alone is too long, its longest tool results are shortened.
 * Linear in the conversation: it summed the rest of the conversation again for every turn it dropped, 0.6 s a model
 * round for 300 turns with 2 KB tool results (issue 15), and every round of every turn does this.
 */
export const fitToWindow = (messages: ReadonlyArray<ChatMessage>, budget: number): Array<ChatMessage> => {
  let lastUser = messages.length - 1
  while (lastUser > 0 && messages[lastUser]?.role !== "user") lastUser--
  let total = messages.reduce((sum, message) => sum + estimateTokens(message), 0)
  let start = 0
  while (start < lastUser && total > budget) {
    // The next turn's user message, or the current turn's.
    let next = start + 1
    while (next < lastUser && messages[next]?.role !== "user") next++
    for (; start < next; start++) total -= estimateTokens(messages[start]!)
  }
  const kept = messages.slice(start).map((message) => ({ ...message }) as ChatMessage)
  let over = total - budget
  const longestFirst = kept
    .map((message, index) => ({ message, index }))
    .filter(({ message }) => message.role === "tool")
    .sort((a, b) => b.message.content.length - a.message.content.length)
  for (const { message, index } of longestFirst) {
    if (over <= 0) break
    const keep = Math.max(200, message.content.length - over * 3)
    if (keep >= message.content.length) continue
    over -= Math.ceil((message.content.length - keep) / 3)
    kept[index] = { ...message, content: message.content.slice(0, keep) + CUT_MARK } as ChatMessage
  }
  return kept
}
