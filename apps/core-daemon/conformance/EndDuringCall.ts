// The conformance scenario for ending a session while the agent waits on a page tool call (issue 14): what the
// extension does on end() or a revoke. SPEC says revoke ends at once, so `ended` must come within 1 s of the request,
// with every process of the session's tree (the CLI, its shell, pedelec-cli, their children) gone and none of them
// left as a zombie for PID 1 to reap (a container's PID 1 may never do it). LiveProvider registers it for every
// provider; how a session is opened and how the model is told to call the tool are LiveProvider's.

import { readFile } from "node:fs/promises"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { type Events, isType, ORIGIN, sessionProcesses, waitUntil } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { expect, it } from "vitest"

/** The bound the issue sets: the agents are gone in ~0.4 s, so a second leaves room for a loaded machine. */
export const ENDED_WITHIN_MS = 1_000
/**
 * How long a zombie of the tree may wait after `ended` before it counts as left to PID 1. Release leaves none to it
 * when every parent reaps its killed child; one whose parent had to be killed first (opencode's, once, on a loaded
 * CI box) goes to PID 1, which here reaps within a second or two.
 */
const REAPED_WITHIN_MS = 3_000

export interface EndDuringCallOptions {
  /** The provider's code and CLI name, for the log line and to check the CLI ran. */
  readonly code: string
  readonly processName: string
  readonly turnTimeoutMs: number
  /** Whether pedelec-cli runs in the CLI's shell during the call (pedelec-agent calls tools itself). */
  readonly viaShell: boolean
  /** A fresh session of the provider, in the test's scope. */
  readonly session: Effect.Effect<
    { readonly client: HostClient; readonly sessionId: SessionId; readonly events: Events },
    unknown,
    Scope.Scope
  >
  /** The turn text that makes the model call `wait` with `{}`. */
  readonly waitDirective: (sessionId: SessionId) => string
  readonly live: <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Promise<A>
  /** ENDED_WITHIN_MS unless the provider's tree is known to take longer (its LiveProvider says why). */
  readonly endedWithinMs?: number
}

/** `pid starttime state ppid` from /proc/<pid>/stat, or undefined once the pid is gone. */
const statOf = async (pid: number) => {
  const text = await readFile(`/proc/${pid}/stat`, "latin1").catch(() => undefined)
  if (text === undefined) return undefined
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { pid, state: fields[0]!, ppid: Number(fields[1]), startTime: fields[19]! }
}

/** The recorded processes that still hold their pid (alive, or a zombie nobody reaped yet). */
const stillThere = async (recorded: ReadonlyArray<{ readonly pid: number; readonly startTime: string }>) => {
  const now = await Promise.all(recorded.map((r) => statOf(r.pid)))
  return now.filter((stat, i) => stat !== undefined && stat.startTime === recorded[i]!.startTime)
}

export const itEndsDuringPendingCall = (options: EndDuringCallOptions) =>
  it("end during a pending tool call: ended within 1 s, no process of the session left, no zombie", () =>
    options.live(
      Effect.gen(function* () {
        const { client, sessionId, events } = yield* options.session
        const text = options.waitDirective(sessionId)
        yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
        // Nobody answers the call: it stays pending until the session ends.
        yield* events.next(isType("tool_call"), options.turnTimeoutMs)
        const running = yield* Effect.promise(() => sessionProcesses(sessionId))
        const argvs = running.map((p) => p.argv.join(" "))
        expect(argvs.some((argv) => argv.includes(options.processName))).toBe(true)
        if (options.viaShell) expect(argvs.some((argv) => argv.includes("tool-call wait"))).toBe(true)
        const recorded = (yield* Effect.promise(() => Promise.all(running.map((p) => statOf(p.pid))))).flatMap(
          (stat) => (stat === undefined ? [] : [stat])
        )
        const startedAt = performance.now()
        yield* client["session.end"]({ origin: ORIGIN, sessionId })
        yield* events.next(isType("ended"), 30_000)
        const tookMs = Math.round(performance.now() - startedAt)
        const atEnded = yield* Effect.promise(() => sessionProcesses(sessionId))
        process.stderr.write(`conformance: ${options.code} end → ended with a pending call: ${tookMs} ms\n`)
        expect(atEnded).toEqual([])
        expect(tookMs).toBeLessThanOrEqual(options.endedWithinMs ?? ENDED_WITHIN_MS)
        // Dead is not enough: a zombie whose parent died first waits for PID 1, which in a container may never reap.
        const left = yield* Effect.promise(() =>
          waitUntil(
            "the session's processes to be reaped",
            () => stillThere(recorded),
            (there) => there.length === 0,
            REAPED_WITHIN_MS
          ).catch(() => stillThere(recorded))
        )
        expect(left).toEqual([])
      })
    ))
