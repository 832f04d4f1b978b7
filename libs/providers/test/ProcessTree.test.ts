/**
 * ProcessTree: parsing the process table (tricky comm names included), descendants, and killing with real
 * processes: groups, escalation to SIGKILL, never signalling a pid whose start time changed, and the walk of only
 * some trees (children forked by a worker thread included).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { copyFileSync, existsSync, readFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  descendantsOf,
  identity,
  killTree,
  type ProcessInfo,
  parseProcStat,
  parsePsLine,
  parsePsOutput,
  signalGroups,
  snapshot,
  treesOf
} from "../src/ProcessTree.ts"
import { killQuietly, pidExists, tempDir, waitFor, waitGone } from "./support.ts"

const linux = process.platform === "linux"

/** A stat line as the kernel writes it, with the given comm; starttime (field 22) is 987654. */
const statLine = (pid: number, comm: string) =>
  `${pid} (${comm}) S 1 ${pid} ${pid} 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n`

/** A real child, killed when the test's scope closes whatever happens. */
const child = (command: string, args: ReadonlyArray<string>, detached = false) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, [...args], { detached, stdio: "ignore" })),
    (proc: ChildProcess) => killQuietly(proc.pid)
  )

const sleeper = (detached = false) => child("sleep", ["1000"], detached)

/** A real child leading a group of its own, the whole group killed when the test's scope closes. */
const groupLeader = (command: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, [...args], { detached: true, stdio: "ignore" })),
    (proc: ChildProcess) => Effect.andThen(killQuietly(-proc.pid!), killQuietly(proc.pid))
  )

const pidIn = (file: string) =>
  waitFor(
    `a pid in ${file}`,
    Effect.sync(() => (existsSync(file) ? Number(readFileSync(file, "utf8")) || undefined : undefined))
  )

describe("parsing", () => {
  it("reads /proc/<pid>/stat fields, with comm names full of spaces and parentheses", () => {
    for (const comm of ["node", "a b", "x) S 1 (y", "((", ")", "tab\there", "new\nline", ""]) {
      const info = parseProcStat(statLine(4242, comm))
      assert.deepStrictEqual(info, { pid: 4242, ppid: 1, pgid: 4242, startTime: "987654", state: "S", comm })
    }
  })

  it("rejects what is not a stat line", () => {
    for (const text of ["", "garbage", "12 (x", "12 (x) S", "x (y) S 1 2 3", statLine(1, "a").replace("987654", "x")]) {
      assert.isUndefined(parseProcStat(text))
    }
  })

  it.skipIf(!linux)("matches the kernel's own line for this process", () => {
    const text = readFileSync("/proc/self/stat", "utf8")
    const info = parseProcStat(text)
    assert.isDefined(info)
    assert.strictEqual(info?.pid, process.pid)
    assert.strictEqual(info?.startTime, text.slice(text.lastIndexOf(")") + 2).split(" ")[19])
  })

  it("reads ps lines, whose lstart column holds spaces", () => {
    assert.deepStrictEqual(parsePsLine("  501     1   501 Ss   Mon Nov 29 10:00:00 2026"), {
      pid: 501,
      ppid: 1,
      pgid: 501,
      startTime: "Mon Nov 29 10:00:00 2026",
      state: "Ss",
      comm: ""
    })
    assert.isUndefined(parsePsLine("  501     1   501 Ss"))
    assert.isUndefined(parsePsLine("PID PPID PGID STAT STARTED"))
    assert.deepStrictEqual(
      parsePsOutput("1 0 1 Ss Mon Nov 29 10:00:00 2026\n\n2 1 2 Z Mon Nov 29 10:00:01 2026\n").map((p) => p.pid),
      [1, 2]
    )
  })
})

