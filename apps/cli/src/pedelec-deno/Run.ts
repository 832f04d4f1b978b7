/**
 * Run — runs a prepared script: its stdout and stderr passed through as they come, each cut after the policy's cap
 * (with a marker), its process group killed at the deadline (SCRIPT_TIMEOUT) or over a resource cap (the Watchdog's,
 * or V8's heap: SCRIPT_RESOURCE_LIMIT), its exit code handed back. A script that dies by a signal pedelec-deno did
 * not send is SCRIPT_FAILED.
 */

import { constants } from "node:os"
import type { Readable, Writable } from "node:stream"
import { type Failure, failure } from "./Failure.ts"
import { killGroup, start } from "./Processes.ts"
import type { Prepared } from "./Script.ts"
import { type Breach, killTree, watch } from "./Watchdog.ts"

export interface Io {
  readonly stdout: Writable
  readonly stderr: Writable
  readonly stdin: "inherit" | "ignore"
}

export interface Finished {
  /** The script's exit code, or pedelec-deno's for a failure. */
  readonly exit: number
  /** pedelec-deno's own failure (timeout, a signal), printed after the script's output. */
  readonly failure?: Failure
  /** Whether the script's last stdout byte was a newline (or it printed nothing): where the failure line starts. */
  readonly stdoutEndsLine: boolean
}

/** What V8 prints as it aborts on its heap limit (per isolate: the main one's or a Worker's). */
const HEAP_EXHAUSTED = /heap out of memory|Fatal process out of memory|Reached heap limit/

/**
 * Pipes `source` to `sink` until it ends, passing at most `cap` bytes, then one marker line, then nothing; says
 * whether the stream (all of it, passed or not) showed V8 running out of heap.
 */
const pump = (source: Readable, sink: Writable, cap: number, name: string) =>
  new Promise<{ readonly endsLine: boolean; readonly heapExhausted: boolean }>((resolve) => {
    let passed = 0
    let cut = false
    let endsLine = true
    let tail = ""
    let heapExhausted = false
    const write = (chunk: Buffer) => {
      if (chunk.length === 0) return
      endsLine = chunk[chunk.length - 1] === 0x0a
      if (!sink.write(chunk)) {
        source.pause()
        sink.once("drain", () => source.resume())
      }
    }
    source.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("latin1")).slice(-4096)
      if (HEAP_EXHAUSTED.test(tail)) heapExhausted = true
      if (cut) return
      const room = cap - passed
      passed += chunk.length
      if (chunk.length <= room) return write(chunk)
      write(chunk.subarray(0, room))
      cut = true
      write(
        Buffer.from(`${endsLine ? "" : "\n"}[pedelec-deno: ${name} cut after ${cap} bytes; the rest was dropped]\n`)
      )
    })
    source.once("close", () => resolve({ endsLine, heapExhausted }))
  })

const signalNumber = (signal: NodeJS.Signals) => (constants.signals as Record<string, number>)[signal] ?? 0

const heapBreach = (memoryBytes: number): Breach => ({
  limit: "memory",
  max: `${Math.round(memoryBytes / (1024 * 1024))} MiB`,
  observed: "the JavaScript heap limit"
})

const overCap = (breach: Breach): Failure =>
  failure(
    "SCRIPT_RESOURCE_LIMIT",
    `The script went over pedelec-deno's ${breach.limit} limit (${breach.max}; it reached ${breach.observed}) and was stopped. Use less memory, and no more than a few Workers.`,
    { limit: breach.limit, max: breach.max, observed: breach.observed }
  )

/** What pedelec-deno saw of a run besides its exit: why it stopped it, if it did. */
interface Seen {
  readonly timeoutMs: number
  readonly memoryBytes: number
  readonly breach: Breach | undefined
  readonly heapExhausted: boolean
  readonly timedOut: boolean
  readonly spawnError: string | undefined
}

/** The run's exit code and pedelec-deno's own failure, the first that applies: a cap, the deadline, no runtime, a signal. */
const verdict = (
  seen: Seen,
  code: number | null,
  signal: NodeJS.Signals | null
): { exit: number; failed?: Failure } => {
  // V8 aborts on its heap limit itself; its exit is the cap's, whatever code or signal it died with.
  const over = seen.breach ?? (seen.heapExhausted && code !== 0 ? heapBreach(seen.memoryBytes) : undefined)
  const failed =
    over !== undefined
      ? overCap(over)
      : seen.timedOut
        ? failure(
            "SCRIPT_TIMEOUT",
            `The script ran longer than ${seen.timeoutMs} ms and was stopped. Make it do less work per run, or split it.`,
            { timeoutMs: seen.timeoutMs }
          )
        : seen.spawnError !== undefined
          ? failure(
              "DENO_UNAVAILABLE",
              `pedelec-deno cannot run scripts here: its Deno runtime did not start (${seen.spawnError}). Report this to the user; do not run the script with node, bun or another deno.`,
              { reason: seen.spawnError }
            )
          : undefined
  if (failed !== undefined) return { exit: failed.exit, failed }
  if (code !== null) return { exit: code }
  const exit = 128 + signalNumber(signal ?? "SIGKILL")
  const stopped = failure(
    "SCRIPT_FAILED",
    `The script was stopped by ${signal} (exit code ${exit}); it may have run out of memory. Read its stderr and fix it.`,
    { exitCode: exit, signal: signal ?? "unknown" }
  )
  return { exit, failed: stopped }
}

const NO_STREAM = Promise.resolve({ endsLine: true, heapExhausted: false })

/** Runs the copy; `onStart` gets a stopper for SIGINT/SIGTERM (kills the script's tree and waits until it is gone). */
export const execute = (prepared: Prepared, io: Io, onStart?: (stop: () => void) => void): Promise<Finished> =>
  new Promise((resolve) => {
    const { timeoutMs, outputBytes, memoryBytes, threads } = prepared.policy
    const child = start(prepared.run, io.stdin)
    onStart?.(() => {
      if (child.pid !== undefined) killTree(child.pid)
      killGroup(child)
    })
    let breach: Breach | undefined
    const onBreach = (found: Breach) => {
      breach = found
      killGroup(child)
    }
    const stopWatching =
      child.pid === undefined ? () => undefined : watch(child.pid, { memoryBytes, threads }, onBreach)
    let timedOut = false
    let spawnError: string | undefined
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child)
    }, timeoutMs)
    const out = child.stdout ? pump(child.stdout, io.stdout, outputBytes, "stdout") : NO_STREAM
    const err = child.stderr ? pump(child.stderr, io.stderr, outputBytes, "stderr") : NO_STREAM
    child.once("error", (error) => {
      spawnError = (error as NodeJS.ErrnoException).code ?? error.message
    })
    child.once("close", async (code, signal) => {
      clearTimeout(timer)
      stopWatching()
      const [{ endsLine }, { heapExhausted }] = await Promise.all([out, err])
      const seen = { timeoutMs, memoryBytes, breach, heapExhausted, timedOut, spawnError }
      const { exit, failed } = verdict(seen, code, signal)
      resolve({ exit, stdoutEndsLine: endsLine, ...(failed === undefined ? {} : { failure: failed }) })
    })
  })
