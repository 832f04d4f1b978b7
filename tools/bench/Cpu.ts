/**
 * Cpu — where a slow case spends its time, read from /proc (10 ms ticks): the CPU each process of this run used
 * between two snapshots, summed by role, and per operation over many of them. Only descendants of this process count
 * (other people's Chromium and Core on a shared box do not). Agents and their pedelec-cli children are gone by the
 * end of a turn; Core reaps them, so they show up in Core's `cutime` as "agent processes".
 *
 * Why CPU beside the latency ratios: a round trip between processes on a 2-vCPU VM is much of it wake-ups, and no
 * profile of a warm call shows where they go. The CPU moves with the VM's speed too (one MCP call: 4.0–8.5 ms, Core
 * 2.8–4.6 ms of CPU, in one hour), but the split between processes held (the MCP server 0.73–0.81 of Core's).
 */
import { readdir, readFile } from "node:fs/promises"

const TICK_MS = 10

interface Proc {
  readonly pid: number
  readonly ppid: number
  readonly role: string
  readonly selfMs: number
  readonly childrenMs: number
}

const roleOf = (cmdline: string): string | undefined => {
  // Chromium's zygote children rewrite their title in place: one string with spaces, not NUL-separated arguments.
  const args = cmdline.split(/[\0 ]/)
  const line = args.join(" ")
  if (line.includes("pedelec-core")) return "pedelec-core"
  if (line.includes("pedelec-native-host")) return "pedelec native host"
  if (line.includes("echo-host.mjs")) return "echo host"
  if (line.includes("pedelec-agent")) return "pedelec-agent"
  if (line.includes("pedelec-cli")) return "pedelec-cli"
  if (!line.includes("chromium")) return undefined
  const type = args.find((arg) => arg.startsWith("--type="))
  if (type === undefined) return "chromium browser process"
  if (type === "--type=renderer") {
    return args.includes("--extension-process")
      ? "chromium extension renderer (service workers)"
      : "chromium page renderer"
  }
  return "chromium other (gpu, network, utility)"
}

const readProc = async (pid: number): Promise<Proc | undefined> => {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name, which may hold spaces: state is [0], ppid [1], utime [11] … cstime [14].
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8")
    const ticks = (index: number) => Number(fields[index])
    return {
      pid,
      ppid: ticks(1),
      role: roleOf(cmdline) ?? "other",
      selfMs: (ticks(11) + ticks(12)) * TICK_MS,
      childrenMs: (ticks(13) + ticks(14)) * TICK_MS
    }
  } catch {
    return undefined
  }
}

export type CpuSnapshot = ReadonlyMap<number, Proc>

export const cpuSnapshot = async (): Promise<CpuSnapshot> => {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number)
  const all = (await Promise.all(pids.map(readProc))).filter((proc) => proc !== undefined)
  const byPid = new Map(all.map((proc) => [proc.pid, proc]))
  const ours = (proc: Proc): boolean => {
    for (let at: Proc | undefined = proc; at !== undefined; at = byPid.get(at.ppid)) {
      if (at.ppid === process.pid) return true
    }
    return false
  }
  return new Map(all.filter(ours).map((proc) => [proc.pid, proc]))
}

/** CPU ms per role between two snapshots, largest first; a process that started in between counts whole. */
export const cpuBetween = (before: CpuSnapshot, after: CpuSnapshot): Array<readonly [string, number]> => {
  const totals = new Map<string, number>()
  const add = (role: string, ms: number) => totals.set(role, (totals.get(role) ?? 0) + ms)
  for (const proc of after.values()) {
    const earlier = before.get(proc.pid)
    add(proc.role, proc.selfMs - (earlier?.selfMs ?? 0))
    if (proc.role === "pedelec-core")
      add("agent processes (reaped by Core)", proc.childrenMs - (earlier?.childrenMs ?? 0))
  }
  return [...totals].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1])
}

/**
 * CPU ms per operation of one role between two snapshots (0 when it used none). Over a few hundred operations of a
 * few ms each, the 10 ms tick is about 1% of the total.
 */
export const cpuPerOperation = (before: CpuSnapshot, after: CpuSnapshot, role: string, operations: number): number =>
  (cpuBetween(before, after).find(([name]) => name === role)?.[1] ?? 0) / operations