describe("descendantsOf", () => {
  const row = (pid: number, ppid: number): ProcessInfo => ({
    pid,
    ppid,
    pgid: pid,
    startTime: "1",
    state: "S",
    comm: ""
  })
  const table = [row(1, 0), row(10, 1), row(11, 10), row(12, 10), row(13, 11), row(20, 1), row(21, 20)]

  it("finds every level below the roots, not the roots themselves", () => {
    assert.deepStrictEqual(
      descendantsOf([10], table)
        .map((p) => p.pid)
        .sort(),
      [11, 12, 13]
    )
    assert.deepStrictEqual(
      descendantsOf([11, 20], table)
        .map((p) => p.pid)
        .sort(),
      [13, 21]
    )
    assert.deepStrictEqual(descendantsOf([99], table), [])
  })

  it("survives a parent loop (a racy snapshot can show one)", () => {
    const loop = [row(5, 6), row(6, 5)]
    assert.deepStrictEqual(
      descendantsOf([5], loop).map((p) => p.pid),
      [6]
    )
  })
})

describe("the live process table", () => {
  it.live("snapshot and identity see this process and its children", () =>
    Effect.gen(function* () {
      const proc = yield* sleeper()
      const table = yield* snapshot
      const self = table.find((p) => p.pid === process.pid)
      assert.isDefined(self)
      const row = table.find((p) => p.pid === proc.pid)
      assert.strictEqual(row?.ppid, process.pid)
      assert.deepStrictEqual(yield* identity(proc.pid!), { pid: row!.pid, pgid: row!.pgid, startTime: row!.startTime })
      assert.isTrue(descendantsOf([process.pid], table).some((p) => p.pid === proc.pid))
    }).pipe(Effect.scoped)
  )

  it.live("identity of a process that is gone is undefined", () =>
    Effect.gen(function* () {
      const proc = yield* sleeper()
      process.kill(proc.pid!, "SIGKILL")
      yield* waitGone(proc.pid!)
      assert.isUndefined(yield* identity(proc.pid!))
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!linux)("finds a process whose comm is `x) S 1 (y`", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("comm")
      const tricky = path.join(dir, "x) S 1 (y")
      copyFileSync("/bin/sleep", tricky)
      const proc = yield* child(tricky, ["1000"])
      // Until it has exec'd and gone to sleep, a loaded machine shows it as `node`, or running (R): wait for both.
      const row = yield* waitFor(
        "the tricky process asleep in the table",
        Effect.map(snapshot, (table) => table.find((p) => p.pid === proc.pid && p.comm !== "node" && p.state !== "R"))
      )
      assert.strictEqual(row?.comm, "x) S 1 (y")
      assert.strictEqual(row?.ppid, process.pid)
      assert.strictEqual(row?.state, "S")
    }).pipe(Effect.scoped)
  )
})

