/**
 * The row "full disk": a real Core on a 2 MiB tmpfs PEDELEC_HOME (test-kit's FullDisk, in bubblewrap), the tmpfs
 * filled to its last page, and rounds of mixed operations on it: creates, texts, turns whose events stop fitting
 * mid-way, settings sets (on the full disk and while it fills, with reads racing them), ends, and a Core restart
 * with the ended and the surviving session resumed after it. Each operation must answer as a user may be told
 * (success, or a contracts code: never a defect or no answer), an ended session never comes back, every session
 * record and settings.json stays whole after each round, and Core is alive at the end. Core-daemon's disk-full.test
 * pins each behaviour once; this row counts them over many operations.
 */

import type { SessionId } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import type { Settings } from "@pedelec/contracts/Settings"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import { terminate } from "@pedelec/test-kit/core/CoreProcess"
import { canSandbox, type FullDisk, startFullDisk } from "@pedelec/test-kit/core/FullDisk"
import { completionOf, desktopClient, hostClient, ORIGIN, openSession } from "@pedelec/test-kit/core/Harness"
import type { FaultRow } from "@pedelec/test-kit/faults/Rows"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, test } from "vitest"
import { contractsCodeOf, outcomesLine, record, tallier, type Verdict } from "./support/Probe.ts"

const ROUNDS = 3
/** Round by round: how Core is stopped before the restart. */
const SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGKILL", "SIGTERM"]
const SIGKILL_ROUNDS = Array.from({ length: ROUNDS }, (_, i) => SIGNALS[i % SIGNALS.length]).filter(
  (signal) => signal === "SIGKILL"
).length
const MINIMUM = 20
/** How long a restarted Core gets to announce itself while the disk is still full. */
const FULL_START_WAIT_MS = 1_500
/** After a short sleep the disk is full again: 120 messages of 1 KiB cannot all be logged. */
const FILLING_TURN = script("sleep 300", ...Array.from({ length: 120 }, (_, i) => `say ${String(i).padEnd(1024, "x")}`))

/** What an operation may answer: success, a contracts code, or either. */
type Expect = "ok" | "coded" | "either"

/** Counts each operation and what it answered; the tally's outcomes are the row's. */
const bookkeeping = () => {
  const { add, tally } = tallier()
  const codes: Record<string, number> = {}
  let index = 0
  const observe = (kind: string, exit: Exit.Exit<unknown, unknown>, expected: Expect): Verdict => {
    if (Exit.isSuccess(exit)) return { outcome: "ok", ok: expected !== "coded", note: `${kind} succeeded` }
    const failure = Cause.findErrorOption(exit.cause)
    const code = failure._tag === "Some" ? contractsCodeOf(failure.value) : undefined
    if (code === undefined) return { outcome: "defect", ok: false, note: `${kind}: ${Cause.pretty(exit.cause)}` }
    codes[code] = (codes[code] ?? 0) + 1
    return { outcome: "coded", ok: expected !== "ok", note: `${kind} → ${code}` }
  }
  /** Runs one operation and tallies what it answered. */
  const attempt = <A, E>(kind: string, effect: Effect.Effect<A, E>, expected: Expect) =>
    Effect.exit(effect).pipe(
      Effect.tap((exit) => Effect.sync(() => add(index++, observe(kind, exit, expected)))),
      Effect.flatMap((exit) => (Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.succeed(undefined)))
    )
  /** Tallies a check that is not a call (a restart, a turn's ending). */
  const verdict = (verdict: Verdict) => add(index++, verdict)
  return { attempt, verdict, codes, tally }
}

type Book = ReturnType<typeof bookkeeping>

const settingsWith = (current: Settings, timeoutMs: number): Settings => ({
  ...current,
  ollama: { ...current.ollama, timeoutMs }
})

/** A turn sent while the disk has room, the disk filled under it: it ends, completed or failed with a code. */
const fillingTurn = (book: Book, disk: FullDisk, host: HostClient) =>
  Effect.gen(function* () {
    const { sessionId, events } = yield* openSession(host)
    const sent = yield* host["session.send_text"]({ origin: ORIGIN, sessionId, text: FILLING_TURN })
    yield* Effect.promise(() => disk.fill())
    const done = yield* Effect.exit(events.next(completionOf(sent.turnId), 20_000))
    const code = Exit.isSuccess(done) ? done.value.error?.code : undefined
    if (code !== undefined) book.codes[code] = (book.codes[code] ?? 0) + 1
    book.verdict(
      Exit.isSuccess(done) && (done.value.reason === "completed" || code !== undefined)
        ? { outcome: done.value.reason === "completed" ? "ok" : "coded", ok: true }
        : { outcome: "no completion", ok: false, note: `turn ${sent.turnId} filled mid-way` }
    )
    return sessionId
  })

