/**
 * Watchdog — pedelec-deno's hard caps on a running script: the resident memory and the thread count of its whole
 * process tree (bubblewrap and Deno, every Worker a thread of Deno's), read from /proc every WATCH_INTERVAL_MS, and
 * the tree killed the moment either is over. Deno has no flag to deny `Worker` and V8's heap flag does not bound
 * ArrayBuffers or the other isolates, RLIMIT_AS breaks V8's address-space reservations, and RLIMIT_NPROC counts
 * every process of the user (nothing at all for root): so the caps are watched, not set. Measured on Deno 2.9: a
 * 3 GiB buffer and a Worker fork bomb ran to the 8 s timeout before (865 threads, 3.1 GiB); a script at rest has 7
 * threads and 34 MiB. It does not decide what a breach means to the agent (Run turns it into SCRIPT_RESOURCE_LIMIT).
 * Off Linux (no /proc) only Deno's heap flag stands. Its tree kill (`killTree`) is also how SIGINT/SIGTERM stop one.
 */
import { readdirSync, readFileSync } from "node:fs"

const MiB = 1024 * 1024

export interface ResourceCaps {
  /** Resident memory of the whole tree. */
  readonly memoryBytes: number
  /** Threads of the whole tree: Deno's own (7 at rest), one or two per Worker. */
  readonly threads: number
}

/** What a script may use (the policy Core hands out sets the time and output; these are pedelec-deno's own). */
export const RESOURCE_CAPS: ResourceCaps = { memoryBytes: 1024 * MiB, threads: 64 }

/** Often enough that a fork bomb is caught at tens of threads and a buffer at a few hundred MiB past the cap. */
export const WATCH_INTERVAL_MS = 50

export interface Breach {
  readonly limit: "memory" | "threads"
  /** The cap, in words (`256 MiB`, `64 threads`). */
  readonly max: string
  readonly observed: string
}

/** V8's old-space limit for each isolate: below the tree's cap, so a heap that only grows fails fast inside Deno. */
export const heapFlag = (caps: ResourceCaps) =>
  `--v8-flags=--max-old-space-size=${Math.max(16, Math.floor((caps.memoryBytes * 3) / 4 / MiB))}`

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** `root` and every descendant, by each task's `children` list (no scan of all of /proc). */
export const treeOf = (root: number): Array<number> => {
  const seen: Array<number> = []
  const queue = [root]
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    seen.push(pid)
    let tasks: Array<string>
    try {
      tasks = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tasks) {
      const children = read(`/proc/${pid}/task/${tid}/children`) ?? ""
      for (const child of children.split(" ")) if (child.trim() !== "") queue.push(Number(child))
    }
  }
  return seen
}

const field = (status: string, name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(status)?.[1] ?? 0)

/** Resident bytes and threads of the tree, as /proc says now. */
const usageOf = (pids: ReadonlyArray<number>) => {
  let rssBytes = 0
  let threads = 0
  for (const pid of pids) {
    const status = read(`/proc/${pid}/status`)
    if (status === undefined) continue
    rssBytes += field(status, "VmRSS") * 1024
    threads += field(status, "Threads")
  }
  return { rssBytes, threads }
}

const breachOf = (caps: ResourceCaps, pids: ReadonlyArray<number>): Breach | undefined => {
  const { rssBytes, threads } = usageOf(pids)
  if (threads > caps.threads)
    return { limit: "threads", max: `${caps.threads} threads`, observed: `${threads} threads` }
  if (rssBytes > caps.memoryBytes) {
    const mib = (bytes: number) => `${Math.round(bytes / MiB)} MiB`
    return { limit: "memory", max: mib(caps.memoryBytes), observed: mib(rssBytes) }
  }
  return undefined
}

const killAll = (pids: ReadonlyArray<number>) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
}

/**
 * Kills `root` and every descendant now (under bubblewrap the script is in a session of its own, out of reach of
 * a group kill), then waits, at most `waitMs`, until none of them is still a running process (its command line is
 * gone once it has exited): so a pedelec-deno that stops its script exits after it, not beside it.
 */
export const killTree = (root: number, waitMs = 1000): void => {
  const pids = treeOf(root)
  killAll(pids)
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let waited = 0; waited < waitMs; waited += 5) {
    if (pids.every((pid) => (read(`/proc/${pid}/cmdline`) ?? "") === "")) return
    Atomics.wait(pause, 0, 0, 5)
  }
}

/**
 * Watches the tree under `root` until stopped; on the first breach kills every process of it (the script's own
 * session under bubblewrap is not its group's) and reports it once. Returns the stopper.
 */
export const watch = (root: number, caps: ResourceCaps, onBreach: (breach: Breach) => void): (() => void) => {
  if (process.platform !== "linux") return () => undefined
  const timer = setInterval(() => {
    const pids = treeOf(root)
    const breach = breachOf(caps, pids)
    if (breach === undefined) return
    clearInterval(timer)
    killAll(pids)
    onBreach(breach)
  }, WATCH_INTERVAL_MS)
  return () => clearInterval(timer)
}
