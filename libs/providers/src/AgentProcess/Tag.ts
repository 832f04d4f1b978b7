/**
 * AgentProcess/Tag — the mark each agent CLI's environment carries (`PEDELEC_AGENT_TAG`, random per spawn), and
 * finding the processes that inherited it. Why: a descendant that leaves the CLI's group (setsid) and whose parent
 * exits before any look saw it has no link left to the agent: no parent, no group. A `sh -c 'setsid cmd &'` does
 * exactly that within a millisecond, far inside the 200 ms between two looks (AgentProcess/Watch), and so outlived
 * its session. The environment is inherited by every exec and fork unless a program clears it, so the release
 * sequence also takes every process started since the agent whose environment has the agent's tag. Linux only (it
 * reads /proc/<pid>/environ, which only the process's own user may); elsewhere the tag is set but never looked for.
 * The tag rides on every record of the agent's processes in the session file, so a Core that restarts after a crash
 * finds those strays too (`taggedStrays`). It does not signal anything (Descendants' release, ProcessTree's kill).
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { type ProcessInfo, snapshot } from "../ProcessTree.ts"
import type { ProcessRecord } from "../Provider.ts"

export const AGENT_TAG_VARIABLE = "PEDELEC_AGENT_TAG"

/** A tag for one spawn: 128 random bits, so no other process's environment holds it by chance. */
export const newAgentTag = (): string => randomBytes(16).toString("hex")

/** What a tag looks like in a session file: anything else there was not written by Core. */
export const AGENT_TAG_PATTERN = /^[0-9a-f]{32}$/

const isLinux = process.platform === "linux"

/** Whether `environ` (NUL-separated `NAME=value` entries) holds exactly `entry`. */
const holds = (environ: Buffer, entry: Buffer): boolean => {
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return true
  }
  return false
}

const startOf = (record: ProcessRecord) => Number(record.startTime)

/**
 * The live processes of `table` started no earlier than `leader` whose environment carries `tag`: only those can
 * descend from it, and they are few, so a release reads a handful of environ files rather than the machine's.
 */
export const taggedSince = (
  table: ReadonlyArray<ProcessInfo>,
  leader: ProcessRecord,
  tag: string
): ReadonlyArray<ProcessInfo> => {
  if (!isLinux || !Number.isFinite(startOf(leader))) return []
  const entry = Buffer.from(`${AGENT_TAG_VARIABLE}=${tag}\0`)
  return table.filter((info) => {
    if (info.pid === process.pid || info.state.startsWith("Z") || !(startOf(info) >= startOf(leader))) return false
    try {
      return holds(readFileSync(`/proc/${info.pid}/environ`), entry)
    } catch {
      // Gone since the look, or another user's: not ours to find.
      return false
    }
  })
}

/**
 * The live processes carrying the tag of any of `records` (what a session file names), started no earlier than the
 * first of its records and not among them: after a crash, what the agent started that nothing else links to it.
 * One table read.
 */
export const taggedStrays = (records: ReadonlyArray<ProcessRecord>): Effect.Effect<ReadonlyArray<ProcessRecord>> => {
  const firstByTag = new Map<string, ProcessRecord>()
  for (const record of records) {
    if (record.agentTag === undefined) continue
    const first = firstByTag.get(record.agentTag)
    if (first === undefined || startOf(record) < startOf(first)) firstByTag.set(record.agentTag, record)
  }
  if (!isLinux || firstByTag.size === 0) return Effect.succeed([])
  const named = new Set(records.map((record) => `${record.pid}:${record.startTime}`))
  return Effect.map(snapshot, (table) =>
    [...firstByTag].flatMap(([tag, first]) =>
      taggedSince(table, first, tag).flatMap(({ pid, pgid, startTime }) =>
        named.has(`${pid}:${startTime}`) ? [] : [{ pid, pgid, startTime }]
      )
    )
  )
}
