import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { hasCode } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { mintCapability, mintSessionId, mintTurnId } from "../src/Mint.ts"
import { type SessionRecord, SessionStore } from "../src/SessionStore.ts"

/** A store over `home`, as one Core launch has it: a second one over the same home is a restarted Core. */
const storeLayer = (home: string) =>
  SessionStore.layer.pipe(Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer)))

const withStore = <A, E>(body: (sessionsDir: string, home: string) => Effect.Effect<A, E, SessionStore>) =>
  Effect.gen(function* () {
    const home = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-sessions-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    return yield* body(path.join(home, "sessions"), home).pipe(Effect.provide(storeLayer(home)))
  })

/** What a restarted Core reads for `sessionId`. */
const afterRestart = (home: string, sessionId: SessionId) =>
  Effect.gen(function* () {
    return yield* (yield* SessionStore).load(sessionId)
  }).pipe(Effect.provide(storeLayer(home)))

const io = <A>(f: () => Promise<A>) => Effect.promise(f)

const recordFor = (sessionId: SessionId, overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  sessionId,
  origin: "https://app.example.com" as Origin,
  provider: "claude",
  model: null,
  effortLevel: "medium",
  effortProfile: { argv: ["--effort", "medium"], env: { CLAUDE_FLAG: "1" } },
  workspace: { path: `/srv/pedelec/workspaces/${sessionId}`, managed: true },
  autoEndOnDisconnect: true,
  skills: {
    guidance: "Use the tools.",
    tools: [
      {
        name: "echo",
        description: "Echo back",
        argsSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
      }
    ]
  },
  createdAt: 1_700_000_000_000,
  lastActiveAt: 1_700_000_000_000,
  state: "active",
  promptInjected: false,
  lastSeq: 0,
  processes: [{ pid: 4242, pgid: 4242, startTime: "123456" }],
  ...overrides
})

