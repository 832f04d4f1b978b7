/**
 * AgentProcess — owns agent CLI processes, one per `spawn`: starts it in its own process group with the prompt on
 * stdin, exposes stdout as strictly decoded lines and the tail of stderr, watches the process tree so descendants
 * that leave the group (setsid) stay known, and on release interrupts, then kills the group and every descendant
 * seen. It does not interpret the CLI's output (adapters do) nor time out a quiet CLI (Core does).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { LineSplitter, LineTooLong, MAX_LINE_BYTES, type OutputLine } from "./OutputLines.ts"
import * as ProcessTree from "./ProcessTree.ts"
import type { ProcessRecord } from "./Provider.ts"

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

const TRACK_INTERVAL_MS = 200
/** After SIGINT, how long the CLI gets to wind down before the tree is killed. */
const INTERRUPT_GRACE_MS = 1_500
/** After SIGTERM, how long before SIGKILL. */
const TERM_GRACE_MS = 1_000
/** After the CLI exits, how long a still-open stdout may stay silent before the lines end anyway. */
const STDOUT_LINGER_MS = 1_000
const STDERR_TAIL_BYTES = 8 * 1024
const STDERR_WAIT_MS = 500
const EXIT_REAP_MS = 2_000

const startFailed = (provider: ProviderCode, reason: string) =>
  PedelecError.fromCode("PROVIDER_START_FAILED", "provider", { details: { provider, reason } })

/** Keeps the last `limit` bytes of a byte stream without ever holding more than ~2× that. */
const tailKeeper = (limit: number) => {
  let chunks: Array<Uint8Array> = []
  let size = 0
  return {
    push: (chunk: Uint8Array) => {
      chunks.push(chunk)
      size += chunk.length
      if (size > 2 * limit) {
        const joined = Buffer.concat(chunks)
        chunks = [joined.subarray(joined.length - limit)]
        size = limit
      }
    },
    text: () => {
      const joined = Buffer.concat(chunks)
      return new TextDecoder().decode(joined.subarray(Math.max(0, joined.length - limit))).trim()
    }
  }
}

/** The spawner reports a signal death as a failure whose cause says "…receipt of signal: 'SIGKILL'". */
const describeExit = (error: { readonly message: string; readonly cause?: unknown }): AgentExit => {
  const text = error.cause instanceof Error ? error.cause.message : error.message
  const signal = /signal: '?(\w+)'?/.exec(text)?.[1]
  return { code: undefined, description: signal === undefined ? text : `killed by ${signal}` }
}

