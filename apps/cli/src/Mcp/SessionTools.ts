/**
 * SessionTools — the session's page tools over one AgentWire connection for the whole life of `pedelec-cli mcp`:
 * checks the thread id and capability, connects and says hello exactly as the agent commands do (Agent), reads
 * every tool's spec once (Core fixes a session's catalog when the session is created, so it never changes under
 * us), and calls a tool as the same Core `tool.call` that `pedelec-cli tool-call` sends, any number at a time; when
 * the caller wants to hear that a call waits on the user, it tags the call and asks Core (`tool.waits_on_user`).
 * Aborting a call's signal interrupts its Core request alone, so Core aborts the page's handler and the wire stays
 * up. Promises over AgentWire, no effect runtime: it is on every MCP call's path. It does not speak MCP (McpTools)
 * nor print anything (Mcp).
 */

import { ToolSpec, ToolSummary } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import * as Schema from "effect/Schema"
import { capabilityProof, checkSession, decodeCliOutput, endpoint, hello, refused } from "../Agent.ts"
import { type Answer, connect, type Wire } from "../AgentWire.ts"
import { type Endpoint, garbled, type Refusal } from "../Reach.ts"

export interface CallOptions {
  /** Aborting it interrupts the Core request: Core cancels the page's handler. */
  readonly signal?: AbortSignal
  /** Run once if the page's handler starts waiting on a person (the call's timeout then pauses). */
  readonly onWaitingOnUser?: () => void
}

export interface SessionTools {
  /** Every tool of the session, with its argument schema, in Core's order. */
  readonly specs: ReadonlyArray<ToolSpec>
  /**
   * One call, answered with the line `pedelec-cli tool-call` would print: the page's outcome, the result file, or
   * Core's refusal (`ok: false`, in the agent's words). Never rejects: a refusal is something the agent acts on.
   */
  readonly call: (name: string, args: Readonly<Record<string, unknown>>, options?: CallOptions) => Promise<CliOutput>
  /** Interrupts what is still pending (Core cancels it) and closes the connection. */
  readonly close: () => Promise<void>
}

interface Link {
  readonly wire: Wire
  readonly at: Endpoint
}

/** Connected and greeted, or the refusal the agent commands would print. */
const open = async (threadId: string, version: string): Promise<Link | Refusal> => {
  const early = checkSession(threadId, process.env.PEDELEC_SESSION_CAP)
  if (early !== undefined) return early
  const at = await endpoint()
  if ("error" in at) return at
  const wire = await connect(at)
  if ("error" in wire) return wire
  const refusedHello = await hello(wire, at, version, threadId)
  if (refusedHello === undefined) return { wire, at }
  wire.close()
  return refusedHello
}

const request = (link: Link, tag: string, payload: unknown, signal?: AbortSignal): Promise<Answer> =>
  link.wire.request(tag, payload, capabilityProof(), undefined, signal)

/** One answer decoded with `schema`, or the refusal the agent commands would print. */
const ask = async <S extends Schema.Decoder<unknown>>(
  link: Link,
  threadId: string,
  tag: string,
  payload: unknown,
  schema: S
) => {
  const answer = await request(link, tag, payload)
  if (answer._tag !== "Success") return refused(answer, threadId)
  const decoded = Schema.decodeUnknownExit(schema)(answer.value)
  return decoded._tag === "Success"
    ? { value: decoded.value as S["Type"] }
    : garbled(link.at, `${tag}: not a ${tag.slice(5)}`)
}

/** `tool.list`, then `tool.spec` for each: the page's schemas exactly as Core validates calls against them. */
const readSpecs = async (link: Link, threadId: string): Promise<ReadonlyArray<ToolSpec> | Refusal> => {
  const summaries = await ask(link, threadId, "tool.list", { sessionId: threadId }, Schema.Array(ToolSummary))
  if ("error" in summaries) return summaries
  const specs: Array<ToolSpec> = []
  for (const { name } of summaries.value) {
    const spec = await ask(link, threadId, "tool.spec", { sessionId: threadId, name }, ToolSpec)
    if ("error" in spec) return spec
    specs.push(spec.value)
  }
  return specs
}

/** Core's answer to `tool.call` as the line pedelec-cli prints (Agent's decoding and Agent's refusal words). */
const outputOf = (answer: Answer, link: Link, threadId: string): CliOutput => {
  if (answer._tag !== "Success") return { ok: false, error: refused(answer, threadId).error }
  return decodeCliOutput(answer.value) ?? { ok: false, error: garbled(link.at, "tool.call: not a CliOutput").error }
}

/** The call, tagged, beside Core's word that it waits on the user; that wait is dropped when the call ends. */
const callHearingWaits = async (
  link: Link,
  payload: { readonly sessionId: string; readonly name: string; readonly args: unknown; readonly tag: string },
  onWaitingOnUser: () => void,
  signal: AbortSignal | undefined
) => {
  const waits = new AbortController()
  void request(link, "tool.waits_on_user", { sessionId: payload.sessionId, tag: payload.tag }, waits.signal).then(
    (answer) => {
      if (answer._tag === "Success" && !waits.signal.aborted) onWaitingOnUser()
    }
  )
  try {
    return await request(link, "tool.call", payload, signal)
  } finally {
    waits.abort()
  }
}

/** The session's tools, read once, and a call for each; or why the session cannot be served. */
export const openSessionTools = async (threadId: string, version: string): Promise<SessionTools | Refusal> => {
  const link = await open(threadId, version)
  if ("error" in link) return link
  const specs = await readSpecs(link, threadId)
  if ("error" in specs) {
    link.wire.close()
    return specs
  }
  let calls = 0
  const call = async (name: string, args: Readonly<Record<string, unknown>>, options: CallOptions = {}) => {
    const payload = { sessionId: threadId, name, args }
    const answer =
      options.onWaitingOnUser === undefined
        ? await request(link, "tool.call", payload, options.signal)
        : // Tagged, so that Core can say when this call waits on a person; that wait ends with the call.
          await callHearingWaits(
            link,
            { ...payload, tag: `${process.pid}-${++calls}` },
            options.onWaitingOnUser,
            options.signal
          )
    return outputOf(answer, link, threadId)
  }
  return { specs, call, close: () => link.wire.cancel() }
}
