import {
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  utimes,
  writeFile
} from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId, TurnId } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { EventLog, LOG_RETENTION_MS } from "../src/EventLog.ts"
import { mintSessionId } from "../src/Mint.ts"

const tempHome = Effect.acquireRelease(
  Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-log-")))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

const logLayer = (home: string) =>
  EventLog.layer.pipe(Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer)))

const withLog = <A, E>(body: (home: string) => Effect.Effect<A, E, EventLog>) =>
  Effect.gen(function* () {
    const home = yield* tempHome
    return yield* body(home).pipe(Effect.provide(logLayer(home)))
  })

const io = <A>(f: () => Promise<A>) => Effect.promise(f)
const turnId = "turn-0001" as TurnId

const chat = (sessionId: SessionId, seq: number, text = `message ${seq}`): SessionEvent => ({
  type: "chat",
  sessionId,
  seq,
  at: 1_700_000_000_000 + seq,
  turnId,
  text
})

const logFile = (home: string, sessionId: SessionId) => path.join(home, "logs", `${sessionId}.jsonl`)

/** Open descriptors of this process pointing at `file` (Linux only; elsewhere the check is skipped). */
const openDescriptors = async (file: string): Promise<number | undefined> => {
  const fds = await readdir("/proc/self/fd").catch(() => undefined)
  if (fds === undefined) return undefined
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")))
  return targets.filter((target) => target === file).length
}

