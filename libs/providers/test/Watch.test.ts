/**
 * AgentProcess/Watch with real processes: the periodic look keeps a setsid grandchild known after its parent is
 * gone, reads only the watched trees, never a stranger's process (Linux, where the children files exist), and yet
 * finds, by its whole-table look every 5 s, a process that kept the agent's group but lost its parent before any look.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Seen, seenFrom } from "../src/AgentProcess/Descendants.ts"
import { lookTable, watch } from "../src/AgentProcess/Watch.ts"
import * as ProcessTree from "../src/ProcessTree.ts"
import { killQuietly, pidExists, tempDir, waitFor } from "./support.ts"

const linux = process.platform === "linux"

/** A node script leading a group of its own; the group and `alsoKill`'s (a pid file's process) die with the scope. */
const agent = (script: string, alsoKill?: string) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(process.execPath, ["-e", script], { detached: true, stdio: "ignore" })),
    (proc: ChildProcess) =>
      Effect.gen(function* () {
        yield* killQuietly(-proc.pid!)
        // A setsid process leads a group of its own.
        if (alsoKill !== undefined && existsSync(alsoKill)) yield* killQuietly(-Number(readFileSync(alsoKill, "utf8")))
      })
  )

const seenOf = (pid: number) =>
  Effect.map(ProcessTree.identity(pid), (leader) => seenFrom(leader ?? { pid, pgid: pid, startTime: "" }))

const pids = (seen: Seen) => [...seen.values()].map((record) => record.pid)

describe("the periodic look", () => {
  it.live("keeps a setsid grandchild known once the parent that linked it is gone", () =>
    Effect.gen(function* () {
      const pidFile = path.join(yield* tempDir("watch"), "grandchild.pid")
      // Once orphaned, the grandchild starts a child: only a walk from the grandchild's own record can find it.
      const grandchild = `require('fs').writeFileSync(${JSON.stringify(pidFile)},String(process.pid));const p=process.ppid;const t=setInterval(()=>{if(process.ppid!==p){clearInterval(t);require('child_process').spawn('sleep',['1000'],{stdio:'ignore'})}},20)`
      const middle = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(grandchild)}],{detached:true,stdio:'ignore'}).unref();setTimeout(()=>{},1000)`
      const leader = yield* agent(
        `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(middle)}],{stdio:'ignore'});setInterval(()=>{},1e9)`,
        pidFile
      )
      const seen = yield* seenOf(leader.pid!)
      yield* watch(seen)
      const escaped = yield* waitFor(
        "the grandchild seen",
        Effect.sync(() => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined))
      )
      yield* waitFor(
        "the grandchild among the seen",
        Effect.sync(() => (pids(seen).includes(escaped) ? true : undefined))
      )
      const late = yield* waitFor(
        "the orphaned grandchild's child among the seen",
        Effect.map(ProcessTree.snapshot, (table) => {
          const row = table.find((info) => info.ppid === escaped && info.state !== "Z")
          return row !== undefined && pids(seen).includes(row.pid) ? row.pid : undefined
        })
      )
      yield* Effect.sleep(500)
      // The middle is gone and dropped; the grandchild, its parent link lost, stays, and so does its child.
      assert.sameMembers(pids(seen), [leader.pid!, escaped, late])
      assert.isTrue(pidExists(escaped))
    }).pipe(Effect.scoped)
  )

  it.live.skipIf(!linux)("reads only the watched trees: a stranger's process is not in its table", () =>
    Effect.gen(function* () {
      const stranger = yield* agent("setInterval(()=>{},1e9)")
      const watched = yield* agent(
        "require('child_process').spawn('sleep',['1000'],{stdio:'ignore'});setInterval(()=>{},1e9)"
      )
      const seen = yield* seenOf(watched.pid!)
      const table = yield* waitFor(
        "the watched agent and its sleep",
        Effect.map(lookTable([seen]), (rows) => (rows.length === 2 ? rows : undefined))
      )
      assert.sameMembers(
        table.map((row) => row.ppid),
        [process.pid, watched.pid!]
      )
      assert.isFalse(table.some((row) => row.pid === stranger.pid || row.pid === process.pid))
    }).pipe(Effect.scoped)
  )

  it.live("finds a process that kept the group but was orphaned before any look, within the whole-table period", () =>
    Effect.gen(function* () {
      const pidFile = path.join(yield* tempDir("watch-stranger"), "orphan.pid")
      const orphan = `require('fs').writeFileSync(${JSON.stringify(pidFile)},String(process.pid));setInterval(()=>{},1e9)`
      // The middle starts the orphan in the agent's group (not detached) and exits: no parent link ever leads to it.
      const middle = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(orphan)}],{stdio:'ignore'}).unref()`
      const leader = yield* agent(
        `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(middle)}],{stdio:'ignore'});setInterval(()=>{},1e9)`
      )
      const orphaned = yield* waitFor(
        "the orphan, its parent gone",
        Effect.map(ProcessTree.snapshot, (table) => {
          const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : Number.NaN
          const row = table.find((info) => info.pid === pid)
          const middleGone = !table.some((info) => info.ppid === leader.pid && !info.state.startsWith("Z"))
          return row !== undefined && row.pgid === leader.pid && middleGone ? pid : undefined
        })
      )
      const seen = yield* seenOf(leader.pid!)
      yield* watch(seen)
      yield* waitFor(
        "the orphan among the seen",
        Effect.sync(() => (pids(seen).includes(orphaned) ? true : undefined)),
        8_000
      )
    }).pipe(Effect.scoped)
  )
})
