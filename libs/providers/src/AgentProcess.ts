/**
 * AgentProcess — owns agent CLI processes, one per `spawn`: starts it in its own process group with the prompt on
 * stdin, exposes stdout as strictly decoded lines and the tail of stderr, keeps its descendants known (so those that
 * leave the group, setsid, are not lost, nor those that also lost their parent before any look: they carry its
 * tag), and on release interrupts, then kills the group and every descendant seen. Its parts: AgentProcess/Output
 * (stdout lines, the stderr tail), AgentProcess/Descendants (what is seen, and the release sequence),
 * AgentProcess/Watch (the one table scan every running agent of this process shares) and AgentProcess/Tag (the
 * environment mark). It does not interpret the CLI's output (adapters do) nor time out a quiet CLI (Core does).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { liveOf, release, seenFrom, treeAlive } from "./AgentProcess/Descendants.ts"
import { outputLines, stderrTail } from "./AgentProcess/Output.ts"
import { AGENT_TAG_VARIABLE, newAgentTag, taggedSince } from "./AgentProcess/Tag.ts"
import { watch } from "./AgentProcess/Watch.ts"
import { MAX_LINE_BYTES, type OutputLine } from "./OutputLines.ts"
import * as ProcessTree from "./ProcessTree.ts"
import { type ProcessRecord, startFailed } from "./Provider.ts"

export interface AgentSpawnOptions {
  /** Who this is, for error messages. */
  readonly provider: ProviderCode
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Merge `env` over this process's environment; otherwise the agent sees `env` alone. */
  readonly inheritEnv: boolean
  /** Written to stdin, which is then closed: one text, or a stream (a warm CLI's turns) that ends when it ends. */
  readonly stdin: string | Stream.Stream<Uint8Array>
  /** Tests only: a smaller line limit than SPEC's 16 MiB. */
  readonly maxLineBytes?: number
}

export interface AgentExit {
  /** undefined when a signal ended it. */
  readonly code: number | undefined
  /** "exit code 3", "killed by SIGKILL": for error messages. */
  readonly description: string
}

export interface AgentHandle {
  readonly pid: number
  /**
   * stdout, line by line; consume it once. Ends when stdout closes, or shortly after the CLI exits if a descendant
   * keeps the pipe open. A line over the limit fails it with PROVIDER_OUTPUT_INVALID.
   */
  readonly lines: Stream.Stream<OutputLine, PedelecError>
  /** Waits for the CLI itself to exit (not its descendants). */
  readonly exit: Effect.Effect<AgentExit>
  /** The last 8 KiB of stderr, once stderr has closed (or after a short wait if a descendant holds it). */
  readonly stderrTail: Effect.Effect<string>
  /** SIGINT to the process group: how CLIs expect to be asked to stop. */
  readonly interrupt: Effect.Effect<void>
  /** The release sequence, on demand; scope close runs it too. Idempotent. */
  readonly terminate: Effect.Effect<void>
  /** The CLI and every descendant seen, still alive. */
  readonly processes: Effect.Effect<ReadonlyArray<ProcessRecord>>
}

/** The spawner reports a signal death as a failure whose cause says "…receipt of signal: 'SIGKILL'". */
const describeExit = (error: { readonly message: string; readonly cause?: unknown }): AgentExit => {
  const text = error.cause instanceof Error ? error.cause.message : error.message
  const signal = /signal: '?(\w+)'?/.exec(text)?.[1]
  return { code: undefined, description: signal === undefined ? text : `killed by ${signal}` }
}

const commandOf = (options: AgentSpawnOptions, tag: string) =>
  ChildProcess.make(options.command, options.args, {
    cwd: options.cwd,
    env: { ...options.env, [AGENT_TAG_VARIABLE]: tag },
    extendEnv: options.inheritEnv,
    // Own process group (and session): the whole group can be interrupted and killed without touching Core.
    detached: true,
    stdin: {
      stream: typeof options.stdin === "string" ? Stream.make(new TextEncoder().encode(options.stdin)) : options.stdin,
      endOnDone: true
    },
    // The spawner's own release runs after ours, off the path (spawnWith); these only matter if ours failed. It also
    // sends killSignal to the group when the CLI exits non-zero, so members left behind are asked, not shot.
    killSignal: "SIGTERM",
    forceKillAfter: "1 second"
  })

/** Awaits node's "exit" event directly, so it still answers after the scope (and its fibers) are gone. */
const exitOf = (handle: ChildProcessSpawner.ChildProcessHandle): Effect.Effect<AgentExit> =>
  handle.exitCode.pipe(
    Effect.map((code): AgentExit => ({ code, description: `exit code ${code}` })),
    Effect.catch((error) => Effect.succeed(describeExit(error)))
  )

const spawnWith = Effect.fnUntraced(function* (
  spawner: ChildProcessSpawner.ChildProcessSpawner["Service"],
  options: AgentSpawnOptions
) {
  // The spawner's own release waits for the CLI's process group to empty, zombies included. A descendant orphaned
  // to PID 1 (codex's git helpers, a sandbox whose parent died first) keeps it non-empty until PID 1 reaps it, which
  // in a container may be never: 1 s, SIGKILL, 1 s more before a session could say `ended` (issue 14: 1.3 s with
  // real codex). Ours (below, run first) ends every live process and reaps the CLI; the spawner's then only watches
  // zombies, so it runs off the path.
  const spawnerScope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Effect.forkDetach(Scope.close(spawnerScope, Exit.void)))
  const tag = newAgentTag()
  const handle = yield* spawner.spawn(commandOf(options, tag)).pipe(
    Scope.provide(spawnerScope),
    Effect.mapError((error) => startFailed(options.provider, error.message))
  )
  const pid = handle.pid as number
  const leader = (yield* ProcessTree.identity(pid)) ?? { pid, pgid: pid, startTime: "" }
  const seen = seenFrom(leader)
  const exit = exitOf(handle)
  const tail = yield* stderrTail(handle.stderr)
  yield* watch(seen)
  const terminate = yield* Effect.cached(release(seen, exit, (table) => taggedSince(table, leader, tag)))
  yield* Effect.addFinalizer(() => terminate)
  const limit = options.maxLineBytes ?? MAX_LINE_BYTES
  return {
    pid,
    lines: outputLines(handle.stdout, {
      provider: options.provider,
      limit,
      exit,
      treeAlive: treeAlive(seen, leader)
    }),
    exit,
    stderrTail: tail,
    interrupt: ProcessTree.signalGroups([leader], "SIGINT"),
    terminate,
    processes: Effect.map(liveOf(seen), (records) => records.map((record) => ({ ...record, agentTag: tag })))
  } satisfies AgentHandle
})

const make = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  return AgentProcess.of({
    spawn: Effect.fn("AgentProcess.spawn")((options: AgentSpawnOptions) => spawnWith(spawner, options))
  })
})

export class AgentProcess extends Context.Service<
  AgentProcess,
  {
    /** Starts the CLI; closing the scope interrupts it, then kills its group and every descendant seen. */
    readonly spawn: (options: AgentSpawnOptions) => Effect.Effect<AgentHandle, PedelecError, Scope.Scope>
  }
>()("pedelec/providers/AgentProcess") {
  /** Needs a ChildProcessSpawner. */
  static readonly layerNoDeps = Layer.effect(AgentProcess, make)
  static readonly layer = Layer.provide(AgentProcess.layerNoDeps, NodeServices.layer)
}