describe("EventLog", () => {
  it.effect("1,000 appends read back in order; readAfter returns only seq > afterSeq", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const sessionId = mintSessionId()
        for (let seq = 1; seq <= 1_000; seq++) yield* log.append([chat(sessionId, seq)])
        const all = yield* log.readAfter(sessionId, 0)
        assert.strictEqual(all.length, 1_000)
        assert.deepStrictEqual(
          all.map((event) => event.seq),
          Array.from({ length: 1_000 }, (_, i) => i + 1)
        )
        assert.deepStrictEqual(all[41], chat(sessionId, 42))
        const tail = yield* log.readAfter(sessionId, 990)
        assert.deepStrictEqual(
          tail.map((event) => event.seq),
          [991, 992, 993, 994, 995, 996, 997, 998, 999, 1000]
        )
        assert.deepStrictEqual(yield* log.readAfter(sessionId, 1_000), [])
        const lines = (yield* io(() => readFile(logFile(home, sessionId), "utf8"))).split("\n")
        assert.strictEqual(lines.length, 1_001)
        assert.strictEqual(lines.at(-1), "")
      })
    )
  )

  it.effect("events published together are one batch: their lines in order, read back as appended one by one", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const sessionId = mintSessionId()
        yield* log.append([chat(sessionId, 1)])
        yield* log.append([chat(sessionId, 2), chat(sessionId, 3, "x".repeat(100_000)), chat(sessionId, 4)])
        yield* log.append([])
        assert.deepStrictEqual(
          yield* log.readAfter(sessionId, 0),
          [1, 2, 3, 4].map((seq) => chat(sessionId, seq, seq === 3 ? "x".repeat(100_000) : `message ${seq}`))
        )
        assert.strictEqual((yield* io(() => readFile(logFile(home, sessionId), "utf8"))).split("\n").length, 5)
        // Another session's event in the batch would land in this session's log: a programming error, refused.
        const mixed = yield* Effect.exit(log.append([chat(sessionId, 5), chat(mintSessionId(), 1)]))
        assert.isTrue(mixed._tag === "Failure")
        assert.strictEqual((yield* log.readAfter(sessionId, 4)).length, 0)
      })
    )
  )

  it.effect(
    "a line written off the event loop, with other sessions' appends meanwhile, reads back whole and in order",
    () =>
      withLog((home) =>
        Effect.gen(function* () {
          const log = yield* EventLog
          const [big, small] = [mintSessionId(), mintSessionId()]
          const text = "€".repeat(4_000_000)
          yield* Effect.all(
            [
              log.append([chat(big, 1), chat(big, 2, text)]),
              Effect.forEach([1, 2, 3], (seq) => log.append([chat(small, seq)])),
              log.append([chat(big, 3)])
            ],
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(yield* log.readAfter(big, 0), [chat(big, 1), chat(big, 2, text), chat(big, 3)])
          assert.deepStrictEqual(
            yield* log.readAfter(small, 0),
            [1, 2, 3].map((seq) => chat(small, seq))
          )
          assert.strictEqual((yield* io(() => readFile(logFile(home, big), "utf8"))).split("\n").length, 4)
        })
      )
  )

  it.effect("logs/ is 0700 and each log 0600; an unknown session reads as empty", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const sessionId = mintSessionId()
        assert.deepStrictEqual(yield* log.scan(sessionId, 0), { events: [], skipped: 0, tornTail: false })
        yield* log.append([chat(sessionId, 1)])
        assert.strictEqual((yield* io(() => stat(path.join(home, "logs")))).mode & 0o777, 0o700)
        assert.strictEqual((yield* io(() => stat(logFile(home, sessionId)))).mode & 0o777, 0o600)
      })
    )
  )

  it.effect("a log the disk will not give back is STORAGE_UNAVAILABLE, not a defect; other sessions still read", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const [unreadable, readable] = [mintSessionId(), mintSessionId()]
        yield* log.append([chat(readable, 1)])
        // A folder where the log should be (EISDIR): what a file the disk refuses to read looks like to a reader.
        yield* io(() => mkdir(logFile(home, unreadable)))
        const errors = [yield* Effect.flip(log.readAfter(unreadable, 0)), yield* Effect.flip(log.scan(unreadable, 0))]
        for (const error of errors) {
          assert.strictEqual(error.code, "STORAGE_UNAVAILABLE")
          assert.strictEqual(error.details?.errno, "EISDIR")
          assert.include(String(error.details?.reason), "reading the event log")
        }
        assert.deepStrictEqual(
          (yield* log.readAfter(readable, 0)).map((event) => event.seq),
          [1]
        )
      })
    )
  )

  it.effect("concurrent appends from many fibers never interleave lines", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const sessionId = mintSessionId()
        const other = mintSessionId()
        // Large lines (≈ 200 KB) so a single write is likely to be split by the OS if nothing serialized them.
        const big = "x".repeat(200_000)
        const seqs = Array.from({ length: 200 }, (_, i) => i + 1)
        yield* Effect.forEach(
          seqs,
          (seq) =>
            Effect.andThen(
              log.append([chat(sessionId, seq, `${seq}:${big}`)]),
              log.append([chat(other, seq, `${seq}`)])
            ),
          { concurrency: "unbounded", discard: true }
        )
        const text = yield* io(() => readFile(logFile(home, sessionId), "utf8"))
        const lines = text.split("\n").filter((line) => line !== "")
        assert.strictEqual(lines.length, 200)
        const parsed = lines.map((line) => JSON.parse(line) as { seq: number; text: string })
        for (const event of parsed) assert.strictEqual(event.text, `${event.seq}:${big}`)
        assert.deepStrictEqual(
          parsed.map((event) => event.seq).sort((a, b) => a - b),
          seqs
        )
        const scan = yield* log.scan(other, 0)
        assert.strictEqual(scan.skipped, 0)
        assert.strictEqual(scan.events.length, 200)
      })
    )
  )

  it.effect("a torn last line is ignored; the next append starts on a fresh line; bad lines are counted", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const sessionId = mintSessionId()
      const file = logFile(home, sessionId)
      yield* Effect.gen(function* () {
        const log = yield* EventLog
        for (let seq = 1; seq <= 3; seq++) yield* log.append([chat(sessionId, seq)])
      }).pipe(Effect.provide(logLayer(home)))
      // A crash mid-write: half a line, no newline.
      yield* io(() => appendFile(file, JSON.stringify(chat(sessionId, 4)).slice(0, 30)))
      yield* Effect.gen(function* () {
        const log = yield* EventLog
        assert.deepStrictEqual(yield* log.scan(sessionId, 0), {
          events: [1, 2, 3].map((seq) => chat(sessionId, seq)),
          skipped: 0,
          tornTail: true
        })
        // Core restarted: the next event must survive the torn line before it.
        yield* log.append([chat(sessionId, 4)])
        const scan = yield* log.scan(sessionId, 0)
        assert.deepStrictEqual(
          scan.events.map((event) => event.seq),
          [1, 2, 3, 4]
        )
        assert.strictEqual(scan.skipped, 1)
        assert.isFalse(scan.tornTail)
      }).pipe(Effect.provide(logLayer(home)))
    })
  )

  it.effect("garbage, foreign-session, invalid and duplicate lines are skipped and counted, never returned", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const sessionId = mintSessionId()
        yield* log.append([chat(sessionId, 1)])
        yield* log.close(sessionId)
        const junk = [
          "not json",
          JSON.stringify(chat(mintSessionId(), 2)),
          JSON.stringify({ ...chat(sessionId, 2), type: "unknown_type" }),
          JSON.stringify(chat(sessionId, 1)),
          ""
        ]
        yield* io(() => appendFile(logFile(home, sessionId), `${junk.join("\n")}\n`))
        yield* log.append([chat(sessionId, 2)])
        const scan = yield* log.scan(sessionId, 0)
        assert.deepStrictEqual(
          scan.events.map((event) => event.seq),
          [1, 2]
        )
        assert.strictEqual(scan.skipped, 4)
        assert.strictEqual((yield* log.readAfter(sessionId, 0)).length, 2)
      })
    )
  )

  it.live("prune deletes logs last written before the retention window and keeps the rest", () =>
    withLog((home) =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const [old, fresh] = [mintSessionId(), mintSessionId()]
        yield* log.append([chat(old, 1)])
        yield* log.append([chat(fresh, 1)])
        const eightDaysAgo = (Date.now() - 8 * 24 * 60 * 60 * 1000) / 1000
        yield* io(() => utimes(logFile(home, old), eightDaysAgo, eightDaysAgo))
        yield* io(() => writeFile(path.join(home, "logs", "README.txt"), "not a log"))
        yield* io(() => utimes(path.join(home, "logs", "README.txt"), eightDaysAgo, eightDaysAgo))
        assert.strictEqual(LOG_RETENTION_MS, 7 * 24 * 60 * 60 * 1000)
        assert.deepStrictEqual(yield* log.prune({ olderThanMs: LOG_RETENTION_MS }), [old])
        assert.deepStrictEqual(
          (yield* io(() => readdir(path.join(home, "logs")))).sort(),
          ["README.txt", `${fresh}.jsonl`].sort()
        )
        assert.deepStrictEqual(yield* log.readAfter(old, 0), [])
        // A pruned session that speaks again starts a new log.
        yield* log.append([chat(old, 2)])
        assert.strictEqual((yield* log.readAfter(old, 0)).length, 1)
      })
    )
  )

  it.effect("close releases the handle, remove deletes the log, and the layer's scope closes every handle", () =>
    Effect.gen(function* () {
      const home = yield* tempHome
      const [a, b] = [mintSessionId(), mintSessionId()]
      yield* Effect.gen(function* () {
        const log = yield* EventLog
        yield* log.append([chat(a, 1)])
        yield* log.append([chat(b, 1)])
        const openA = yield* io(() => openDescriptors(logFile(home, a)))
        if (openA !== undefined) assert.strictEqual(openA, 1)
        yield* log.close(a)
        const closedA = yield* io(() => openDescriptors(logFile(home, a)))
        if (closedA !== undefined) assert.strictEqual(closedA, 0)
        yield* log.append([chat(a, 2)])
        assert.strictEqual((yield* log.readAfter(a, 0)).length, 2)
        yield* log.remove(a)
        yield* log.remove(a)
        assert.deepStrictEqual(yield* log.readAfter(a, 0), [])
      }).pipe(Effect.provide(logLayer(home)))
      const afterLayer = yield* io(() => openDescriptors(logFile(home, b)))
      if (afterLayer !== undefined) assert.strictEqual(afterLayer, 0)
    })
  )
})
