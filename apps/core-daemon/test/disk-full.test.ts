// A full disk under a real Core: the built pedelec-core runs in bubblewrap with a 2 MiB tmpfs as its PEDELEC_HOME
// (no root needed), restarted by a shell loop inside the same sandbox so the tmpfs outlives a Core. The test reaches
// the home (and the socket in it) through /proc/<pid>/root of a process in the sandbox, fills the tmpfs to the last
// page and checks: every failure is a coded STORAGE_FULL (never a defect), reads still answer, a turn that cannot be
// written ends `failed` with an error event its subscriber sees, a failed create leaves no workspace, a session the
// page ended never comes back after a restart, settings and session files stay whole, and Core stays up.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { script } from "@pedelec/providers/scripted/Script"
import { announcement } from "@pedelec/test-kit/core/CoreProcess"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll } from "vitest"
import {
  cliBinDir,
  completionOf,
  coreBin,
  desktopClient,
  failureCode,
  failureOf,
  hostClient,
  isType,
  ORIGIN,
  openSession,
  removeHome,
  tempDir
} from "./harness.ts"

const TMPFS_BYTES = 2 * 1024 * 1024
const PAGE = 4096
const SESSIONS_TO_END = 8

interface Sandbox {
  readonly root: string
  /** The home as the sandbox sees it (and names it in core.json). */
  readonly home: string
  /** The same home as this process reaches it: through the mount namespace of the sandbox's shell. */
  readonly view: string
  readonly bwrap: ChildProcess
  readonly stderr: () => string
}

const hasBwrap = await new Promise<boolean>((resolve) => {
  const probe = spawn("bwrap", ["--dev-bind", "/", "/", "true"], { stdio: "ignore" })
  probe.on("error", () => resolve(false))
  probe.on("exit", (code) => resolve(code === 0))
})

/** The sandbox's shell, once bwrap reports it (`--info-fd`). */
const childPid = (bwrap: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let text = ""
    const info = bwrap.stdio[3] as NodeJS.ReadableStream
    info.setEncoding("utf8")
    info.on("data", (chunk: string) => {
      text += chunk
      const match = /"child-pid":\s*(\d+)/.exec(text)
      if (match) resolve(Number(match[1]))
    })
    bwrap.once("exit", () => reject(new Error("bwrap exited before it started the sandbox")))
  })

const startSandbox = async (): Promise<Sandbox> => {
  const root = await tempDir("pedelec-disk-")
  const home = path.join(root, "home")
  await mkdir(home)
  // Restarts Core whenever it exits, until the stop file exists: the tmpfs lives as long as the sandbox.
  const loop = 'while [ ! -e "$1" ]; do "$2" "$3" --home "$4"; sleep 0.1; done'
  const args = ["--dev-bind", "/", "/", "--size", String(TMPFS_BYTES), "--tmpfs", home, "--info-fd", "3", "--"]
  const bwrap = spawn(
    "bwrap",
    [...args, "sh", "-c", loop, "sh", path.join(root, "stop"), process.execPath, coreBin, home],
    {
      env: { ...process.env, PEDELEC_BIN_DIR: cliBinDir, PEDELEC_ENABLE_SCRIPTED: "1" },
      stdio: ["ignore", "ignore", "pipe", "pipe"]
    }
  )
  let stderr = ""
  bwrap.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const shell = await childPid(bwrap)
  return { root, home, view: `/proc/${shell}/root${home}`, bwrap, stderr: () => stderr }
}

/** The announcement of a Core in the sandbox (other than `notPid`), with its socket as this process reaches it. */
const coreInfo = async (sandbox: Sandbox, notPid?: number): Promise<CoreRuntimeInfo> => {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const info = await announcement(sandbox.view)
    if (info !== undefined && info.pid !== notPid) {
      return { ...info, socketPath: path.join(sandbox.view, path.relative(sandbox.home, info.socketPath)) }
    }
    await sleep(50)
  }
  throw new Error(`no Core announced itself in the sandbox:\n${sandbox.stderr()}`)
}

/** The figures each check prints: what a reader of the run compares with the issue's. */
const report = (line: string) => process.stdout.write(`[disk-full] ${line}\n`)

const isFull = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOSPC"

/** Fills the tmpfs to its last page: whole pages until refused, then a byte (which needs a page of its own). */
const fill = async (sandbox: Sandbox) => {
  const handle = await open(path.join(sandbox.view, "filler"), "a")
  try {
    for (const size of [256 * 1024, PAGE, 1]) {
      const chunk = Buffer.alloc(size, 0x78)
      while (true) {
        try {
          await handle.write(chunk)
        } catch (error) {
          if (isFull(error)) break
          throw error
        }
      }
    }
  } finally {
    await handle.close()
  }
}

const unfill = (sandbox: Sandbox) => rm(path.join(sandbox.view, "filler"), { force: true })

const entries = (dir: string) => readdir(dir).catch(() => [] as Array<string>)

