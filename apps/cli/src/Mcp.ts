/**
 * Mcp — `pedelec-cli mcp`, loaded by main only for that command (its own chunk: Effect's MCP server never weighs on
 * the `tool-call` fast path): composition only. SessionTools opens the one Core connection and reads the tools,
 * McpTools registers them, Effect's `McpServer.layerStdio` serves MCP on stdin/stdout until stdin closes. Logs go
 * to stderr, because stdout is the MCP stream. A session that cannot be reached at start is one line on stderr in
 * the words of the agent commands, and the exit code they would use; nothing is served.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type { Command } from "./Args.ts"
import type { CliFailure } from "./CliFailure.ts"
import { McpTools } from "./Mcp/McpTools.ts"
import { SessionTools } from "./Mcp/SessionTools.ts"
import { EXIT, emit, failed, toolError } from "./Output.ts"

type McpCommand = Extract<Command, { readonly _tag: "Mcp" }>

/** Every dated revision with initialization, newest first: the agent CLIs we drive offer 2024-11-05 to 2025-11-25. */
const PROTOCOLS = [
  McpProtocol.v2025_11_25,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_03_26,
  McpProtocol.v2024_11_05
] as const

const server = (command: McpCommand, version: string) =>
  McpServer.layerStdio({
    name: "pedelec",
    version,
    instructions: "The tools of the web page that started this Pedelec session; each call runs in the page.",
    protocols: PROTOCOLS,
    registrations: McpTools
  }).pipe(Layer.provide(SessionTools.layer({ threadId: command.threadId, version })), Layer.provide(NodeStdio.layer))

const refusedAtStart = (failure: CliFailure) =>
  Effect.promise(() => emit(failed(failure.error, { exit: failure.exit, json: false })))

const internal = (cause: Cause.Cause<unknown>) => {
  const error = toolError("INTERNAL_ERROR", `pedelec-cli mcp hit an unexpected error (${Cause.squash(cause)}).`)
  const outcome = failed(error, { exit: EXIT.toolFailed, json: false })
  const debug = process.env.PEDELEC_DEBUG === "1" ? `${Cause.pretty(cause)}\n` : ""
  return Effect.promise(() => emit({ ...outcome, stderr: `${outcome.stderr ?? ""}${debug}` }))
}

export const program = (command: McpCommand, version: string) =>
  Layer.launch(server(command, version)).pipe(
    Effect.as(EXIT.ok),
    Effect.catchTag("CliFailure", refusedAtStart),
    Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : internal(cause))),
    Effect.provideService(Logger.LogToStderr, true)
  )

/**
 * stdin closing ends the server (the stdio protocol interrupts it): that is the normal end, exit 0. A signal means
 * the agent's CLI is being stopped: nothing is left to hand over (Core cancels a call whose caller went), so the
 * server exits at once rather than wind its layers down while the CLI's kill sequence waits on it (up to ~400 ms of
 * a gemini session's end under load).
 */
export const run = (command: McpCommand, version: string): void => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(EXIT.ok))
  runServer(command, version)
}

const runServer = (command: McpCommand, version: string): void =>
  NodeRuntime.runMain(program(command, version), {
    disableErrorReporting: true,
    teardown: (exit, onExit) =>
      onExit(
        Exit.isSuccess(exit)
          ? typeof exit.value === "number"
            ? exit.value
            : EXIT.ok
          : Cause.hasInterruptsOnly(exit.cause)
            ? EXIT.ok
            : EXIT.toolFailed
      )
  })
