/**
 * pedelec-deno entry: `pedelec-deno [--thread-id <id>] run <workspace-relative-script> [--] [args…]`. Checks the
 * thread id and capability, finds the pinned Deno, asks Core (`deno.prepare`, proving the session capability) for
 * the session's workspace and the run's limits, prepares the script (Script: graph checked, copied, checked again,
 * or copied and matched to the graph cached in that Core's home),
 * runs the copy behind Deno's permissions and, where it works, bubblewrap (Run), and removes the copy. Its own
 * failures are one JSON line on stdout; everything else printed is the script's. Effect-free, like pedelec-cli's
 * agent path. SIGINT/SIGTERM stop the script (exit 130).
 */
import { rmSync } from "node:fs"
import path from "node:path"
import type { DenoRunPolicy } from "@pedelec/contracts/node/AgentLink"
import { resolveCorePaths } from "@pedelec/core-client/HomeLayout"
import packageJson from "../../package.json" with { type: "json" }
import { capabilityProof, checkSession, endpoint, hello, refused } from "../Agent.ts"
import { type Answer, connect } from "../AgentWire.ts"
import { type Endpoint, garbled } from "../Reach.ts"
import { HELP, parseArgs } from "./Args.ts"
import { type Failure, failure, fromRefusal, jsonLine, Refused } from "./Failure.ts"
import { execute } from "./Run.ts"
import { denoBinary } from "./Runtime.ts"
import { findWall, type Wall } from "./Sandbox.ts"
import { type GraphCache, openCache, trustedHome } from "./Script/GraphCache.ts"
import { privateDirs } from "./Script/PrivateDir.ts"
import { dispose, type Prepared, prepare } from "./Script.ts"
import { RESOURCE_CAPS } from "./Watchdog.ts"

const isFailure = (u: unknown): u is Failure => typeof u === "object" && u !== null && "error" in u && "exit" in u

/** Prints the last words, waits until stdout and stderr have taken everything (the script's too), and exits. */
const finish = (stdout: string, exit: number): Promise<never> =>
  new Promise(() => {
    process.exitCode = exit
    let pending = 2
    const flushed = () => {
      if (--pending === 0) process.exit(exit)
    }
    process.stderr.write("", flushed)
    process.stdout.write(stdout, flushed)
  })

const positiveInt = (u: unknown): u is number => Number.isInteger(u) && (u as number) > 0

/** What pedelec-deno finds on this machine: the runtime, the second wall, and the graph cache of Core's home. */
interface Local {
  readonly deno: string | Failure
  readonly wall: Wall
  readonly cache: GraphCache | undefined
}

/** Only the home whose Core socket is `socketPath` keeps trusted graphs; any other PEDELEC_HOME gets full checks. */
const cacheOf = async (socketPath: string) => {
  const home = await trustedHome(resolveCorePaths().home, socketPath)
  return home === undefined ? undefined : openCache(home)
}

/** Synchronous file system calls all (a few ms): with a Core, askCore makes them while it answers instead. */
const findLocal = async (socketPath: string | undefined): Promise<Local> => ({
  deno: await denoBinary(process.env),
  wall: await findWall(),
  cache: socketPath === undefined ? undefined : await cacheOf(socketPath)
})

/** Core's policy for this session's runs (proving the capability), from the Core at `at`; or why not. */
const askCore = async (
  at: Endpoint,
  sessionId: string,
  version: string
): Promise<{ readonly policy: DenoRunPolicy | Failure; readonly local: Local }> => {
  const wire = await connect(at)
  if ("error" in wire) return { policy: fromRefusal(wire), local: await findLocal(at.socketPath) }
  try {
    // Each request is written first and awaited last: the local set-up runs while Core answers it.
    const greeting = hello(wire, at, version, sessionId, "deno")
    const deno = await denoBinary(process.env)
    const wall = await findWall()
    const refusedHello = await greeting
    if (refusedHello !== undefined)
      return { policy: fromRefusal(refusedHello), local: { deno, wall, cache: undefined } }
    const asked = wire.request("deno.prepare", { sessionId }, capabilityProof())
    const cache = await cacheOf(at.socketPath)
    return { policy: policyOf(at, sessionId, await asked), local: { deno, wall, cache } }
  } finally {
    wire.close()
  }
}