/** Every record and settings.json parse as JSON: a full disk truncates or corrupts none of them. */
const filesWhole = async (sandbox: Sandbox) => {
  const sessions = path.join(sandbox.view, "sessions")
  const names = (await entries(sessions)).filter((name) => name.endsWith(".json"))
  for (const name of names) JSON.parse(await readFile(path.join(sessions, name), "utf8"))
  JSON.parse(await readFile(path.join(sandbox.view, "settings.json"), "utf8"))
  return names.length
}

describe.runIf(hasBwrap)("a full disk (2 MiB tmpfs as PEDELEC_HOME)", () => {
  let sandbox: Sandbox | undefined
  let info: CoreRuntimeInfo | undefined
  const current = () => {
    if (sandbox === undefined || info === undefined) throw new Error("the sandbox did not start")
    return { sandbox, info }
  }

  beforeAll(async () => {
    sandbox = await startSandbox()
    info = await coreInfo(sandbox)
    const setScripted = Effect.gen(function* () {
      const desktop = yield* desktopClient(current().info)
      const { secretsSet: _, ...settings } = yield* desktop["desktop.settings.get"]()
      yield* desktop["desktop.settings.set"]({ settings: { ...settings, defaultProvider: "scripted" } })
    })
    await Effect.runPromise(Effect.scoped(setScripted))
  }, 60_000)

  afterAll(async () => {
    if (sandbox === undefined) return
    await writeFile(path.join(sandbox.root, "stop"), "")
    const live = await announcement(sandbox.view)
    if (live !== undefined) process.kill(live.pid, "SIGTERM")
    await new Promise((resolve) =>
      sandbox?.bwrap.exitCode !== null ? resolve(undefined) : sandbox?.bwrap.once("exit", resolve)
    )
    await removeHome(sandbox.root)
  }, 30_000)

  it.live(
    "reads answer and writes are STORAGE_FULL, settings.json left as it was",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const before = yield* Effect.promise(() => readFile(path.join(sandbox.view, "settings.json"), "utf8"))
        yield* Effect.promise(() => fill(sandbox))
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
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => unfill(current().sandbox)))),
    60_000
  )

  it.live(
    "a create on a full disk fails STORAGE_FULL and leaves no workspace or record",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const before = yield* Effect.promise(() => entries(path.join(sandbox.view, "workspaces")))
        yield* Effect.promise(() => fill(sandbox))
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
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => unfill(current().sandbox)))),
    60_000
  )

  it.live(
    "a turn on a full disk is refused STORAGE_FULL; one whose events stop fitting ends failed with an error event; the session still works",
    () =>
      Effect.gen(function* () {
        const { sandbox, info } = current()
        const host = yield* hostClient(info)
        const { sessionId, events } = yield* openSession(host)
        yield* Effect.promise(() => fill(sandbox))
        // The turn is written down before it is accepted (a Core killed mid-turn still owes it a completion).
        const refused = yield* failureCode(host["session.send_text"]({ origin: ORIGIN, sessionId, text: "hi" }))
        assert.strictEqual(refused, "STORAGE_FULL")
        yield* Effect.promise(() => unfill(sandbox))
        const sent = yield* host["session.send_text"]({
          origin: ORIGIN,
          sessionId,
          // After the sleep the disk is full: 200 messages of 1 KiB cannot all be logged.
          text: script("sleep 800", ...Array.from({ length: 200 }, (_, i) => `say ${String(i).padEnd(1024, "x")}`))
        })
        yield* Effect.promise(() => fill(sandbox))
        const done = yield* events.next(completionOf(sent.turnId))
        const errors = events.seen.filter(isType("error")).filter((event) => event.turnId === sent.turnId)
        report(`full disk: send_text → ${refused}; turn filled mid-way → ${done.reason} (${done.error?.code})`)
        assert.strictEqual(done.reason, "failed")
        assert.strictEqual(done.error?.code, "STORAGE_FULL")
        assert.deepStrictEqual(
          errors.map((event) => event.error.code),
          ["STORAGE_FULL"]
        )
        yield* Effect.promise(() => unfill(sandbox))
        const next = yield* host["session.send_text"]({ origin: ORIGIN, sessionId, text: script("say again") })
        assert.strictEqual((yield* events.next(completionOf(next.turnId))).reason, "completed")
        yield* host["session.end"]({ origin: ORIGIN, sessionId })
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => unfill(current().sandbox)))),
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
            yield* Effect.promise(() => fill(sandbox))
            const ends = yield* Effect.forEach(created, (sessionId) =>
              failureCode(host["session.end"]({ origin: ORIGIN, sessionId }))
            )
            report(`full disk: ${SESSIONS_TO_END} ends → ${[...new Set(ends)].join(", ")}`)
            assert.deepStrictEqual(ends, Array(SESSIONS_TO_END).fill("succeeded"))
            return created
          })
        )
        yield* Effect.promise(() => unfill(sandbox))
        const old = current().info
        process.kill(old.pid, "SIGTERM")
        info = yield* Effect.promise(() => coreInfo(sandbox, old.pid))
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
        const records = yield* Effect.promise(() => filesWhole(sandbox))
        report(`session records and settings.json parse: ${records} records`)
      }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(() => unfill(current().sandbox)))),
    90_000
  )
})
