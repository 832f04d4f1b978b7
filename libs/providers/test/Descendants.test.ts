/**
 * AgentProcess/Descendants' update, on process tables as Watch and release read them: a CLI that has exited but is
 * not yet reaped (a zombie) still names its group, so the members a look had not seen yet are found from it; once
 * its pid is gone or held by another process, it is dropped. Real processes are Watch.test's and AgentProcess.test's.
 */
import { assert, describe, it } from "@effect/vitest"
import { seenFrom, update } from "../src/AgentProcess/Descendants.ts"
import type { ProcessInfo } from "../src/ProcessTree.ts"

/** Above any pid_max (2^22 on 64-bit Linux): the kernel says no such process. */
const LEADER = 4_194_400
const row = (pid: number, fields: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid,
  ppid: 1,
  pgid: LEADER,
  startTime: String(pid),
  state: "S",
  comm: "node",
  ...fields
})
const leader = { pid: LEADER, pgid: LEADER, startTime: String(LEADER) }
const pids = (seen: ReturnType<typeof seenFrom>) => [...seen.values()].map((record) => record.pid).sort()

describe("Descendants.update", () => {
  it("a zombie leader still names its group: a member no look had seen is found, not lost", () => {
    const seen = seenFrom(leader)
    // The CLI exited before any look saw its child; the child, orphaned, kept the group.
    update(seen, [row(LEADER, { ppid: process.pid, state: "Z" }), row(LEADER + 1)])
    assert.deepStrictEqual(pids(seen), [LEADER, LEADER + 1])
  })

  it("a leader reaped (no such pid) or whose pid another process now holds is dropped", () => {
    const reaped = seenFrom(leader)
    update(reaped, [])
    assert.deepStrictEqual(pids(reaped), [])
    const reused = seenFrom(leader)
    update(reused, [row(LEADER, { startTime: "other", pgid: 7 }), row(LEADER + 1, { pgid: 7 })])
    assert.deepStrictEqual(pids(reused), [], "a stranger holding the pid lends no group")
  })
})
