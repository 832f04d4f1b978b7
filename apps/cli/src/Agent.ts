/**
 * Agent — runs the agent commands (tool-list, tool-spec, tool-call) without effect, so an agent's hot path costs
 * little more than starting node: checks the tool name, thread id and capability, reads core.json (Reach), says
 * `core.hello` and sends the request over AgentWire with the session capability header, and prints the one line.
 * SIGINT/SIGTERM interrupts the request (Core cancels the page's handler), prints TOOL_CANCELLED for a call, exit 130.
 */

import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { WIRE_PATTERNS } from "@pedelec/contracts/Wire"
import type { Json } from "effect/Schema"
import { type Answer, connect, decodeToolError, type Wire } from "./AgentWire.ts"
import type { Command } from "./Args.ts"
import { EXIT, emit, failed, type Outcome, printed, succeeded, toolError } from "./Output.ts"
import {
  agentAdvice,
  type Endpoint,
  garbled,
  HELLO_TIMEOUT_MS,
  helloTimeout,
  invalidRuntime,
  mismatch,
  PROTOCOL_VERSION,
  type Refusal,
  readRuntimeJson,
  refusal,
  runtimeFile,
  SESSION_CAP_HEADER
} from "./Reach.ts"
import { isRecord } from "./Unknown.ts"

export type AgentCommand = Extract<Command, { readonly _tag: "ToolList" | "ToolSpec" | "ToolCall" }>

/** The contracts' own patterns, from their effect-free module. */
export const PATTERNS = {
  sessionId: WIRE_PATTERNS.sessionId,
  capability: WIRE_PATTERNS.secret,
  toolName: WIRE_PATTERNS.toolName
} as const

/** Core's `CliOutput`, read by hand: only the keys of the matching form are kept. */
export const decodeCliOutput = (u: unknown): CliOutput | undefined => {
  if (!isRecord(u)) return undefined
  if (u.ok === true && "result" in u) return { ok: true, result: u.result as Json }
  if (u.ok === true) {
    const { resultFile, bytes, preview } = u
    return typeof resultFile === "string" &&
      Number.isInteger(bytes) &&
      (bytes as number) >= 0 &&
      typeof preview === "string"
      ? { ok: true, resultFile, bytes: bytes as number, preview }
      : undefined
  }
  const error = u.ok === false ? decodeToolError(u.error) : undefined
  return error === undefined ? undefined : { ok: false, error }
}

const usage = (message: string): Refusal => ({ error: toolError("INVALID_INPUT", message), exit: EXIT.usage })

/** The thread id and the capability, before any socket: what every agent helper (`program`) checks first. */
export const checkSession = (
  threadId: string,
  capability: string | undefined,
  program = "pedelec-cli"
): Refusal | undefined => {
  if (!PATTERNS.sessionId.test(threadId))
    return usage(`${JSON.stringify(threadId)} is not a Pedelec thread id. Use the PEDELEC_THREAD_ID of your session.`)
  if (capability === undefined || capability === "")
    return refusal(
      "UNAUTHORIZED",
      `PEDELEC_SESSION_CAP is not set in this shell, so Pedelec cannot tell which session you act for. Run ${program} from the shell of the agent session Pedelec started; if your shell drops environment variables, tell the user.`
    )
  if (!PATTERNS.capability.test(capability))
    return refusal(
      "UNAUTHORIZED",
      `PEDELEC_SESSION_CAP is not a Pedelec session capability. Run ${program} from the shell of the agent session Pedelec started, with its environment unchanged.`
    )
  return undefined
}

/** Everything before the socket: the name, the thread id and the capability, as today's messages say. */
export const check = (command: AgentCommand, capability: string | undefined): Refusal | undefined => {
  if (command._tag !== "ToolList" && !PATTERNS.toolName.test(command.name))
    return refusal(
      "TOOL_NOT_FOUND",
      `The session has no tool ${JSON.stringify(command.name)} (tool names start with a letter and use letters, digits, _ . -). Run \`pedelec-cli tool-list\` to see its tools.`,
      { tool: command.name }
    )
  return checkSession(command.threadId, capability)
}

/** core.json's endpoint: the agent role needs only the socket and the pid. */
export const endpoint = async (): Promise<Endpoint | Refusal> => {
  const file = runtimeFile()
  const read = readRuntimeJson(file)
  if ("error" in read) return read
  const json = read.json
  if (!isRecord(json)) return invalidRuntime(file)
  const { socketPath, pid } = json
  return typeof socketPath === "string" && socketPath.length > 0 && socketPath.length <= 4096 && Number.isInteger(pid)
    ? { socketPath, pid: pid as number }
    : invalidRuntime(file)
}