/** Settings sets with room, the disk filling meanwhile, reads racing them: each set lands whole or is refused. */
const setsWhileFilling = (book: Book, disk: FullDisk, info: CoreRuntimeInfo, host: HostClient, round: number) =>
  Effect.gen(function* () {
    const desktop = yield* desktopClient(info)
    const { secretsSet: _, ...current } = yield* desktop["desktop.settings.get"]()
    yield* Effect.promise(() => disk.unfill())
    const sets = Array.from({ length: 3 }, (_, i) =>
      book.attempt(
        "settings.set while filling",
        desktop["desktop.settings.set"]({ settings: settingsWith(current, 10_000 + round * 10 + i) }),
        "either"
      )
    )
    const reads = Array.from({ length: 3 }, () => book.attempt("settings.get racing", host["settings.get"](), "ok"))
    const filling = Effect.promise(() => disk.fill())
    yield* Effect.all([filling, ...sets, ...reads], { concurrency: "unbounded", discard: true })
    // A set refused meanwhile removed its temp file, freeing pages: fill them, then a set is refused and the
    // reads racing it answer the settings it left whole.
    yield* Effect.promise(() => disk.fill())
    const full = book.attempt(
      "settings.set on a full disk",
      desktop["desktop.settings.set"]({ settings: settingsWith(current, 20_000 + round) }),
      "coded"
    )
    const racing = Array.from({ length: 2 }, () => book.attempt("settings.get racing", host["settings.get"](), "ok"))
    yield* Effect.all([full, ...racing], { concurrency: "unbounded", discard: true })
  })

/** One round on one Core: sessions opened with room, then the full disk's operations. */
const round = (book: Book, disk: FullDisk, info: CoreRuntimeInfo, index: number) =>
  Effect.gen(function* () {
    const host = yield* hostClient(info)
    const kept = (yield* openSession(host)).sessionId
    const ended = (yield* openSession(host)).sessionId
    yield* Effect.promise(() => disk.fill())
    yield* book.attempt(
      "create on a full disk",
      host["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } }),
      "coded"
    )
    const text = host["session.send_text"]({ origin: ORIGIN, sessionId: kept, text: script("say hi") })
    yield* book.attempt("send_text on a full disk", text, "coded")
    yield* book.attempt("settings.get on a full disk", host["settings.get"](), "ok")
    yield* Effect.promise(() => disk.unfill())
    const filled = yield* fillingTurn(book, disk, host)
    yield* setsWhileFilling(book, disk, info, host, index)
    yield* book.attempt("end on a full disk", host["session.end"]({ origin: ORIGIN, sessionId: ended }), "ok")
    yield* book.attempt("end on a full disk", host["session.end"]({ origin: ORIGIN, sessionId: filled }), "ok")
    yield* book.attempt("list on a full disk", host["session.list"]({ origin: ORIGIN }), "ok")
    return { kept, ended }
  }).pipe(Effect.scoped)

/**
 * Core stopped on the full disk (SIGTERM, which ends every live session, or SIGKILL, which keeps them) and started
 * again by the sandbox's loop. A Core that cannot write its announcement (run/core.json) exits and the loop retries:
 * it must be back as soon as there is room; then, on the full disk again, the ended session stays ended and the kept
 * one answers.
 */
const afterRestart = (
  book: Book,
  disk: FullDisk,
  sessions: { kept: SessionId; ended: SessionId },
  signal: NodeJS.Signals
) =>
  Effect.gen(function* () {
    const old = yield* Effect.promise(() => disk.core())
    yield* Effect.promise(() => terminate(old.pid, 10_000, signal))
    const onFull = yield* Effect.promise(() => disk.core(old.pid, FULL_START_WAIT_MS).catch(() => undefined))
    yield* Effect.promise(() => disk.unfill())
    const restarted = yield* Effect.exit(Effect.promise(() => disk.core(old.pid, 10_000)))
    book.verdict(
      Exit.isSuccess(restarted)
        ? { outcome: "ok", ok: true }
        : { outcome: "no Core after restart", ok: false, note: Cause.pretty(restarted.cause) }
    )
    const info = Exit.isSuccess(restarted) ? restarted.value : yield* Effect.promise(() => disk.core())
    yield* Effect.promise(() => disk.fill())
    const host = yield* hostClient(info)
    const resume = (sessionId: SessionId) => host["session.resume"]({ origin: ORIGIN, sessionId })
    yield* book.attempt("resume an ended session", resume(sessions.ended), "coded")
    const kept = yield* book.attempt("resume a kept session", resume(sessions.kept), "either")
    return { info, startedOnFull: onFull !== undefined, keptBack: kept !== undefined && signal === "SIGKILL" }
  }).pipe(Effect.scoped)

/** Settings say scripted before the first round: sessions need no provider on the machine. */
const configure = (info: CoreRuntimeInfo) =>
  Effect.gen(function* () {
    const desktop = yield* desktopClient(info)
    const { secretsSet: _, ...settings } = yield* desktop["desktop.settings.get"]()
    yield* desktop["desktop.settings.set"]({ settings: { ...settings, defaultProvider: "scripted" } })
  }).pipe(Effect.scoped)

/** Whether the Core serving the home answers a read, once the disk has room again. */
const answers = (info: CoreRuntimeInfo) =>
  Effect.scoped(Effect.flatMap(hostClient(info), (host) => host["settings.get"]())).pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )

