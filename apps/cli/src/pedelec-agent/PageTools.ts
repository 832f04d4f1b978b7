/**
 * PageTools — the page's tools as pedelec-agent offers them to the model: one Core IPC connection per turn (the
 * agent role, proving the session capability like pedelec-cli), `tool.list` and `tool.spec` turned into native
 * function tools, and `tool.call` answered with exactly the line pedelec-cli would print. A cancelled turn interrupts
 * the pending call, so Core aborts the page's handler. It does not run workspace tools or talk to the model.
 */

import { AGENT_LOOP_TOOLS } from "@pedelec/contracts/node/AgentLoop"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { capabilityProof, check, decodeCliOutput, endpoint, hello, refused } from "../Agent.ts"
import { connect, type Wire } from "../AgentWire.ts"
import type { Refusal } from "../Reach.ts"
import { isRecord } from "../Unknown.ts"
import { AgentFailure, Cancelled } from "./Failure.ts"
import type { FunctionTool } from "./Ollama.ts"
import type { ToolAnswer } from "./WorkspaceTools.ts"

export interface PageTools {
  readonly tools: ReadonlyArray<FunctionTool>
  readonly call: (name: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<CliOutput | ToolAnswer>
  readonly close: () => void
}

const failed = (refusal: Refusal) =>
  new AgentFailure(refusal.error.code, refusal.error.details ?? {}, undefined, refusal.error.message)

const reserved = new Set<string>(Object.values(AGENT_LOOP_TOOLS))

export const openPageTools = async (threadId: string, version: string): Promise<PageTools> => {
  const refusedEarly = check({ _tag: "ToolList", threadId }, process.env.PEDELEC_SESSION_CAP)
  if (refusedEarly !== undefined) throw failed(refusedEarly)
  const at = await endpoint()
  if ("error" in at) throw failed(at)
  const connected = await connect(at)
  if ("error" in connected) throw failed(connected)
  const wire: Wire = connected
  const proof = capabilityProof()
  const ask = async (tag: string, payload: unknown) => {
    const answer = await wire.request(tag, payload, proof)
    if (answer._tag !== "Success") throw failed(refused(answer, threadId))
    return answer.value
  }
  try {
    const refusedHello = await hello(wire, at, version, threadId)
    if (refusedHello !== undefined) throw failed(refusedHello)
    const listed = await ask("tool.list", { sessionId: threadId })
    const names = Array.isArray(listed) ? listed.flatMap((tool) => (isRecord(tool) ? [tool.name] : [])) : []
    const tools: Array<FunctionTool> = []
    for (const name of names) {
      // The built-in tools keep their names; a page tool taking one would be unreachable, so it is left out.
      if (typeof name !== "string" || reserved.has(name)) continue
      const spec = await ask("tool.spec", { sessionId: threadId, name })
      if (!isRecord(spec)) continue
      const description = typeof spec.description === "string" ? spec.description : ""
      tools.push({ type: "function", function: { name, description, parameters: spec.argsSchema } })
    }
    const call = async (name: string, args: Record<string, unknown>, signal: AbortSignal) => {
      if (signal.aborted) throw new Cancelled()
      const onAbort = () => void wire.cancel()
      signal.addEventListener("abort", onAbort, { once: true })
      try {
        const answer = await wire.request("tool.call", { sessionId: threadId, name, args }, proof)
        if (signal.aborted) throw new Cancelled()
        if (answer._tag === "Success") {
          const output = decodeCliOutput(answer.value)
          if (output !== undefined) return output
        }
        // Core's refusals (bad arguments, an unknown tool) go to the model, which can correct its call.
        const refusal = answer._tag === "Success" ? undefined : refused(answer, threadId)
        return refusal === undefined
          ? { ok: false as const, error: { code: "PROTOCOL_ERROR" as const, message: "Core's answer was unreadable." } }
          : { ok: false as const, error: refusal.error }
      } finally {
        signal.removeEventListener("abort", onAbort)
      }
    }
    return { tools, call, close: () => wire.close() }
  } catch (error) {
    wire.close()
    throw error
  }
}
