/**
 * ProcessTree — facts about the processes on this machine, and killing a recorded set of them safely. It reads the
 * process table (Linux: /proc; macOS and other Unixes: `ps`), whole or only the trees below some pids (Linux: down
 * /proc's children files), finds descendants, and signals process groups and pids only while they are still the
 * processes that were recorded (pid + kernel start time), so a reused pid is never hit. It spawns nothing and
 * decides nothing about when to kill: AgentProcess and Core's crash reaper do.
 */
import { execFile } from "node:child_process"
import { closeSync, existsSync, openSync, readdirSync, readSync } from "node:fs"
import * as Effect from "effect/Effect"
import type { ProcessRecord } from "./Provider.ts"

/** One row of the process table. */
export interface ProcessInfo extends ProcessRecord {
  readonly ppid: number
  /** Linux state letter or the `ps` STAT column; a leading "Z" is a zombie: dead, only waiting to be reaped. */
  readonly state: string
  /** Executable name (Linux only; `ps` output leaves it empty). */
  readonly comm: string
}

export interface KillOptions {
  /** How long the first signal has before survivors get SIGKILL. */
  readonly graceMs?: number
  /** The first signal; SIGTERM unless told otherwise. */
  readonly signal?: NodeJS.Signals
}

export interface KillReport {
  /** Pids that got the first signal (the records still alive, plus their current descendants and group members). */
  readonly signalled: ReadonlyArray<number>
  /** Pids still alive after the grace period, which got SIGKILL. */
  readonly forced: ReadonlyArray<number>
  /** Pids still alive at the end (should be empty; a process in uninterruptible sleep can linger). */
  readonly remaining: ReadonlyArray<number>
}

const isLinux = process.platform === "linux"
const isWindows = process.platform === "win32"
const POLL_MS = 50
const SIGKILL_WAIT_MS = 1_000

const toInt = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * Parses `/proc/<pid>/stat`. The comm field is in parentheses but may itself hold spaces, parentheses and even
 * newlines, so it runs from the first "(" to the LAST ")"; the numbered fields follow (state is field 3, starttime
 * field 22).
 */
export const parseProcStat = (text: string): ProcessInfo | undefined => {
  const open = text.indexOf("(")
  const close = text.lastIndexOf(")")
  if (open < 0 || close < open) return undefined
  const pid = toInt(text.slice(0, open).trim())
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/)
  const ppid = toInt(fields[1])
  const pgid = toInt(fields[2])
  const startTime = fields[19]
  const state = fields[0]
  if (pid === undefined || ppid === undefined || pgid === undefined || state === undefined) return undefined
  if (startTime === undefined || toInt(startTime) === undefined) return undefined
  return { pid, ppid, pgid, startTime, state, comm: text.slice(open + 1, close) }
}

/** Parses one line of `ps -o pid=,ppid=,pgid=,stat=,lstart=` (lstart, e.g. "Mon Nov 29 10:00:00 2026", has spaces). */
export const parsePsLine = (line: string): ProcessInfo | undefined => {
  const [pidText, ppidText, pgidText, state, ...start] = line.trim().split(/\s+/)
  const pid = toInt(pidText)
  const ppid = toInt(ppidText)
  const pgid = toInt(pgidText)
  if (pid === undefined || ppid === undefined || pgid === undefined || state === undefined || start.length === 0) {
    return undefined
  }
  return { pid, ppid, pgid, startTime: start.join(" "), state, comm: "" }
}

export const parsePsOutput = (text: string): ReadonlyArray<ProcessInfo> =>
  text.split("\n").flatMap((line) => parsePsLine(line) ?? [])

const isZombie = (info: ProcessInfo) => info.state.startsWith("Z")

/** A stat line is a few hundred bytes (comm is at most 16); one buffer serves every read, as they are synchronous. */
const statBuffer = Buffer.alloc(4096)

