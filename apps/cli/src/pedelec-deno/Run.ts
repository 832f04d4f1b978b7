/**
 * Run — runs a prepared script: its stdout and stderr passed through as they come, each cut after the policy's cap
 * (with a marker), its process group killed at the deadline (SCRIPT_TIMEOUT), its exit code handed back. A script
 * that dies by a signal pedelec-deno did not send is SCRIPT_FAILED.
 */

import { constants } from "node:os"
import type { Readable, Writable } from "node:stream"
import { type Failure, failure } from "./Failure.ts"
import { killGroup, start } from "./Processes.ts"
import type { Prepared } from "./Script.ts"

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

/** Pipes `source` to `sink` until it ends, passing at most `cap` bytes, then one marker line, then nothing. */
const pump = (source: Readable, sink: Writable, cap: number, name: string) =>
  new Promise<{ readonly endsLine: boolean }>((resolve) => {
    let passed = 0
    let cut = false
    let endsLine = true
    const write = (chunk: Buffer) => {
      if (chunk.length === 0) return
      endsLine = chunk[chunk.length - 1] === 0x0a
      if (!sink.write(chunk)) {
        source.pause()
        sink.once("drain", () => source.resume())
      }
    }
    source.on("data", (chunk: Buffer) => {
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
    source.once("close", () => resolve({ endsLine }))
  })

const signalNumber = (signal: NodeJS.Signals) => (constants.signals as Record<string, number>)[signal] ?? 0

/** Runs the copy; `onStart` gets a stopper for SIGINT/SIGTERM (kills the script's group). */
export const execute = (prepared: Prepared, io: Io, onStart?: (stop: () => void) => void): Promise<Finished> =>
  new Promise((resolve) => {
    const { timeoutMs, outputBytes } = prepared.policy
    const child = start(prepared.run, io.stdin)
    onStart?.(() => killGroup(child))
    let timedOut = false
    let spawnError: string | undefined
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child)
    }, timeoutMs)
    const out = child.stdout
      ? pump(child.stdout, io.stdout, outputBytes, "stdout")
      : Promise.resolve({ endsLine: true })
    const err = child.stderr
      ? pump(child.stderr, io.stderr, outputBytes, "stderr")
      : Promise.resolve({ endsLine: true })
    child.once("error", (error) => {
      spawnError = (error as NodeJS.ErrnoException).code ?? error.message
    })
    child.once("close", async (code, signal) => {
      clearTimeout(timer)
      const [{ endsLine }] = await Promise.all([out, err])
      const finish = (exit: number, failed?: Failure) =>
        resolve({ exit, stdoutEndsLine: endsLine, ...(failed === undefined ? {} : { failure: failed }) })
      if (timedOut) {
        const failed = failure(
          "SCRIPT_TIMEOUT",
          `The script ran longer than ${timeoutMs} ms and was stopped. Make it do less work per run, or split it.`,
          { timeoutMs }
        )
        return finish(failed.exit, failed)
      }
      if (spawnError !== undefined) {
        const failed = failure(
          "DENO_UNAVAILABLE",
          `pedelec-deno cannot run scripts here: its Deno runtime did not start (${spawnError}). Report this to the user; do not run the script with node, bun or another deno.`,
          { reason: spawnError }
        )
        return finish(failed.exit, failed)
      }
      if (code !== null) return finish(code)
      const exit = 128 + signalNumber(signal ?? "SIGKILL")
      const failed = failure(
        "SCRIPT_FAILED",
        `The script was stopped by ${signal} (exit code ${exit}); it may have run out of memory. Read its stderr and fix it.`,
        { exitCode: exit, signal: signal ?? "unknown" }
      )
      finish(exit, failed)
    })
  })