/** Core's refusal keeps Core's words unless the agent needs other advice; a local refusal is already the line. */
export const refused = (answer: Exclude<Answer, { _tag: "Success" }>, sessionId: string): Refusal =>
  answer._tag === "Refusal"
    ? answer.refusal
    : refusal(
        answer.error.code,
        agentAdvice(answer.error.code, sessionId) ?? answer.error.message,
        answer.error.details
      )

/** Says `core.hello` on a fresh wire (as `component`); a refusal when Core does not answer in kind. */
export const hello = async (
  wire: Wire,
  at: Endpoint,
  version: string,
  sessionId: string,
  component: "cli" | "deno" = "cli"
): Promise<Refusal | undefined> => {
  const welcome = await wire.request("core.hello", { protocolVersion: PROTOCOL_VERSION, component, version }, [], {
    ms: HELLO_TIMEOUT_MS,
    refusal: helloTimeout(at)
  })
  if (welcome._tag !== "Success") return refused(welcome, sessionId)
  const protocol = isRecord(welcome.value) ? welcome.value.protocolVersion : undefined
  if (typeof protocol !== "number") return garbled(at, "a welcome without a protocol version")
  if (protocol !== PROTOCOL_VERSION) return mismatch(protocol)
  return undefined
}

/** The proof every agent request carries: this shell's session capability. */
export const capabilityProof = (): ReadonlyArray<readonly [string, string]> => [
  [SESSION_CAP_HEADER, process.env.PEDELEC_SESSION_CAP ?? ""]
]

const talk = async (command: AgentCommand, wire: Wire, at: Endpoint, version: string): Promise<Outcome | Refusal> => {
  const sessionId = command.threadId
  const refusedHello = await hello(wire, at, version, sessionId)
  if (refusedHello !== undefined) return refusedHello
  const proof = capabilityProof()
  const [tag, payload] =
    command._tag === "ToolList"
      ? ["tool.list", { sessionId }]
      : command._tag === "ToolSpec"
        ? ["tool.spec", { sessionId, name: command.name }]
        : ["tool.call", { sessionId, name: command.name, args: command.args }]
  const answer = await wire.request(tag, payload, proof)
  if (answer._tag !== "Success") return refused(answer, sessionId)
  const value = answer.value
  switch (command._tag) {
    case "ToolList":
      return Array.isArray(value) && value.every(isRecord) ? succeeded(value) : garbled(at, "tool.list: not a list")
    case "ToolSpec":
      return isRecord(value) ? succeeded(value) : garbled(at, "tool.spec: not a spec")
    case "ToolCall": {
      const output = decodeCliOutput(value)
      // What the page answered, even a failure, is a finished call: exit 1, never "Pedelec is unavailable".
      return output === undefined
        ? garbled(at, "tool.call: not a CliOutput")
        : printed(output, output.ok ? EXIT.ok : EXIT.toolFailed)
    }
  }
}

const outcomeOf = (result: Outcome | Refusal): Outcome =>
  "error" in result ? failed(result.error, { exit: result.exit, json: true }) : result

export const run = async (command: AgentCommand, version: string): Promise<void> => {
  let wire: Wire | undefined
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await wire?.cancel()
    if (command._tag === "ToolCall")
      await emit(
        failed(
          toolError(
            "TOOL_CANCELLED",
            `pedelec-cli was stopped before ${command.name} answered; the call was cancelled.`
          ),
          { json: true }
        )
      )
    process.exit(130)
  }
  process.once("SIGINT", stop).once("SIGTERM", stop)
  let result: Outcome | Refusal
  try {
    const capability = process.env.PEDELEC_SESSION_CAP
    const at = check(command, capability) ?? (await endpoint())
    const connected = "error" in at ? at : await connect(at)
    if ("error" in connected) result = connected
    else if ("error" in at) result = at
    else {
      wire = connected
      result = await talk(command, connected, at, version)
    }
  } catch (cause) {
    const outcome = failed(
      toolError(
        "INTERNAL_ERROR",
        `pedelec-cli hit an unexpected error (${cause}). Retry; if it persists, tell the user.`
      ),
      { exit: EXIT.toolFailed, json: true }
    )
    result =
      process.env.PEDELEC_DEBUG === "1"
        ? { ...outcome, stderr: `${cause instanceof Error ? cause.stack : cause}\n` }
        : outcome
  }
  if (stopped) return
  wire?.close()
  await emit(outcomeOf(result))
  process.off("SIGINT", stop).off("SIGTERM", stop)
}