/**
 * Synchronous on purpose: /proc is in memory, and a whole table read this way took 2.9 ms of CPU for 125 processes
 * where `fs.promises.readFile` took 19 ms (four thread-pool hops and a promise per file) and held a descriptor open
 * per pending read: issue 14's 9,000 open files at 50 sessions.
 */
const readStat = (pid: number): ProcessInfo | undefined => {
  let fd: number | undefined
  try {
    fd = openSync(`/proc/${pid}/stat`, "r")
    return parseProcStat(statBuffer.toString("latin1", 0, readSync(fd, statBuffer, 0, statBuffer.length, 0)))
  } catch {
    return undefined // gone between the listing and the read
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

const procPids = (): ReadonlyArray<number> => {
  try {
    return readdirSync("/proc").flatMap((name) => (/^\d+$/.test(name) ? [Number(name)] : []))
  } catch {
    return []
  }
}

/** Every byte of a small /proc file, or "" once it is gone; it reads through statBuffer, a long file in more reads. */
const readProcFile = (file: string): string => {
  let fd: number | undefined
  try {
    fd = openSync(file, "r")
    let text = ""
    for (let n = readSync(fd, statBuffer, 0, statBuffer.length, null); n > 0; ) {
      text += statBuffer.toString("latin1", 0, n)
      n = readSync(fd, statBuffer, 0, statBuffer.length, null)
    }
    return text
  } catch {
    return ""
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Whether this kernel lists a thread's children (CONFIG_PROC_CHILDREN); asked once, of this process's main thread. */
let childrenFiles: boolean | undefined
const hasChildrenFiles = (): boolean => (childrenFiles ??= existsSync(`/proc/self/task/${process.pid}/children`))

/**
 * The children of a process, from each of its threads' files: a child forked by another thread than the main one
 * (codex is Rust on tokio) is listed only in the file of the thread that forked it.
 */
const childrenOf = (pid: number): ReadonlyArray<number> => {
  let tids: ReadonlyArray<string>
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return [] // gone since its stat was read
  }
  return tids.flatMap((tid) =>
    readProcFile(`/proc/${pid}/task/${tid}/children`)
      .split(" ")
      .flatMap((text) => toInt(text) ?? [])
  )
}

/**
 * The roots and everything below them, walked down through the children files. A child whose stat names another
 * parent is not followed: its pid was reused between the two reads, by a process that is not of these trees.
 */
const walkTrees = (rootPids: ReadonlyArray<number>): ReadonlyArray<ProcessInfo> => {
  const found = new Map<number, ProcessInfo>()
  const visit = (pid: number, parent: number | undefined) => {
    if (found.has(pid)) return
    const info = readStat(pid)
    if (info !== undefined && (parent === undefined || info.ppid === parent)) found.set(pid, info)
  }
  for (const pid of new Set(rootPids)) if (Number.isSafeInteger(pid) && pid > 0) visit(pid, undefined)
  // A Map iterates the entries added while it iterates: this is the breadth-first walk.
  for (const info of found.values()) {
    if (!isZombie(info)) for (const child of childrenOf(info.pid)) visit(child, info.pid)
  }
  return [...found.values()]
}

// LC_ALL=C keeps lstart in one fixed format, so the same process always yields the same start time.
const runPs = (args: ReadonlyArray<string>): Promise<ReadonlyArray<ProcessInfo>> =>
  new Promise((resolve) => {
    execFile("ps", [...args], { env: { ...process.env, LC_ALL: "C" } }, (_error, stdout) =>
      // `ps -p` exits 1 when none of the pids exist; its output is still the truth.
      resolve(parsePsOutput(String(stdout)))
    )
  })

const PS_COLUMNS = "pid=,ppid=,pgid=,stat=,lstart="

/** Every process on the machine (zombies included, marked by `state`). Empty on Windows. */
export const snapshot: Effect.Effect<ReadonlyArray<ProcessInfo>> = Effect.suspend(() => {
  if (isWindows) return Effect.succeed([])
  if (!isLinux) return Effect.promise(() => runPs(["-A", "-o", PS_COLUMNS]))
  return Effect.sync(() => procPids().flatMap((pid) => readStat(pid) ?? []))
})

/**
 * The processes of the trees under `rootPids`, the roots included (zombies too, marked by `state`): a partial table
 * for a look that needs only those trees. On Linux it reads only their /proc files: with ~200 processes on the
 * machine, a look at one agent's tree of 4 took 0.4 ms of CPU where the whole snapshot took 6.1 ms. Where the kernel
 * lists no children (no CONFIG_PROC_CHILDREN), and off Linux, it is the whole snapshot: a caller may get more rows.
 */
export const treesOf = (rootPids: ReadonlyArray<number>): Effect.Effect<ReadonlyArray<ProcessInfo>> =>
  Effect.suspend(() => (isLinux && hasChildrenFiles() ? Effect.sync(() => walkTrees(rootPids)) : snapshot))

/** The live (non-zombie) processes among `pids`, by pid. */
export const identities = (pids: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, ProcessInfo>> =>
  Effect.promise(async () => {
    const wanted = [...new Set(pids)].filter((pid) => Number.isSafeInteger(pid) && pid > 0)
    if (wanted.length === 0 || isWindows) return new Map()
    const rows = isLinux ? wanted.map(readStat) : await runPs(["-o", PS_COLUMNS, "-p", wanted.join(",")])
    return new Map(rows.flatMap((row) => (row === undefined || isZombie(row) ? [] : [[row.pid, row] as const])))
  })

/** `{pid, pgid, startTime}` of a live process, or undefined once it is gone (or only a zombie). */
export const identity = (pid: number): Effect.Effect<ProcessRecord | undefined> =>
  Effect.map(identities([pid]), (found) => {
    const info = found.get(pid)
    return info === undefined ? undefined : { pid: info.pid, pgid: info.pgid, startTime: info.startTime }
  })

/** All descendants of the given pids (not the roots themselves), found through parent links in one snapshot. */
export const descendantsOf = (
  rootPids: ReadonlyArray<number>,
  table: ReadonlyArray<ProcessInfo>
): ReadonlyArray<ProcessInfo> => {
  const children = new Map<number, Array<ProcessInfo>>()
  for (const info of table) {
    const siblings = children.get(info.ppid)
    if (siblings === undefined) children.set(info.ppid, [info])
    else siblings.push(info)
  }
  const seen = new Set<number>(rootPids)
  const found: Array<ProcessInfo> = []
  const queue = [...rootPids]
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child.pid)) continue
      seen.add(child.pid)
      found.push(child)
      queue.push(child.pid)
    }
  }
  return found
}