const make = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner

  const spawn = Effect.fn("AgentProcess.spawn")(function* (options: AgentSpawnOptions) {
    const command = ChildProcess.make(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: options.inheritEnv,
      // Own process group (and session): the whole group can be interrupted and killed without touching Core.
      detached: true,
      stdin: {
        stream:
          typeof options.stdin === "string" ? Stream.make(new TextEncoder().encode(options.stdin)) : options.stdin,
        endOnDone: true
      },
      // The spawner's own release runs after ours and finds nothing left; these only matter if ours failed. It also
      // sends killSignal to the group when the CLI exits non-zero, so members left behind are asked, not shot.
      killSignal: "SIGTERM",
      forceKillAfter: "1 second"
    })
    const handle = yield* spawner
      .spawn(command)
      .pipe(Effect.mapError((error) => startFailed(options.provider, error.message)))
    const pid = handle.pid as number
    const leader = (yield* ProcessTree.identity(pid)) ?? { pid, pgid: pid, startTime: "" }
    const seen = new Map<string, ProcessRecord>([[`${leader.pid}:${leader.startTime}`, leader]])
    // Awaits node's "exit" event directly, so it still answers after the scope (and its fibers) are gone.
    const exit = handle.exitCode.pipe(
      Effect.map((code): AgentExit => ({ code, description: `exit code ${code}` })),
      Effect.catch((error) => Effect.succeed(describeExit(error)))
    )
    const stderrClosed = yield* Deferred.make<void>()
    const stderr = tailKeeper(STDERR_TAIL_BYTES)

    yield* handle.stderr.pipe(
      Stream.runForEach((chunk) => Effect.sync(() => stderr.push(chunk))),
      Effect.ignore,
      Effect.ensuring(Deferred.succeed(stderrClosed, undefined)),
      Effect.forkScoped
    )

    // Descendants are found through parent links, which a child loses when its parent dies: look often while the
    // CLI lives, and from every process already seen, so a setsid grandchild stays known.
    const track = Effect.gen(function* () {
      const table = yield* ProcessTree.snapshot
      const byPid = new Map(table.map((info) => [info.pid, info]))
      const live = [...seen.values()].filter((r) => ProcessTree.matches(r, byPid.get(r.pid)))
      const groups = new Set(live.map((r) => r.pgid))
      const found = [
        ...ProcessTree.descendantsOf(
          live.map((r) => r.pid),
          table
        ),
        ...table.filter((info) => groups.has(info.pgid) && info.pid !== process.pid)
      ]
      for (const info of found) {
        seen.set(`${info.pid}:${info.startTime}`, { pid: info.pid, pgid: info.pgid, startTime: info.startTime })
      }
    })
    const running = Effect.orElseSucceed(handle.isRunning, () => false)
    yield* Effect.gen(function* () {
      while (yield* running) {
        yield* track
        yield* Effect.sleep(TRACK_INTERVAL_MS)
      }
    }).pipe(Effect.forkScoped)

    const processes = Effect.suspend(() => ProcessTree.liveRecords([...seen.values()]))
    const interrupt = ProcessTree.signalGroups([leader], "SIGINT")

    const release = Effect.gen(function* () {
      yield* track
      if ((yield* processes).length === 0) return
      yield* ProcessTree.signalGroups([...seen.values()], "SIGINT")
      for (let waited = 0; waited < INTERRUPT_GRACE_MS && (yield* processes).length > 0; waited += 100) {
        yield* Effect.sleep(100)
      }
      yield* track
      yield* ProcessTree.killTree([...seen.values()], { graceMs: TERM_GRACE_MS })
      // A killed CLI can be a zombie for a moment; once node has reaped it, its pid is really free.
      yield* Effect.timeoutOption(exit, EXIT_REAP_MS)
    })
    const terminate = yield* Effect.cached(release)
    yield* Effect.addFinalizer(() => terminate)

    const lastOutputAt = { ms: yield* Clock.currentTimeMillis }
    // A descendant may hold stdout open after the CLI is gone; then the lines end once it has been quiet a while.
    const stdoutAbandoned = Effect.gen(function* () {
      yield* exit
      // The linger counts from the exit: output the agent printed just before exiting may still be unread.
      lastOutputAt.ms = Math.max(lastOutputAt.ms, yield* Clock.currentTimeMillis)
      while (true) {
        const now = yield* Clock.currentTimeMillis
        if (now - lastOutputAt.ms >= STDOUT_LINGER_MS) return
        yield* Effect.sleep(STDOUT_LINGER_MS - (now - lastOutputAt.ms))
      }
    })
    const limit = options.maxLineBytes ?? MAX_LINE_BYTES
    const lines = Stream.suspend(() => {
      const splitter = new LineSplitter(limit)
      return handle.stdout.pipe(
        Stream.mapError((error) =>
          PedelecError.fromCode("PROVIDER_FAILED", "provider", {
            details: { provider: options.provider, reason: `reading its output failed: ${error.message}` }
          })
        ),
        Stream.mapEffect((chunk) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            lastOutputAt.ms = now
            const result = splitter.push(chunk)
            return result instanceof LineTooLong
              ? Effect.fail(
                  PedelecError.fromCode("PROVIDER_OUTPUT_INVALID", "provider", {
                    details: { provider: options.provider, reason: `a line exceeded ${limit} bytes`, limit }
                  })
                )
              : Effect.succeed(result)
          })
        ),
        Stream.flattenIterable,
        Stream.concat(Stream.suspend(() => Stream.fromIterable(splitter.end()))),
        Stream.interruptWhen(stdoutAbandoned)
      )
    })

    const stderrTail = Deferred.await(stderrClosed).pipe(
      Effect.timeoutOption(STDERR_WAIT_MS),
      Effect.map(() => stderr.text())
    )

    return {
      pid,
      lines,
      exit,
      stderrTail,
      interrupt,
      terminate,
      processes
    } satisfies AgentHandle
  })

  return AgentProcess.of({ spawn })
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
