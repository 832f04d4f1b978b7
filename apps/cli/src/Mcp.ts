/**
 * Mcp — `pedelec-cli mcp`, loaded by main only for that command (its own chunk: the MCP SDK never weighs on the
 * `tool-call` fast path): composition only. SessionTools opens the one Core connection and reads the tools,
 * McpTools serves them on the MCP SDK's `Server` over stdin/stdout until stdin closes. stdout is the MCP stream
 * alone; a session that cannot be reached at start is one line on stderr in the words of the agent commands, and
 * the exit code they would use; nothing is served.
 *
 * Why the SDK and not Effect's McpServer: a tool call through a new server (an agent's, which serves tens of calls,
 * never a warm thousand) cost 1.0 ms of CPU in Effect's against 0.4 ms in the SDK's (200 calls of a bare ping tool
 * each, bundled; 0.34 against 0.16 ms once warm), and every MCP client we drive is tested against the SDK.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Command } from "./Args.ts"
import { serveTools } from "./Mcp/McpTools.ts"
import { openSessionTools, type SessionTools } from "./Mcp/SessionTools.ts"
import { EXIT, emit, failed, toolError } from "./Output.ts"

type McpCommand = Extract<Command, { readonly _tag: "Mcp" }>

const INSTRUCTIONS = "The tools of the web page that started this Pedelec session; each call runs in the page."

/**
 * stdin closing is the normal end, exit 0: once what it carried is answered (the next turn of the event loop), calls
 * still pending are interrupted (Core cancels a call whose caller went) and the connection closes.
 */
const endWithStdin = (transport: StdioServerTransport, session: SessionTools) => {
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    setImmediate(() => {
      void transport.close()
      void session.close()
    })
  }
  process.stdin.once("end", end)
  transport.onclose = end
}

const serve = async (command: McpCommand, version: string) => {
  const session = await openSessionTools(command.threadId, version)
  if ("error" in session) {
    await emit(failed(session.error, { exit: session.exit, json: false }))
    return
  }
  const server = new Server({ name: "pedelec", version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  serveTools(server, session)
  const transport = new StdioServerTransport()
  endWithStdin(transport, session)
  await server.connect(transport)
}

const internal = (cause: unknown) => {
  const error = toolError("INTERNAL_ERROR", `pedelec-cli mcp hit an unexpected error (${String(cause)}).`)
  const outcome = failed(error, { exit: EXIT.toolFailed, json: false })
  const debug = process.env.PEDELEC_DEBUG === "1" && cause instanceof Error ? `${cause.stack}\n` : ""
  return emit({ ...outcome, stderr: `${outcome.stderr ?? ""}${debug}` })
}

/**
 * A signal means the agent's CLI is being stopped: nothing is left to hand over (Core cancels a call whose caller
 * went), so the server exits at once rather than wind down while the CLI's kill sequence waits on it (up to ~400 ms
 * of a gemini session's end under load).
 */
export const run = (command: McpCommand, version: string): void => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(EXIT.ok))
  serve(command, version).catch(internal)
}
