/**
 * Kept — what a warm pedelec-agent holds from one turn of its session to the next, so a later turn costs one model
 * request and not a process start: the conversation it is in (in memory; Conversation still saves every step for a
 * new process to resume), the Core connection with the page's tool specs (PageTools, opened and listed as the
 * process starts, before its first request arrives), and each model's context window from `/api/show`. A failed turn drops all of it, so the next turn reads everything again; the process
 * itself is the adapter's (libs/providers WarmProcess). It does not run the turn (Loop).
 */
import { loadConversation } from "./Conversation.ts"
import { type ChatMessage, type Connection, contextLength, type FunctionTool } from "./Ollama.ts"
import { openPageTools, type PageTools } from "./PageTools.ts"

export interface Kept {
  conversation: { readonly id: string; readonly messages: Array<ChatMessage> } | undefined
  page: Promise<PageTools> | undefined
  /** The page's tools read ahead of the turn that takes them (the first: the process starts for it). */
  listed: Promise<ReadonlyArray<FunctionTool>> | undefined
  /** `<baseUrl> <model>` → the window the server reported (undefined: it did not say). */
  readonly windows: Map<string, number | undefined>
}

export const emptyKept = (): Kept => ({
  conversation: undefined,
  page: undefined,
  listed: undefined,
  windows: new Map()
})

/** A promise nobody may be waiting on yet: its failure is the turn's that awaits it, never an unhandled rejection. */
const handled = <A>(promise: Promise<A>): Promise<A> => {
  promise.catch(() => {})
  return promise
}

/** After a failed turn: whatever went wrong (a dropped link, a removed model, a bad file) is not trusted again. */
export const forgetKept = (kept: Kept): void => {
  kept.page?.then(
    (page) => page.close(),
    () => {}
  )
  kept.page = undefined
  kept.listed = undefined
  kept.conversation = undefined
  kept.windows.clear()
}

const pageToolsOf = (kept: Kept, threadId: string, version: string): Promise<PageTools> => {
  kept.page ??= handled(openPageTools(threadId, version))
  return kept.page
}

/** Connects to Core and lists the page's tools while the first turn's request is still on its way. */
export const readAhead = (kept: Kept, threadId: string, version: string): void => {
  kept.listed = handled(pageToolsOf(kept, threadId, version).then((page) => page.refresh()))
}

/** The page's tools for this turn: the ones read ahead for it, or a fresh list. */
export const pageToolsFor = async (kept: Kept, threadId: string, version: string) => {
  const ahead = kept.listed
  kept.listed = undefined
  const page = await pageToolsOf(kept, threadId, version)
  return { page, tools: await (ahead ?? page.refresh()) }
}

/**
 * The messages of conversation `id`, which the turn then extends in place: the ones in memory when this process
 * already holds it, else the saved file (`resumed`), else none. Held from here on.
 */
export const conversationOf = async (
  kept: Kept,
  id: string,
  resumed: boolean,
  file: string
): Promise<Array<ChatMessage>> => {
  if (kept.conversation?.id === id) return kept.conversation.messages
  const messages = resumed ? await loadConversation(file) : []
  kept.conversation = { id, messages }
  return messages
}

/** The model's window, asked of the server once per model (and again after a failed turn). */
export const windowOf = async (kept: Kept, connection: Connection, model: string): Promise<number | undefined> => {
  const key = `${connection.baseUrl} ${model}`
  if (kept.windows.has(key)) return kept.windows.get(key)
  const window = await contextLength(connection, model)
  kept.windows.set(key, window)
  return window
}
