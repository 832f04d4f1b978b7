/**
 * pedelec-agent entry: Pedelec's own agent loop for Ollama-compatible servers, run by the `ollama` adapter once per
 * session in the session's workspace and kept warm between its turns. Each line of stdin is one turn's
 * `AgentLoopRequest`; the turns run one after the other (Loop), each printing ProviderEvent lines on stdout that end
 * with `completed` or one `error` (written by Printer). What the process keeps between turns is Kept's. When stdin ends
 * it exits after the turn it is running (1 when that turn failed). SIGINT/SIGTERM cancel the running turn: the model
 * request and any page tool call are abandoned, nothing more is printed, and the process exits 130. A turn Core already
 * ended (its tool call cancelled) prints nothing either.
 */
import { AgentLoopRequest } from "@pedelec/contracts/node/AgentLoop"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import { TextLineSplitter } from "@pedelec/core-client/TextLines"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import packageJson from "../../package.json" with { type: "json" }
import { AgentFailure, Cancelled, TurnOver } from "./Failure.ts"
import { emptyKept, forgetKept, type Kept, readAhead } from "./Kept.ts"
import { runTurn, type TurnContext } from "./Loop.ts"
import { makePrinter } from "./Printer.ts"

/** In UTF-16 units: a request is mostly the prompt, and one over 64 Mi characters is no turn. */
const MAX_REQUEST_CHARS = 64 * 1024 * 1024
const THINK = /^--think=(low|medium|high|true|false)$/

const print = makePrinter((text, done) => process.stdout.write(text, done))

const requestOf = (text: string): AgentLoopRequest => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new AgentFailure("INVALID_INPUT", { reason: "a turn request on stdin is not JSON" })
  }
  const decoded = Schema.decodeUnknownOption(AgentLoopRequest)(json)
  if (Option.isNone(decoded))
    throw new AgentFailure("INVALID_INPUT", { reason: "a turn request on stdin is not an AgentLoopRequest" })
  return decoded.value
}

const thinkOf = (argv: ReadonlyArray<string>): boolean | string | undefined => {
  const token = argv.map((arg) => THINK.exec(arg)?.[1]).find((level) => level !== undefined)
  return token === "true" ? true : token === "false" ? false : token
}

const failureOf = (error: unknown): AgentFailure =>
  error instanceof AgentFailure
    ? error
    : new AgentFailure("INTERNAL_ERROR", {}, `pedelec-agent failed: ${error instanceof Error ? error.message : error}`)

/** One turn, to its last event: true when it completed. A failed turn leaves nothing kept for the next one. */
const turn = async (line: string, context: TurnContext, kept: Kept): Promise<boolean> => {
  try {
    await runTurn(requestOf(line), context, kept)
    return true
  } catch (error) {
    if (context.signal.aborted || error instanceof Cancelled) throw new Cancelled()
    forgetKept(kept)
    if (error instanceof TurnOver) return false
    const failure = failureOf(error)
    await print({ type: "error", code: failure.code, message: failure.message, details: failure.details })
    return false
  }
}

/** The non-empty lines of stdin as they arrive; a line over 64 MiB fails the session's input. */
async function* requestLines(): AsyncGenerator<string> {
  const splitter = new TextLineSplitter(MAX_REQUEST_CHARS)
  process.stdin.setEncoding("utf8")
  for await (const chunk of process.stdin) {
    const pushed = splitter.push(chunk as string)
    if (pushed._tag === "TooLong") throw new AgentFailure("INVALID_INPUT", { reason: "a turn request is over 64 MiB" })
    for (const line of pushed.lines) if (line.trim() !== "") yield line
  }
}

/** Turns until stdin ends or a cancel; the exit code says how the last one went. */
const serve = async (think: boolean | string | undefined) => {
  const cancel = new AbortController()
  const stop = () => {
    process.exitCode = 130
    cancel.abort()
    // No more turns: stdin's end lets the loop below finish with the running turn.
    process.stdin.destroy()
  }
  process.once("SIGINT", stop).once("SIGTERM", stop)
  const kept = emptyKept()
  // The printer settles its promises in order: the last one settled means every line before it went out too.
  let lastPrint = Promise.resolve()
  const context: TurnContext = {
    threadId: process.env.PEDELEC_THREAD_ID ?? "",
    workspace: process.cwd(),
    agentDir: resolveCorePaths().agentDir,
    version: packageJson.version,
    think,
    signal: cancel.signal,
    emit: (event) => {
      lastPrint = print(event)
    },
    emitted: () => lastPrint
  }
  readAhead(kept, context.threadId, context.version)
  try {
    for await (const line of requestLines()) process.exitCode = (await turn(line, context, kept)) ? 0 : 1
  } catch (error) {
    if (cancel.signal.aborted || error instanceof Cancelled) process.exitCode = 130
    else {
      const failure = failureOf(error)
      await print({ type: "error", code: failure.code, message: failure.message, details: failure.details })
      process.exitCode = 1
    }
  } finally {
    forgetKept(kept)
  }
}

const main = async () => {
  const argv = process.argv.slice(2)
  if (argv.includes("--version")) {
    process.stdout.write(`${packageJson.version}\n`)
    return
  }
  const unknown = argv.find((arg) => !THINK.test(arg))
  if (unknown !== undefined) {
    process.stderr.write(`pedelec-agent: unknown argument ${unknown}; it takes --version or --think=<level>\n`)
    process.exitCode = 2
    return
  }
  await serve(thinkOf(argv))
}

await main()