/** A record is still its process when the pid is alive with the same kernel start time. */
export const matches = (record: ProcessRecord, current: ProcessInfo | undefined): current is ProcessInfo =>
  current !== undefined && current.startTime === record.startTime && !isZombie(current)

const toRecord = (info: ProcessInfo): ProcessRecord => ({ pid: info.pid, pgid: info.pgid, startTime: info.startTime })

const sendSignal = (target: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(target, signal)
  } catch {
    // Gone already (ESRCH) or not ours (EPERM): either way there is nothing more to do for it.
  }
}

/** Our own group and session must never be signalled: a record sharing them would take Core down with it. */
const protectedGroups = (table: ReadonlyMap<number, ProcessInfo>): ReadonlySet<number> => {
  const self = table.get(process.pid)
  return new Set([0, 1, self?.pgid ?? process.pid])
}

/** Signals the groups of the still-matching records, then each of them by pid (a setsid child has left the group). */
const signalLive = (
  live: ReadonlyArray<ProcessInfo>,
  signal: NodeJS.Signals,
  protectedPgids: ReadonlySet<number>
): void => {
  for (const pgid of new Set(live.map((info) => info.pgid))) {
    if (!protectedPgids.has(pgid)) sendSignal(-pgid, signal)
  }
  for (const info of live) if (info.pid !== process.pid && info.pid > 1) sendSignal(info.pid, signal)
}

