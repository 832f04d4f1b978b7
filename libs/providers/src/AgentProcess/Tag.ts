/**
 * AgentProcess/Tag — the mark each agent CLI's environment carries (`PEDELEC_AGENT_TAG`, random per spawn), and
 * finding the processes that inherited it. Why: a descendant that leaves the CLI's group (setsid) and whose parent
 * exits before any look saw it has no link left to the agent: no parent, no group. A `sh -c 'setsid cmd &'` does
 * exactly that within a millisecond, far inside the 200 ms between two looks (AgentProcess/Watch), and so outlived
 * its session. The environment is inherited by every exec and fork unless a program clears it, so the release
 * sequence also takes every process started since the agent whose environment has the agent's tag. Linux only (it
 * reads /proc/<pid>/environ, which only the process's own user may); elsewhere the tag is set but never looked for.
 * It does not signal anything (Descendants' release) nor read the process table (ProcessTree).
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import type { ProcessInfo } from "../ProcessTree.ts"
import type { ProcessRecord } from "../Provider.ts"

export const AGENT_TAG_VARIABLE = "PEDELEC_AGENT_TAG"

/** A tag for one spawn: 128 random bits, so no other process's environment holds it by chance. */
export const newAgentTag = (): string => randomBytes(16).toString("hex")

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
