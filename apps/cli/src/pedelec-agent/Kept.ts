/**
 * Kept — what a warm pedelec-agent holds from one turn of its session to the next, so a turn costs one model request
 * and not a process start: the conversation it is in (in memory; Conversation still saves every step for a new
 * process to resume), the Core connection with the page's tools (PageTools, opened and listed as the process starts,
 * before its first request arrives; a session's tools are fixed when it is created, so they are listed once), and
 * each model's context window from `/api/show`, asked as soon as a request names the model (a warm-up, written when
 * the session opens, does). A failed turn drops all of it, so the next turn reads everything again; the process itself
 * is the adapter's (libs/providers WarmProcess). It does not run the turn (Loop).
 */
import { loadConversation } from "./Conversation.ts"
import { type ChatMessage, type Connection, contextLength } from "./Ollama.ts"
import { openPageTools, type PageTools } from "./PageTools.ts"

export interface Kept {
  conversation: { readonly id: string; readonly messages: Array<ChatMessage> } | undefined
  page: Promise<PageTools> | undefined
  /** `<baseUrl> <model>` → the window the server reports (undefined: it does not say), asked once. */
  readonly windows: Map<string, Promise<number | undefined>>
}

export const emptyKept = (): Kept => ({ conversation: undefined, page: undefined, windows: new Map() })

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
  kept.conversation = undefined
  kept.windows.clear()
}

const pageToolsOf = (kept: Kept, threadId: string, version: string): Promise<PageTools> => {
  kept.page ??= handled(openPageTools(threadId, version))
  return kept.page
}

/** Connects to Core and lists the page's tools while the first request is still on its way. */
export const readAhead = (kept: Kept, threadId: string, version: string): void => {
  void handled(pageToolsOf(kept, threadId, version).then((page) => page.tools()))
}

/** The page's tools for this turn: the ones listed ahead, or a list read now (after a failed turn). */
export const pageToolsFor = async (kept: Kept, threadId: string, version: string) => {
  const page = await pageToolsOf(kept, threadId, version)
  return { page, tools: await page.tools() }
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

/** A new conversation, held (empty) for the turn that continues it. */
export const holdNewConversation = (kept: Kept, id: string): void => {
  kept.conversation = { id, messages: [] }
}

/** The model's window, asked of the server once per model (and again after a failed turn). */
export const windowOf = (kept: Kept, connection: Connection, model: string): Promise<number | undefined> => {
  const key = `${connection.baseUrl} ${model}`
  const asked = kept.windows.get(key) ?? handled(contextLength(connection, model))
  kept.windows.set(key, asked)
  return asked
}