describe("killTree", () => {
  it.live("kills a whole group from the leader's record, children included", () =>
    Effect.gen(function* () {
      const leader = yield* child("sh", ["-c", "sleep 1000 & sleep 1000 & wait"], true)
      const members = yield* waitFor(
        "two sleeping children",
        Effect.map(snapshot, (table) => {
          const found = table.filter((p) => p.ppid === leader.pid).map((p) => p.pid)
          return found.length === 2 ? found : undefined
        })
      )
      const record = (yield* identity(leader.pid!))!
      const report = yield* killTree([record], { graceMs: 1_000 })
      assert.sameMembers([...report.signalled], [leader.pid!, ...members])
      assert.deepStrictEqual(report.forced, [])
      for (const pid of [leader.pid!, ...members]) yield* waitGone(pid)
    }).pipe(Effect.scoped)
  )

  it.live("escalates to SIGKILL when SIGTERM is ignored", () =>
    Effect.gen(function* () {
      // It says it is ready only once its handler is in place: a busy machine may take long to start node.
      const ready = path.join(yield* tempDir("stubborn"), "ready")
      const script = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(ready)}, ''); setInterval(() => {}, 1e9)`
      const stubborn = yield* child(process.execPath, ["-e", script], true)
      yield* waitFor(
        "the SIGTERM handler",
        Effect.sync(() => (existsSync(ready) ? true : undefined))
      )
      const record = (yield* identity(stubborn.pid!))!
      const started = Date.now()
      const report = yield* killTree([record], { graceMs: 300 })
      assert.deepStrictEqual(report.forced, [stubborn.pid!])
      assert.deepStrictEqual(report.remaining, [])
      assert.isBelow(Date.now() - started, 2_000)
      yield* waitGone(stubborn.pid!)
    }).pipe(Effect.scoped)
  )

  it.live("never signals a pid (or its group) whose start time changed", () =>
    Effect.gen(function* () {
      const proc = yield* sleeper(true)
      const real = (yield* identity(proc.pid!))!
      const stale = { ...real, startTime: String(Number(real.startTime) - 1) }
      const report = yield* killTree([stale], { graceMs: 100 })
      yield* signalGroups([stale], "SIGKILL")
      assert.deepStrictEqual(report, { signalled: [], forced: [], remaining: [] })
      yield* Effect.sleep(200)
      assert.isTrue(pidExists(proc.pid!))
      assert.deepStrictEqual(yield* identity(proc.pid!), real)
    }).pipe(Effect.scoped)
  )

  it.live("never signals its caller's own process group", () =>
    Effect.gen(function* () {
      // Not detached: this child shares the test runner's group, which must survive.
      const proc = yield* sleeper(false)
      const record = (yield* identity(proc.pid!))!
      const self = (yield* identity(process.pid))!
      assert.strictEqual(record.pgid, self.pgid)
      const report = yield* killTree([record], { graceMs: 1_000 })
      assert.deepStrictEqual(report.signalled, [proc.pid!])
      yield* waitGone(proc.pid!)
      assert.isTrue(pidExists(process.pid))
    }).pipe(Effect.scoped)
  )
})

describe("treesOf", () => {
  it.live("walks a tree from its root: the children a shell forked, not this process nor its other children", () =>
    Effect.gen(function* () {
      const stranger = yield* sleeper()
      const shell = yield* groupLeader("sh", ["-c", "sleep 1000 & sleep 1000 & wait"])
      const table = yield* waitFor(
        "the shell's two children",
        Effect.map(treesOf([shell.pid!]), (rows) => (rows.length === 3 ? rows : undefined))
      )
      assert.sameMembers(
        table.filter((p) => p.pid !== shell.pid).map((p) => p.ppid),
        [shell.pid!, shell.pid!]
      )
      if (linux) assert.isFalse(table.some((p) => p.pid === process.pid || p.pid === stranger.pid))
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!linux)("finds a child forked by a worker thread, which only that thread's children file lists", () =>
    Effect.gen(function* () {
      const pidFile = path.join(yield* tempDir("worker"), "child.pid")
      const worker = `const c=require('child_process').spawn('sleep',['1000'],{stdio:'ignore'});require('fs').writeFileSync(${JSON.stringify(pidFile)},String(c.pid));setInterval(()=>{},1e9)`
      const script = `new (require('worker_threads').Worker)(${JSON.stringify(worker)},{eval:true});setInterval(()=>{},1e9)`
      const agent = yield* groupLeader(process.execPath, ["-e", script])
      const sleep = yield* pidIn(pidFile)
      // The main thread's file does not list it: a walk reading only that file would miss it.
      assert.notInclude(readFileSync(`/proc/${agent.pid}/task/${agent.pid}/children`, "utf8").split(" "), String(sleep))
      const row = (yield* treesOf([agent.pid!])).find((p) => p.pid === sleep)
      assert.strictEqual(row?.ppid, agent.pid)
    }).pipe(Effect.scoped)
  )

  it.live("skips a root that is gone, and walks the others", () =>
    Effect.gen(function* () {
      const gone = yield* sleeper()
      process.kill(gone.pid!, "SIGKILL")
      yield* waitGone(gone.pid!)
      const alive = yield* sleeper()
      const table = yield* treesOf([gone.pid!, alive.pid!, alive.pid!, -1, 0])
      if (linux)
        assert.deepStrictEqual(
          table.map((p) => p.pid),
          [alive.pid!]
        )
      else assert.isFalse(table.some((p) => p.pid === gone.pid))
    }).pipe(Effect.scoped)
  )
})