describe("SessionStore", () => {
  it.effect("save/load round-trips; sessions/ is 0700 and records 0600", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        const record = recordFor(sessionId, { providerSessionId: "thread-abc", model: "sonnet" })
        yield* store.save(record)
        assert.deepStrictEqual(yield* store.load(sessionId), record)
        assert.strictEqual((yield* io(() => stat(dir))).mode & 0o777, 0o700)
        assert.strictEqual((yield* io(() => stat(path.join(dir, `${sessionId}.json`)))).mode & 0o777, 0o600)
        const ended = { ...record, state: "ended" as const, endedAt: 1_700_000_100_000, processes: [] }
        yield* store.save(ended)
        assert.deepStrictEqual(yield* store.load(sessionId), ended)
      })
    )
  )

  it.effect("a record never holds a secret: extra fields such as a capability are refused, not written", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        const capability = mintCapability()
        const leaky = { ...recordFor(sessionId), capability } as SessionRecord
        const exit = yield* Effect.exit(store.save(leaky))
        assert.isTrue(Exit.isFailure(exit) && Exit.hasDies(exit))
        const files = yield* io(() => readdir(dir).catch((): Array<string> => []))
        for (const name of files) assert.notInclude(yield* io(() => readFile(path.join(dir, name), "utf8")), capability)
        assert.isFalse(files.includes(`${sessionId}.json`))
      })
    )
  )

  it.effect("a missing record is SESSION_NOT_FOUND", () =>
    withStore(() =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        const error = yield* Effect.flip(store.load(sessionId))
        assert.isTrue(hasCode(error, "SESSION_NOT_FOUND"))
        assert.strictEqual(error.details?.sessionId, sessionId)
        const updateError = yield* Effect.flip(store.update(sessionId, (r) => r))
        assert.isTrue(hasCode(updateError, "SESSION_NOT_FOUND"))
      })
    )
  )

  it.effect("a corrupt record reads as unknown and is moved aside as <id>.json.corrupt", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const [bad, wrongShape, misplaced, good] = [mintSessionId(), mintSessionId(), mintSessionId(), mintSessionId()]
        yield* store.save(recordFor(good))
        yield* io(() => writeFile(path.join(dir, `${bad}.json`), '{"sessionId": "trunc'))
        yield* io(() =>
          writeFile(path.join(dir, `${wrongShape}.json`), JSON.stringify({ ...recordFor(wrongShape), state: "zombie" }))
        )
        // Another session's record under this name is not this session's record.
        yield* io(() => writeFile(path.join(dir, `${misplaced}.json`), JSON.stringify(recordFor(good))))
        for (const id of [bad, wrongShape, misplaced]) {
          assert.isTrue(hasCode(yield* Effect.flip(store.load(id)), "SESSION_NOT_FOUND"))
        }
        const names = (yield* io(() => readdir(dir))).sort()
        const expected = [`${good}.json`, ...[bad, wrongShape, misplaced].map((id) => `${id}.json.corrupt`)].sort()
        assert.deepStrictEqual(names, expected)
        assert.strictEqual(
          yield* io(() => readFile(path.join(dir, `${bad}.json.corrupt`), "utf8")),
          '{"sessionId": "trunc'
        )
      })
    )
  )

  it.effect("list returns every decodable record, ignoring temp leftovers, corrupt files and strangers", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        assert.deepStrictEqual(yield* store.list, [])
        const ids = [mintSessionId(), mintSessionId(), mintSessionId()]
        for (const id of ids) yield* store.save(recordFor(id))
        const broken = mintSessionId()
        yield* io(() => writeFile(path.join(dir, `${broken}.json`), "{"))
        yield* io(() => writeFile(path.join(dir, `${ids[0]}.json.1a2b3c4d5e6f.tmp`), '{"half'))
        yield* io(() => writeFile(path.join(dir, "notes.json"), "{}"))
        const listed = yield* store.list
        assert.deepStrictEqual(
          listed.map((r) => r.sessionId),
          [...ids].sort()
        )
        assert.isTrue((yield* io(() => readdir(dir))).includes(`${broken}.json.corrupt`))
      })
    )
  )

  it.effect("a leftover temp file from a crash mid-write never corrupts the real record", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        const record = recordFor(sessionId)
        yield* store.save(record)
        yield* io(() => writeFile(path.join(dir, `${sessionId}.json.00ff00ff00ff.tmp`), '{"sessionId":"'))
        assert.deepStrictEqual(yield* store.load(sessionId), record)
        yield* store.save({ ...record, lastSeq: 7 })
        assert.strictEqual((yield* store.load(sessionId)).lastSeq, 7)
      })
    )
  )

  it.effect("the folder is made by the first save only, and again when it was removed under a running store", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const first = recordFor(mintSessionId())
        yield* store.save(first)
        yield* io(() => rm(dir, { recursive: true, force: true }))
        const second = recordFor(mintSessionId())
        yield* store.save(second)
        assert.deepStrictEqual(yield* store.load(second.sessionId), second)
        assert.strictEqual((yield* io(() => stat(dir))).mode & 0o777, 0o700)
        // The first record went with the folder; saving it again writes it whole into the new one.
        yield* store.save({ ...first, lastSeq: 3 })
        assert.strictEqual((yield* store.load(first.sessionId)).lastSeq, 3)
      })
    )
  )

  it.effect("a turn's start leaves the record file alone: its turn note is what a restarted Core reads", () =>
    withStore((dir, home) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const record = recordFor(mintSessionId())
        const file = path.join(dir, `${record.sessionId}.json`)
        yield* store.save(record)
        const before = yield* io(() => stat(file))
        const started = { ...record, activeTurn: { turnId: mintTurnId(), kind: "user" as const }, lastSeq: 4 }
        yield* store.save({ ...started, lastActiveAt: record.lastActiveAt + 1 })
        // No rename over the record (a data flush on ext4): the same file, untouched.
        const after = yield* io(() => stat(file))
        assert.strictEqual(after.ino, before.ino)
        assert.strictEqual(after.mtimeMs, before.mtimeMs)
        assert.strictEqual((yield* io(() => stat(`${file}.turn`))).mode & 0o777, 0o600)
        const restarted = yield* afterRestart(home, record.sessionId)
        assert.deepStrictEqual(restarted, { ...started, lastActiveAt: record.lastActiveAt + 1 })
        // The turn completed (in memory), then the next one started: the note says the newest.
        const next = { ...record, activeTurn: { turnId: mintTurnId(), kind: "user" as const }, lastSeq: 9 }
        yield* store.save(next)
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), next)
      })
    )
  )

  it.effect("a first turn's new agent is written in the note too: the record stays, a restarted Core reaps it", () =>
    withStore((dir, home) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const record = recordFor(mintSessionId(), { processes: [] })
        const file = path.join(dir, `${record.sessionId}.json`)
        yield* store.save(record)
        const before = yield* io(() => stat(file))
        const agent = { pid: 5151, pgid: 5151, startTime: "987654" }
        const started = { ...record, activeTurn: { turnId: mintTurnId(), kind: "user" as const }, processes: [agent] }
        yield* store.save(started)
        const after = yield* io(() => stat(file))
        assert.strictEqual(after.ino, before.ino)
        assert.strictEqual(after.mtimeMs, before.mtimeMs)
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), started)
        // The end empties the list with a whole write: the note's processes no longer apply.
        const ended = { ...started, state: "ended" as const, endedAt: record.createdAt + 5, processes: [] }
        const { activeTurn: _, ...settled } = ended
        yield* store.saveEnded(settled)
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), settled)
      })
    )
  )

  it.effect("a field added after the record was made (a warm agent's conversation) leaves later turns to notes", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const record = recordFor(mintSessionId())
        const file = path.join(dir, `${record.sessionId}.json`)
        yield* store.save(record)
        // As Sessions/Turns notes a provider session: spread, so the new key comes last, not in the schema's place.
        const named = { ...record, providerSessionId: "conversation-1", promptInjected: true }
        yield* store.save(named)
        const before = yield* io(() => stat(file))
        yield* store.save({ ...named, activeTurn: { turnId: mintTurnId(), kind: "user" as const }, lastSeq: 7 })
        const after = yield* io(() => stat(file))
        assert.strictEqual(after.ino, before.ino)
        assert.strictEqual(after.mtimeMs, before.mtimeMs)
      })
    )
  )

  it.effect("a turn state no record could hold is refused as a whole record would be, and nothing is written", () =>
    withStore((_dir, home) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const record = recordFor(mintSessionId())
        yield* store.save(record)
        const started = { ...record, activeTurn: { turnId: mintTurnId(), kind: "user" as const }, lastSeq: 2 }
        yield* store.save(started)
        for (const bad of [
          { ...started, lastSeq: -1 },
          { ...started, processes: [{ pid: 0, pgid: 1, startTime: "" }] }
        ]) {
          const exit = yield* Effect.exit(store.save(bad))
          assert.isTrue(Exit.isFailure(exit) && Exit.hasDies(exit))
        }
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), started)
      })
    )
  )

  it.effect("a turn note amends only the record it was written over; a torn one says nothing", () =>
    withStore((dir, home) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const record = recordFor(mintSessionId())
        const file = path.join(dir, `${record.sessionId}.json`)
        yield* store.save(record)
        yield* store.save({ ...record, activeTurn: { turnId: mintTurnId(), kind: "user" } })
        // A whole write (the provider session changed) while the note stays, as after a crash before its removal.
        const note = yield* io(() => readFile(`${file}.turn`, "utf8"))
        const rewritten = { ...record, providerSessionId: "provider-1" }
        yield* store.save(rewritten)
        yield* io(() => writeFile(`${file}.turn`, note))
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), rewritten)
        yield* io(() => writeFile(`${file}.turn`, note.slice(0, 20)))
        assert.deepStrictEqual(yield* afterRestart(home, record.sessionId), rewritten)
      })
    )
  )

  it.effect("concurrent updates serialize: 100 increments give 100", () =>
    withStore(() =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        yield* store.save(recordFor(sessionId))
        yield* Effect.forEach(
          Array.from({ length: 100 }, (_, i) => i),
          () => store.update(sessionId, (record) => ({ ...record, lastSeq: record.lastSeq + 1 })),
          { concurrency: "unbounded", discard: true }
        )
        assert.strictEqual((yield* store.load(sessionId)).lastSeq, 100)
        const changedId = yield* Effect.exit(store.update(sessionId, (r) => ({ ...r, sessionId: mintSessionId() })))
        assert.isTrue(Exit.isFailure(changedId) && Exit.hasDies(changedId))
      })
    )
  )

  it.effect("remove is idempotent", () =>
    withStore(() =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const sessionId = mintSessionId()
        yield* store.save(recordFor(sessionId))
        yield* store.remove(sessionId)
        yield* store.remove(sessionId)
        assert.isTrue(hasCode(yield* Effect.flip(store.load(sessionId)), "SESSION_NOT_FOUND"))
      })
    )
  )
})
