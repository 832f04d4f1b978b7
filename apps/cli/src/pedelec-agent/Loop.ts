/**
 * Loop — one turn of pedelec-agent: resume or start the conversation, learn the model's context window, offer the
 * page's tools and the workspace tools as functions, and run model rounds until the model answers without a tool
 * call (or the round limit stops it). A warm-up request (the session just opened) runs no round: it names the
 * conversation the first turn continues (a new one, held empty) and asks the window ahead. Owns what is emitted as
 * ProviderEvents and when the conversation is saved; what a warm process keeps between turns is Kept's, HTTP
 * Ollama's, Core PageTools', files WorkspaceTools' and Conversation's.
 */

import type { AgentLoopRequest } from "@pedelec/contracts/node/AgentLoop"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { appendConversation, conversationFile, fitToWindow, newConversationId } from "./Conversation.ts"
import { AgentFailure, Cancelled } from "./Failure.ts"
import { conversationOf, holdNewConversation, type Kept, pageToolsFor, windowOf } from "./Kept.ts"
import { type ChatMessage, type Connection, chat, type ToolCall } from "./Ollama.ts"
import type { PageTools } from "./PageTools.ts"
import { runWorkspaceTool, type ToolAnswer, workspaceTools } from "./WorkspaceTools.ts"

export const LOOP_LIMITS = {
  /** Model rounds in one turn: a model stuck calling tools stops here instead of running up the user's machine. */
  maxRounds: 32,
  /** Ollama's own default window is small and silently truncates; ask for the model's, up to this. */
  maxNumCtx: 32_768,
  /** When the server does not say (older Ollama, compatible servers). */
  defaultNumCtx: 8_192,
  /** The share of the window the history may take; the rest is for the answer. */
  historyShare: 0.75
} as const

export interface TurnContext {
  readonly threadId: string
  readonly workspace: string
  readonly agentDir: string
  readonly version: string
  readonly think: boolean | string | undefined
  readonly signal: AbortSignal
  readonly emit: (event: ProviderEvent) => void
  /** Settles once everything emitted so far has been handed to stdout. */
  readonly emitted: () => Promise<void>
}

const systemMessage = (workspace: string): ChatMessage => ({
  role: "system",
  content:
    `You are a coding agent started by Pedelec for a web page. Your workspace is ${workspace}. ` +
    "Use the functions you are offered: the page's tools, and the pedelec_* functions for the workspace. " +
    "When you are done, answer in plain text."
})

const detailOf = (call: ToolCall) => JSON.stringify(call.arguments).slice(0, 4_096)

const notOffered = (name: string) => ({
  ok: false,
  error: { code: "TOOL_NOT_FOUND", message: `There is no function ${name}; use one you are offered.` }
})

const answerOf = async (call: ToolCall, page: PageTools, pageNames: Set<string>, context: TurnContext) =>
  (await runWorkspaceTool(call.name, call.arguments, context)) ??
  (pageNames.has(call.name) ? await page.call(call.name, call.arguments, context.signal) : notOffered(call.name))

/** Everything before the first round: the conversation (saved with the new user text), window and tools, together. */
const prepare = async (request: AgentLoopRequest, context: TurnContext, kept: Kept, connection: Connection) => {
  const id = request.providerSessionId ?? newConversationId()
  const file = conversationFile(context.agentDir, context.threadId, id)
  const messages = await conversationOf(kept, id, request.providerSessionId !== undefined, file)
  // What the file holds already: everything before this turn (read from it, or saved by the turn before).
  let saved = messages.length
  const save = () => {
    saved = appendConversation(file, messages, saved)
  }
  messages.push({ role: "user", content: request.prompt })
  context.emit({ type: "session", providerSessionId: id })
  // Saved before the first round: a turn that fails still leaves a conversation the next turn can resume.
  save()
  const [window, { page, tools: pageTools }] = await Promise.all([
    windowOf(kept, connection, request.model),
    pageToolsFor(kept, context.threadId, context.version)
  ])
  return {
    save,
    messages,
    page,
    pageTools,
    numCtx: Math.min(window ?? LOOP_LIMITS.defaultNumCtx, LOOP_LIMITS.maxNumCtx)
  }
}

const connectionOf = (request: AgentLoopRequest, context: TurnContext): Connection => ({
  baseUrl: request.baseUrl,
  apiKey: request.apiKey,
  timeoutMs: request.timeoutMs,
  signal: context.signal
})

/**
 * Answered at once, whatever the server does: the first turn awaits the window asked here (and the tools listed as
 * the process started), so a failure there is that turn's, with its code.
 */
export const warmUp = (request: AgentLoopRequest, context: TurnContext, kept: Kept): void => {
  const id = request.providerSessionId ?? newConversationId()
  // A conversation to resume is read by the turn that continues it.
  if (request.providerSessionId === undefined) holdNewConversation(kept, id)
  void windowOf(kept, connectionOf(request, context), request.model)
  context.emit({ type: "session", providerSessionId: id })
  context.emit({ type: "completed" })
}

export const runTurn = async (request: AgentLoopRequest, context: TurnContext, kept: Kept): Promise<void> => {
  if (request.warmUp === true) return warmUp(request, context, kept)
  const connection = connectionOf(request, context)
  const { save, messages, page, pageTools, numCtx } = await prepare(request, context, kept, connection)
  const tools = [...pageTools, ...workspaceTools]
  const pageNames = new Set(pageTools.map((tool) => tool.function.name))
  const system = systemMessage(context.workspace)
  let inputTokens = 0
  let outputTokens = 0
  for (let round = 1; round <= LOOP_LIMITS.maxRounds; round++) {
    const reply = await chat(
      connection,
      {
        model: request.model,
        messages: [system, ...fitToWindow(messages, Math.floor(numCtx * LOOP_LIMITS.historyShare))],
        tools,
        numCtx,
        think: context.think
      },
      (text) => context.emit({ type: "delta", text })
    )
    inputTokens += reply.inputTokens
    outputTokens += reply.outputTokens
    messages.push({
      role: "assistant",
      content: reply.content,
      ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls.map((call) => ({ function: call })) } : {})
    })
    if (reply.content !== "") context.emit({ type: "message", text: reply.content })
    if (reply.toolCalls.length === 0) {
      context.emit({ type: "usage", inputTokens, outputTokens })
      context.emit({ type: "completed" })
      // Core hears the completion before the append, not an append later (the next turn waits for it here: stdin is
      // read after this returns). A kill in between loses this answer from the file, never a user's text.
      await context.emitted()
      save()
      return
    }
    for (const call of reply.toolCalls) {
      if (context.signal.aborted) throw new Cancelled()
      context.emit({ type: "tool_activity", name: call.name, detail: detailOf(call) })
      const answer: ToolAnswer | unknown = await answerOf(call, page, pageNames, context)
      messages.push({ role: "tool", tool_name: call.name, content: JSON.stringify(answer) })
    }
    save()
  }
  throw new AgentFailure(
    "PROVIDER_FAILED",
    { provider: "ollama" },
    `the model was still calling tools after ${LOOP_LIMITS.maxRounds} rounds, so pedelec-agent stopped the turn; ask for a smaller step`
  )
}
