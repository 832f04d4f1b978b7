/**
 * PageTools — the page's tools as pedelec-agent offers them to the model: one Core IPC connection for the life of
 * the warm process (the agent role, proving the session capability like pedelec-cli), one `tool.list` and a
 * `tool.spec` per tool, turned into native function tools and kept (a session's tools are fixed when it is created;
 * they are read again only after Core refused a call's arguments against the spec offered), and `tool.call` answered
 * with exactly the line pedelec-cli would print. A cancelled turn interrupts the pending call, so Core aborts the
 * page's handler; a call Core cancels ends the turn (TurnOver). It does not run workspace tools or talk to the model.
 */

import { AGENT_LOOP_TOOLS } from "@pedelec/contracts/node/AgentLoop"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { capabilityProof, check, decodeCliOutput, endpoint, hello, refused } from "../Agent.ts"
import { connect, type Wire } from "../AgentWire.ts"
import type { Refusal } from "../Reach.ts"
import { isRecord } from "../Unknown.ts"
import { AgentFailure, Cancelled, TurnOver } from "./Failure.ts"
import type { FunctionTool } from "./Ollama.ts"
import type { ToolAnswer } from "./WorkspaceTools.ts"

export interface PageTools {
  /** The page's tools: listed once (again after a refused call), a `tool.spec` for each tool not known as it is. */
  readonly tools: () => Promise<ReadonlyArray<FunctionTool>>
  readonly call: (name: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<CliOutput | ToolAnswer>
  readonly close: () => void
}

const failed = (refusal: Refusal) =>
  new AgentFailure(refusal.error.code, refusal.error.details ?? {}, undefined, refusal.error.message)

const reserved = new Set<string>(Object.values(AGENT_LOOP_TOOLS))

/**
 * Core ends a turn's pending calls with these when the turn is over for it (cancelled, ended, completed): going on
 * with the model would only race Core's interrupt and put an answer nobody asked for in the conversation.
 */
const TURN_OVER = new Set<string>(["TOOL_CANCELLED", "SESSION_ENDED"])

/** A tool as its summary says it, so a page that re-registers it with other words gets its spec read again. */
interface Known {
  readonly summary: string
  readonly tool: FunctionTool
}

const connectAgent = async (threadId: string, version: string) => {
  const refusedEarly = check({ _tag: "ToolList", threadId }, process.env.PEDELEC_SESSION_CAP)
  if (refusedEarly !== undefined) throw failed(refusedEarly)
  const at = await endpoint()
  if ("error" in at) throw failed(at)
  const connected = await connect(at)
  if ("error" in connected) throw failed(connected)
  const wire: Wire = connected
  const refusedHello = await hello(wire, at, version, threadId).catch((error: unknown) => {
    wire.close()
    throw error
  })
  if (refusedHello !== undefined) {
    wire.close()
    throw failed(refusedHello)
  }
  return wire
}

export const openPageTools = async (threadId: string, version: string): Promise<PageTools> => {
  const wire = await connectAgent(threadId, version)
  const proof = capabilityProof()
  const known = new Map<string, Known>()
  const ask = async (tag: string, payload: unknown) => {
    const answer = await wire.request(tag, payload, proof)
    if (answer._tag !== "Success") throw failed(refused(answer, threadId))
    return answer.value
  }

  const specOf = async (name: string, summary: string): Promise<Known | undefined> => {
    const spec = await ask("tool.spec", { sessionId: threadId, name })
    if (!isRecord(spec)) return undefined
    const description = typeof spec.description === "string" ? spec.description : ""
    return { summary, tool: { type: "function", function: { name, description, parameters: spec.argsSchema } } }
  }

  const refresh = async () => {
    const listed = await ask("tool.list", { sessionId: threadId })
    // The built-in tools keep their names; a page tool taking one would be unreachable, so it is left out.
    const entries = (Array.isArray(listed) ? listed : []).flatMap((tool) =>
      isRecord(tool) && typeof tool.name === "string" && !reserved.has(tool.name)
        ? [{ name: tool.name, summary: JSON.stringify(tool) }]
        : []
    )
    // Specs read together: the wire takes any number of requests at a time.
    const now = await Promise.all(
      entries.map(({ name, summary }) => {
        const kept = known.get(name)
        return kept !== undefined && kept.summary === summary ? kept : specOf(name, summary)
      })
    )
    known.clear()
    for (const entry of now) if (entry !== undefined) known.set(entry.tool.function.name, entry)
    return [...known.values()].map((entry) => entry.tool)
  }
  let listed: Promise<ReadonlyArray<FunctionTool>> | undefined
  const tools = () => {
    if (listed !== undefined) return listed
    const asked = refresh()
    listed = asked
    // A failed listing is not kept: the turn that awaited it fails, and the next one asks again.
    asked.catch(() => {
      if (listed === asked) listed = undefined
    })
    return asked
  }

  const call = async (name: string, args: Record<string, unknown>, signal: AbortSignal) => {
    if (signal.aborted) throw new Cancelled()
    // Cancel interrupts the call in Core (the page's handler aborts) and ends the turn now, not when Core answers.
    let onAbort = () => {}
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        void wire.cancel()
        reject(new Cancelled())
      }
    })
    signal.addEventListener("abort", onAbort, { once: true })
    try {
      const answer = await Promise.race([
        wire.request("tool.call", { sessionId: threadId, name, args }, proof),
        aborted
      ])
      if (answer._tag === "Success") {
        const output = decodeCliOutput(answer.value)
        if (output !== undefined && !output.ok && TURN_OVER.has(output.error.code)) throw new TurnOver()
        if (output !== undefined) return output
      }
      // Core's refusals (bad arguments, an unknown tool) go to the model, which can correct its call.
      const refusal = answer._tag === "Success" ? undefined : refused(answer, threadId)
      if (refusal !== undefined && TURN_OVER.has(refusal.error.code)) throw new TurnOver()
      // Arguments refused against the schema we offered: the page may have changed it, so the next list reads it.
      if (refusal?.error.code === "TOOL_ARGS_INVALID") {
        known.delete(name)
        listed = undefined
      }
      return refusal === undefined
        ? { ok: false as const, error: { code: "PROTOCOL_ERROR" as const, message: "Core's answer was unreadable." } }
        : { ok: false as const, error: refusal.error }
    } finally {
      signal.removeEventListener("abort", onAbort)
    }
  }
  return { tools, call, close: () => wire.close() }
}
