/**
 * pedelec-agent entry: Pedelec's own agent loop for Ollama-compatible servers, run by the `ollama` adapter once per
 * turn in the session's workspace. Reads the turn's `AgentLoopRequest` from stdin, runs it (Loop), and prints
 * ProviderEvent lines on stdout: the last one is `completed`, or one `error` (exit 1). SIGINT/SIGTERM cancel the
 * turn: the model request and any page tool call are abandoned and nothing more is printed (exit 130).
 */
import { AgentLoopRequest } from "@pedelec/contracts/node/AgentLoop"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import packageJson from "../../package.json" with { type: "json" }
import { AgentFailure, Cancelled } from "./Failure.ts"
import { runTurn } from "./Loop.ts"

const MAX_REQUEST_BYTES = 64 * 1024 * 1024
const THINK = /^--think=(low|medium|high|true|false)$/

const print = (event: ProviderEvent) =>
  new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(event)}\n`, () => resolve()))

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length
    if (size > MAX_REQUEST_BYTES) throw new AgentFailure("INVALID_INPUT", { reason: "the turn request is over 64 MiB" })
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString("utf8")
}

const requestOf = (text: string): AgentLoopRequest => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new AgentFailure("INVALID_INPUT", { reason: "the turn request on stdin is not JSON" })
  }
  const decoded = Schema.decodeUnknownOption(AgentLoopRequest)(json)
  if (Option.isNone(decoded))
    throw new AgentFailure("INVALID_INPUT", { reason: "the turn request on stdin is not an AgentLoopRequest" })
  return decoded.value
}

const thinkOf = (argv: ReadonlyArray<string>): boolean | string | undefined => {
  const token = argv.map((arg) => THINK.exec(arg)?.[1]).find((level) => level !== undefined)
  return token === "true" ? true : token === "false" ? false : token
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
  const cancel = new AbortController()
  const stop = () => cancel.abort()
  process.once("SIGINT", stop).once("SIGTERM", stop)
  try {
    const threadId = process.env.PEDELEC_THREAD_ID ?? ""
    await runTurn(requestOf(await readStdin()), {
      threadId,
      workspace: process.cwd(),
      agentDir: resolveCorePaths().agentDir,
      version: packageJson.version,
      think: thinkOf(argv),
      signal: cancel.signal,
      emit: (event) => void print(event)
    })
  } catch (error) {
    if (cancel.signal.aborted || error instanceof Cancelled) {
      process.exitCode = 130
      return
    }
    const failure =
      error instanceof AgentFailure
        ? error
        : new AgentFailure(
            "INTERNAL_ERROR",
            {},
            `pedelec-agent failed: ${error instanceof Error ? error.message : error}`
          )
    await print({ type: "error", code: failure.code, message: failure.message, details: failure.details })
    process.exitCode = 1
  }
}

await main()
