// SessionStore's reads on a disk that fails them: a record the disk will not give back (EIO injected through
// support/FaultyReads; a directory in its place, EISDIR, on the real disk) is a coded STORAGE_UNAVAILABLE from load,
// never a defect, and is left where it is (it may read once the disk recovers); list skips it and still returns
// every other record, so one unreadable file never takes the start-up sweep down.
import { mkdir, mkdtemp, readdir, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "../src/CorePaths.ts"
import { mintSessionId } from "../src/Mint.ts"
import { type SessionRecord, SessionStore } from "../src/SessionStore.ts"
import { codedFailure, EIO, faultyReads, type ReadFault } from "./support/FaultyReads.ts"

const withStore = <A, E>(body: (sessionsDir: string) => Effect.Effect<A, E, SessionStore>, fault?: ReadFault) =>
  Effect.gen(function* () {
    const home = yield* Effect.acquireRelease(
      Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-session-reads-")))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const layer = SessionStore.layer.pipe(
      Layer.provide(faultyReads(fault)),
      Layer.provide(Layer.merge(CorePaths.layerFor(home), NodeServices.layer))
    )
    return yield* body(path.join(home, "sessions")).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

const recordFor = (sessionId: SessionId): SessionRecord => ({
  sessionId,
  origin: "https://app.example.com" as Origin,
  provider: "claude",
  model: null,
  effortLevel: "medium",
  effortProfile: { argv: [], env: {} },
  workspace: { path: `/srv/pedelec/workspaces/${sessionId}`, managed: true },
  autoEndOnDisconnect: true,
  skills: { guidance: "", tools: [] },
  createdAt: 1_700_000_000_000,
  lastActiveAt: 1_700_000_000_000,
  state: "active",
  promptInjected: false,
  lastSeq: 0,
  processes: []
})

const assertUnavailable = (error: { code: string; details?: Readonly<Record<string, unknown>> }, errno: string) => {
  assert.strictEqual(error.code, "STORAGE_UNAVAILABLE")
  assert.strictEqual(error.details?.errno, errno)
  assert.include(String(error.details?.reason), "reading a session record")
}

// Ids sort as they are listed: the unreadable one first, so list meets it before the readable one.
const twoIds = () => [mintSessionId(), mintSessionId()].sort() as [SessionId, SessionId]

describe("SessionStore reads on a failing disk", () => {
  const [unreadable, readable] = twoIds()

  it.effect("a record read failing EIO: load is STORAGE_UNAVAILABLE, the file stays, list returns the rest", () =>
    withStore(
      (dir) =>
        Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.save(recordFor(unreadable))
          yield* store.save(recordFor(readable))
          assertUnavailable(yield* codedFailure(store.load(unreadable)), "EIO")
          const update = store.update(unreadable, (record) => ({ ...record, lastSeq: 1 }))
          assertUnavailable(yield* codedFailure(update), "EIO")
          const listed = yield* store.list
          assert.deepStrictEqual(
            listed.map((record) => record.sessionId),
            [readable]
          )
          const names = (yield* Effect.promise(() => readdir(dir))).sort()
          assert.deepStrictEqual(names, [`${unreadable}.json`, `${readable}.json`].sort())
        }),
      EIO(`${unreadable}.json`)
    )
  )

  it.effect("a directory where a record should be (EISDIR): load is STORAGE_UNAVAILABLE, list returns the rest", () =>
    withStore((dir) =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.save(recordFor(readable))
        yield* Effect.promise(() => mkdir(path.join(dir, `${unreadable}.json`)))
        assertUnavailable(yield* codedFailure(store.load(unreadable)), "EISDIR")
        const listed = yield* store.list
        assert.deepStrictEqual(
          listed.map((record) => record.sessionId),
          [readable]
        )
      })
    )
  )
})