/** Sends `signal` to the process groups of the records that are still alive and still themselves. */
export const signalGroups = (records: ReadonlyArray<ProcessRecord>, signal: NodeJS.Signals): Effect.Effect<void> =>
  Effect.map(identities([...records.map((r) => r.pid), process.pid]), (table) => {
    const protectedPgids = protectedGroups(table)
    const pgids = new Set(records.flatMap((r) => (matches(r, table.get(r.pid)) ? [table.get(r.pid)!.pgid] : [])))
    for (const pgid of pgids) if (!protectedPgids.has(pgid)) sendSignal(-pgid, signal)
  })

/** The records still alive right now. */
export const liveRecords = (records: ReadonlyArray<ProcessRecord>): Effect.Effect<ReadonlyArray<ProcessRecord>> =>
  Effect.map(identities(records.map((r) => r.pid)), (table) =>
    records.filter((r) => matches(r, table.get(r.pid))).map((r) => toRecord(table.get(r.pid)!))
  )

const waitUntilGone = (targets: ReadonlyArray<ProcessRecord>, ms: number) =>
  Effect.gen(function* () {
    let live = yield* liveRecords(targets)
    for (let waited = 0; live.length > 0 && waited < ms; waited += POLL_MS) {
      yield* Effect.sleep(POLL_MS)
      live = yield* liveRecords(live)
    }
    return live
  })

/** The records still alive, plus their current descendants and fellow group members: the tree to kill. */
const expand = (
  records: ReadonlyArray<ProcessRecord>,
  table: ReadonlyArray<ProcessInfo>,
  protectedPgids: ReadonlySet<number>
) => {
  const byPid = new Map(table.map((info) => [info.pid, info]))
  const live = records.flatMap((r) => {
    const current = byPid.get(r.pid)
    return matches(r, current) ? [current] : []
  })
  const groups = new Set(live.map((info) => info.pgid).filter((pgid) => !protectedPgids.has(pgid)))
  const members = table.filter((info) => groups.has(info.pgid) && !isZombie(info))
  const below = descendantsOf(
    live.map((info) => info.pid),
    table
  ).filter((info) => !isZombie(info))
  const all = new Map([...live, ...members, ...below].map((info) => [info.pid, info]))
  all.delete(process.pid)
  return [...all.values()]
}

/**
 * Kills the recorded processes and everything currently below them: `signal` (SIGTERM) to each live process group
 * and each pid, up to `graceMs` for them to go, then SIGKILL to the survivors. A record whose pid now belongs to a
 * different process (another start time) is skipped, and so is its group.
 */
export const killTree = (records: ReadonlyArray<ProcessRecord>, options: KillOptions = {}): Effect.Effect<KillReport> =>
  Effect.gen(function* () {
    const table = yield* snapshot
    const protectedPgids = protectedGroups(new Map(table.map((info) => [info.pid, info])))
    const targets = expand(records, table, protectedPgids)
    if (targets.length === 0) return { signalled: [], forced: [], remaining: [] }
    signalLive(targets, options.signal ?? "SIGTERM", protectedPgids)
    const survivors = yield* waitUntilGone(targets.map(toRecord), options.graceMs ?? 1_000)
    if (survivors.length === 0) return { signalled: targets.map((t) => t.pid), forced: [], remaining: [] }
    const current = yield* identities(survivors.map((r) => r.pid))
    signalLive(
      survivors.flatMap((r) => (matches(r, current.get(r.pid)) ? [current.get(r.pid)!] : [])),
      "SIGKILL",
      protectedPgids
    )
    const remaining = yield* waitUntilGone(survivors, SIGKILL_WAIT_MS)
    return {
      signalled: targets.map((t) => t.pid),
      forced: survivors.map((r) => r.pid),
      remaining: remaining.map((r) => r.pid)
    }
  })
