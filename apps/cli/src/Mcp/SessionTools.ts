/**
 * SessionTools — the session's page tools over one AgentWire connection for the whole life of `pedelec-cli mcp`:
 * checks the thread id and capability, connects and says hello exactly as the agent commands do (Agent), reads
 * every tool's spec once (Core fixes a session's catalog when the session is created, so it never changes under
 * us), and calls a tool as the same Core `tool.call` that `pedelec-cli tool-call` sends, any number at a time; when
 * the caller wants to hear that a call waits on the user, it tags the call and asks Core (`tool.waits_on_user`).
 * Interrupting a call interrupts its Core request alone, so Core aborts the page's handler and the wire stays up.
 * It does not speak MCP (McpTools) nor print anything (Mcp).
 */

import { ToolSpec, ToolSummary } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { capabilityProof, checkSession, decodeCliOutput, endpoint, hello, refused } from "../Agent.ts"
import { type Answer, connect, type Wire } from "../AgentWire.ts"
import { CliFailure } from "../CliFailure.ts"
import { type Endpoint, garbled, type Refusal } from "../Reach.ts"

export interface SessionToolsShape {
  /** Every tool of the session, with its argument schema, in Core's order. */
  readonly specs: ReadonlyArray<ToolSpec>
  /**
   * One call, answered with the line `pedelec-cli tool-call` would print: the page's outcome, the result file, or
   * Core's refusal (`ok: false`, in the agent's words). Never fails: a refusal is something the agent acts on.
   */
  readonly call: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    onWaitingOnUser?: Effect.Effect<void>
  ) => Effect.Effect<CliOutput>
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

const link = (threadId: string, version: string) =>
  Effect.acquireRelease(
    Effect.promise(() => open(threadId, version)).pipe(
      Effect.flatMap((opened) => ("error" in opened ? Effect.fail(new CliFailure(opened)) : Effect.succeed(opened)))
    ),
    ({ wire }) => Effect.sync(() => wire.close())
  )

/** One request with the capability proof; interrupting the fiber aborts the request (AgentWire sends Interrupt). */
const request = (wire: Wire, tag: string, payload: unknown): Effect.Effect<Answer> =>
  Effect.promise((signal) => wire.request(tag, payload, capabilityProof(), undefined, signal))

/** `tool.list`, then `tool.spec` for each: the page's schemas exactly as Core validates calls against them. */
const readSpecs = (opened: Link, threadId: string) =>
  Effect.gen(function* () {
    const ask = <S extends Schema.Top>(tag: string, payload: unknown, schema: S) =>
      request(opened.wire, tag, payload).pipe(
        Effect.flatMap((answer) =>
          answer._tag === "Success"
            ? Schema.decodeUnknownEffect(schema)(answer.value).pipe(
                Effect.mapError(() => new CliFailure(garbled(opened.at, `${tag}: not a ${tag.slice(5)}`)))
              )
            : Effect.fail(new CliFailure(refused(answer, threadId)))
        )
      ) as Effect.Effect<S["Type"], CliFailure>
    const summaries = yield* ask("tool.list", { sessionId: threadId }, Schema.Array(ToolSummary))
    return yield* Effect.forEach(summaries, ({ name }) => ask("tool.spec", { sessionId: threadId, name }, ToolSpec))
  })

/** Core's answer to `tool.call` as the line pedelec-cli prints (Agent's decoding and Agent's refusal words). */
const outputOf = (answer: Answer, opened: Link, threadId: string): CliOutput => {
  if (answer._tag !== "Success") return { ok: false, error: refused(answer, threadId).error }
  return decodeCliOutput(answer.value) ?? { ok: false, error: garbled(opened.at, "tool.call: not a CliOutput").error }
}

export class SessionTools extends Context.Service<SessionTools, SessionToolsShape>()("pedelec/cli/SessionTools") {
  /** The connection lives as long as the layer: one hello for the whole MCP session. */
  static readonly layer = (options: {
    readonly threadId: string
    readonly version: string
  }): Layer.Layer<SessionTools, CliFailure> =>
    Layer.effect(
      SessionTools,
      Effect.gen(function* () {
        const { threadId } = options
        const opened = yield* link(threadId, options.version)
        const specs = yield* readSpecs(opened, threadId)
        let calls = 0
        const call = Effect.fn("SessionTools.call")(function* (
          name: string,
          args: Readonly<Record<string, unknown>>,
          onWaitingOnUser?: Effect.Effect<void>
        ) {
          if (onWaitingOnUser === undefined) {
            return outputOf(
              yield* request(opened.wire, "tool.call", { sessionId: threadId, name, args }),
              opened,
              threadId
            )
          }
          // Tagged, so that Core can say when this call waits on a person; that wait ends with the call.
          const tag = `${process.pid}-${++calls}`
          const heard = request(opened.wire, "tool.waits_on_user", { sessionId: threadId, tag }).pipe(
            Effect.flatMap((answer) => (answer._tag === "Success" ? onWaitingOnUser : Effect.void)),
            Effect.andThen(Effect.never)
          )
          const answer = yield* Effect.raceFirst(
            request(opened.wire, "tool.call", { sessionId: threadId, name, args, tag }),
            heard
          )
          return outputOf(answer, opened, threadId)
        })
        return SessionTools.of({ specs, call })
      })
    )
}
