// A full disk under a real Core: the built pedelec-core on a 2 MiB tmpfs as its PEDELEC_HOME, in a bubblewrap
// sandbox that outlives a Core (test-kit's FullDisk owns the sandbox, the filling and the whole-file check). With
// the tmpfs filled to the last page, the test checks: every failure is a coded STORAGE_FULL (never a defect), reads
// still answer, a turn that cannot be written ends `failed` with an error event its subscriber sees, a failed create
// leaves no workspace, a session the page ended never comes back after a restart, settings and session files stay
// whole, and Core stays up.
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { script } from "@pedelec/providers/scripted/Script"
import { canSandbox, type FullDisk, startFullDisk } from "@pedelec/test-kit/core/FullDisk"
import {
  completionOf,
  desktopClient,
  failureCode,
  failureOf,
  hostClient,
  isType,
  ORIGIN,
  openSession
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll } from "vitest"

const SESSIONS_TO_END = 8

const hasBwrap = await canSandbox()

/** The figures each check prints: what a reader of the run compares with the issue's. */
const report = (line: string) => process.stdout.write(`[disk-full] ${line}\n`)

const entries = (dir: string) => readdir(dir).catch(() => [] as Array<string>)

describe.runIf(hasBwrap)("a full disk (2 MiB tmpfs as PEDELEC_HOME)", () => {
  let sandbox: FullDisk | undefined
  let info: CoreRuntimeInfo | undefined
  const current = () => {
    if (sandbox === undefined || info === undefined) throw new Error("the sandbox did not start")
    return { sandbox, info }
  }

  beforeAll(async () => {
    sandbox = await startFullDisk({ env: { PEDELEC_ENABLE_SCRIPTED: "1" } })
    info = await sandbox.core()
    const setScripted = Effect.gen(function* () {
      const desktop = yield* desktopClient(current().info)
      const { secretsSet: _, ...settings } = yield* desktop["desktop.settings.get"]()
      yield* desktop["desktop.settings.set"]({ settings: { ...settings, defaultProvider: "scripted" } })
    })
    await Effect.runPromise(Effect.scoped(setScripted))
  }, 60_000)

  afterAll(async () => {
    await sandbox?.stop()
  }, 30_000)

  it.live(
    "reads answer and writes are STORAGE_FULL, settings.json left as it was",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const before = yield* Effect.promise(() => readFile(path.join(sandbox.view, "settings.json"), "utf8"))
        yield* Effect.promise(() => sandbox.fill())
        const host = yield* hostClient(info)
        const desktop = yield* desktopClient(info)
        const got = yield* host["settings.get"]()
        assert.strictEqual(got.defaultProvider, "scripted")
        const { secretsSet: _, ...settings } = yield* desktop["desktop.settings.get"]()
        const refused = yield* failureOf(
          desktop["desktop.settings.set"]({
            settings: { ...settings, defaultModels: { claude: "sonnet" } }
          })
        )
        report(`full disk: settings.get ok, settings.set → ${refused?.code}`)
        assert.strictEqual(refused?.code, "STORAGE_FULL")
        const after = yield* Effect.promise(() => readFile(path.join(sandbox.view, "settings.json"), "utf8"))
        assert.strictEqual(after, before)
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => current().sandbox.unfill()))),
    60_000
  )

  it.live(
    "a create on a full disk fails STORAGE_FULL and leaves no workspace or record",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const before = yield* Effect.promise(() => entries(path.join(sandbox.view, "workspaces")))
        yield* Effect.promise(() => sandbox.fill())
        const host = yield* hostClient(info)
        const codes: Array<string> = []
        for (let i = 0; i < 5; i++) {
          codes.push(yield* failureCode(host["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })))
        }
        const workspaces = yield* Effect.promise(() => entries(path.join(sandbox.view, "workspaces")))
        report(`full disk: 5 creates → ${codes.join(", ")}; workspaces ${before.length} → ${workspaces.length}`)
        assert.deepStrictEqual(codes, Array(5).fill("STORAGE_FULL"))
        assert.deepStrictEqual(workspaces, before)
        // Core is alive and answers.
        assert.strictEqual((yield* host["settings.get"]()).defaultProvider, "scripted")
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => current().sandbox.unfill()))),
    60_000
  )

  it.live(
    "a turn on a full disk is refused STORAGE_FULL; one whose events stop fitting ends failed with an error event; the session still works",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const host = yield* hostClient(info)
        const { sessionId, events } = yield* openSession(host)
        yield* Effect.promise(() => sandbox.fill())
        // The turn is written down before it is accepted (a Core killed mid-turn still owes it a completion).
        const refused = yield* failureCode(host["session.send_text"]({ origin: ORIGIN, sessionId, text: "hi" }))
        assert.strictEqual(refused, "STORAGE_FULL")
        yield* Effect.promise(() => sandbox.unfill())
        const sent = yield* host["session.send_text"]({
          origin: ORIGIN,
          sessionId,
          // After the sleep the disk is full: 200 messages of 1 KiB cannot all be logged.
          text: script("sleep 800", ...Array.from({ length: 200 }, (_, i) => `say ${String(i).padEnd(1024, "x")}`))
        })
        yield* Effect.promise(() => sandbox.fill())
        const done = yield* events.next(completionOf(sent.turnId))
        const errors = events.seen.filter(isType("error")).filter((event) => event.turnId === sent.turnId)
        report(`full disk: send_text → ${refused}; turn filled mid-way → ${done.reason} (${done.error?.code})`)
        assert.strictEqual(done.reason, "failed")
        assert.strictEqual(done.error?.code, "STORAGE_FULL")
        assert.deepStrictEqual(
          errors.map((event) => event.error.code),
          ["STORAGE_FULL"]
        )
        yield* Effect.promise(() => sandbox.unfill())
        const next = yield* host["session.send_text"]({ origin: ORIGIN, sessionId, text: script("say again") })
        assert.strictEqual((yield* events.next(completionOf(next.turnId))).reason, "completed")
        yield* host["session.end"]({ origin: ORIGIN, sessionId })
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => current().sandbox.unfill()))),
    60_000
  )

  it.live(
    "sessions the page ended on a full disk never come back after a restart, and leave no workspace",
    () =>
      Effect.gen(function* () {
        const { sandbox } = current()
        const ids = yield* Effect.scoped(
          Effect.gen(function* () {
            const host = yield* hostClient(current().info)
            const created: Array<SessionId> = []
            for (let i = 0; i < SESSIONS_TO_END; i++) created.push((yield* openSession(host)).sessionId)
            yield* Effect.promise(() => sandbox.fill())
            const ends = yield* Effect.forEach(created, (sessionId) =>
              failureCode(host["session.end"]({ origin: ORIGIN, sessionId }))
            )
            report(`full disk: ${SESSIONS_TO_END} ends → ${[...new Set(ends)].join(", ")}`)
            assert.deepStrictEqual(ends, Array(SESSIONS_TO_END).fill("succeeded"))
            return created
          })
        )
        yield* Effect.promise(() => sandbox.unfill())
        info = yield* Effect.promise(() => sandbox.restart())
        const host = yield* hostClient(info)
        const resumed = yield* Effect.forEach(ids, (sessionId) =>
          failureCode(host["session.resume"]({ origin: ORIGIN, sessionId }))
        )
        const workspaces = yield* Effect.promise(() => entries(path.join(sandbox.view, "workspaces")))
        const kept = workspaces.filter((name) => ids.includes(name as SessionId))
        const back = resumed.filter((code) => code === "succeeded").length
        report(`after restart: ${back} of ${ids.length} ended sessions came back; ${kept.length} workspaces kept`)
        assert.strictEqual(back, 0)
        for (const code of resumed) assert.include(["SESSION_ENDED", "SESSION_NOT_FOUND"], code)
        assert.deepStrictEqual(kept, [])
        const files = yield* Effect.promise(() => sandbox.wholeFiles())
        report(`session records and settings.json whole: ${files.records} records, settings ${files.settings}`)
        assert.deepStrictEqual(files.broken, [])
        assert.isTrue(files.settings)
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => current().sandbox.unfill()))),
    90_000
  )
})