const probe = (disk: FullDisk) =>
  Effect.gen(function* () {
    const book = bookkeeping()
    let info = yield* Effect.promise(() => disk.core())
    yield* configure(info)
    let whole = 0
    let startsOnFull = 0
    let keptBack = 0
    const broken: Array<string> = []
    for (let i = 0; i < ROUNDS; i++) {
      const sessions = yield* round(book, disk, info, i)
      const restarted = yield* afterRestart(book, disk, sessions, SIGNALS[i % SIGNALS.length]!)
      info = restarted.info
      if (restarted.startedOnFull) startsOnFull++
      if (restarted.keptBack) keptBack++
      yield* Effect.promise(() => disk.unfill())
      const files = yield* Effect.promise(() => disk.wholeFiles())
      whole += files.records + (files.settings ? 1 : 0)
      broken.push(...files.broken, ...(files.settings ? [] : ["settings.json missing"]))
    }
    const alive = yield* answers(info)
    return { tally: book.tally(), codes: book.codes, whole, broken, alive, startsOnFull, keptBack }
  })

const hasBwrap = await canSandbox()

type Result = Effect.Success<ReturnType<typeof probe>>

const rowOf = (result: Result, wallMs: number): FaultRow => {
  const { tally, codes, whole, broken, alive, startsOnFull, keptBack } = result
  const codesLine = Object.entries(codes)
    .map(([code, count]) => `${code}×${count}`)
    .join(" ")
  return {
    probe: "full disk",
    trials: tally.trials,
    expected: `≥ ${MINIMUM} ops, coded errors, settings and session files never truncated or corrupted, Core alive`,
    observed: `${outcomesLine(tally)}; ${broken.length} files broken; Core ${alive ? "alive" : "gone"}`,
    pass: tally.bad === 0 && tally.trials >= MINIMUM && broken.length === 0 && alive,
    figures: {
      operations: tally.trials,
      codes: codesLine || "none",
      filesWhole: whole,
      broken: broken.length,
      coreAlive: alive ? "yes" : "no",
      keptResumedAfterSigkill: `${keptBack}/${SIGKILL_ROUNDS}`,
      restartsOnFullDisk: `${startsOnFull}/${ROUNDS} announced before room was freed`,
      wallMs
    }
  }
}

describe.runIf(hasBwrap)("a full disk: mixed operations on a filled 2 MiB tmpfs home", () => {
  test("every operation answers coded or ok, files stay whole, Core stays alive", async () => {
    const started = Date.now()
    const disk = await startFullDisk({ env: { PEDELEC_ENABLE_SCRIPTED: "1" } })
    const result = await Effect.runPromise(probe(disk)).finally(() => disk.stop())
    const written = await record(rowOf(result, Date.now() - started), [...result.tally.offenders, ...result.broken])
    expect(result.tally.offenders).toEqual([])
    expect(result.broken).toEqual([])
    expect(written.pass).toBe(true)
  }, 120_000)
})