/** `deno.prepare`'s answer read as a run policy, or why not. */
const policyOf = (at: Endpoint, sessionId: string, answer: Answer): DenoRunPolicy | Failure => {
  if (answer._tag !== "Success") return fromRefusal(refused(answer, sessionId))
  const value = answer.value as Partial<Record<keyof DenoRunPolicy, unknown>> | null
  const { workspace, timeoutMs, outputBytes } = value ?? {}
  if (typeof workspace !== "string" || !path.isAbsolute(workspace) || !positiveInt(timeoutMs))
    return fromRefusal(garbled(at, "deno.prepare: not a run policy"))
  if (!positiveInt(outputBytes)) return fromRefusal(garbled(at, "deno.prepare: not a run policy"))
  return { workspace, timeoutMs, outputBytes }
}

const main = async (): Promise<never> => {
  const parsed = parseArgs(process.argv.slice(2), process.env)
  switch (parsed._tag) {
    case "Help":
      return finish(HELP, 0)
    case "Version":
      return finish(`${packageJson.version}\n`, 0)
    case "UsageError": {
      const failed = failure("INVALID_INPUT", parsed.message)
      return finish(jsonLine(failed), failed.exit)
    }
  }
  const refusedSession = checkSession(parsed.threadId, process.env.PEDELEC_SESSION_CAP, "pedelec-deno")
  if (refusedSession !== undefined) return finish(jsonLine(fromRefusal(refusedSession)), refusedSession.exit)
  // Core's policy, and what is on this machine (the graph cache is of that Core's home, used once it has answered).
  const at = await endpoint()
  const { policy, local } =
    "error" in at
      ? { policy: fromRefusal(at), local: await findLocal(undefined) }
      : await askCore(at, parsed.threadId, packageJson.version)
  const { deno, wall, cache } = local
  if (isFailure(deno)) return finish(jsonLine(deno), deno.exit)
  if (isFailure(policy)) return finish(jsonLine(policy), policy.exit)

  let stopScript: (() => void) | undefined
  const stop = () => {
    stopScript?.()
    for (const dir of privateDirs) rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  }
  process.once("SIGINT", stop).once("SIGTERM", stop)
  // A reader that went away (EPIPE) drops the rest of the output; the script still ends normally or at its timeout.
  process.stdout.on("error", () => undefined)
  process.stderr.on("error", () => undefined)
  let prepared: Prepared
  try {
    prepared = await prepare({
      deno,
      wall,
      policy: { ...policy, ...RESOURCE_CAPS },
      script: parsed.script,
      args: parsed.args,
      ...(cache === undefined ? {} : { cache })
    })
  } catch (error) {
    if (!(error instanceof Refused)) throw error
    return finish(jsonLine(error.failure), error.failure.exit)
  }
  const done = await execute(prepared, { stdout: process.stdout, stderr: process.stderr, stdin: "inherit" }, (kill) => {
    stopScript = kill
  })
  await dispose(prepared)
  if (done.failure === undefined) return finish("", done.exit)
  return finish(`${done.stdoutEndsLine ? "" : "\n"}${jsonLine(done.failure)}`, done.exit)
}

main().catch((cause: unknown) => {
  const failed = failure(
    "INTERNAL_ERROR",
    `pedelec-deno hit an unexpected error (${cause instanceof Error ? cause.message : String(cause)}). Retry; if it persists, tell the user.`
  )
  if (process.env.PEDELEC_DEBUG === "1") process.stderr.write(`${cause instanceof Error ? cause.stack : cause}\n`)
  void finish(jsonLine(failed), failed.exit)
})
