/**
 * Stats — the bench's arithmetic, once for every scenario: order statistics of a sample of times (median, p99,
 * range), a throughput from a count, bytes and a duration, and the round-robin timing of spawned commands that the
 * start-up figures use. It does not print or record anything (Report does) and knows nothing of Pedelec.
 */
import { spawn } from "node:child_process"

export interface Stats {
  readonly median: number
  readonly p99: number
  readonly min: number
  readonly max: number
  readonly n: number
}

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (samples: ReadonlyArray<number>): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const stats = (samples: ReadonlyArray<number>): Stats => {
  if (samples.length === 0) throw new Error("no samples")
  const sorted = [...samples].sort((a, b) => a - b)
  // p99 is the sample at that rank, not an interpolation: with 30 samples it is the slowest one, as it should read.
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!
  return { median: median(sorted), p99, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length }
}

export const MB = 1e6

export interface Rate {
  readonly perSecond: number
  readonly mbPerSecond: number
  readonly ms: number
  readonly n: number
}

export const rate = (messages: number, bytes: number, ms: number): Rate => ({
  perSecond: (messages * 1000) / ms,
  mbPerSecond: (bytes / MB) * (1000 / ms),
  ms,
  n: messages
})

export interface Command {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The whole environment (nothing inherited) when given; this process's otherwise. */
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  /** What the run must end with, so a failing case cannot pass for a fast one; unchecked when absent. */
  readonly check?: { readonly exit: number; readonly stdout?: string }
}

/** Milliseconds from spawn to exit (to "close" when stdout is checked, which also reads it to the end). */
export const timeSpawn = (c: Command) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(c.command, [...c.args], {
      // A checked run's stderr is what explains its failure; an unchecked one may fail on purpose, quietly.
      stdio: c.check === undefined ? "ignore" : ["ignore", "pipe", "inherit"],
      ...(c.env === undefined ? {} : { env: c.env }),
      ...(c.cwd === undefined ? {} : { cwd: c.cwd })
    })
    child.once("error", reject)
    if (c.check === undefined) {
      child.once("exit", () => resolve(performance.now() - started))
      return
    }
    const { exit, stdout } = c.check
    let out = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
    })
    child.once("close", (code) => {
      const elapsed = performance.now() - started
      if (code === exit && (stdout === undefined || out === stdout)) resolve(elapsed)
      else reject(new Error(`${c.command} ${c.args.join(" ")}: exit ${code}, stdout ${JSON.stringify(out)}`))
    })
  })

/**
 * `runs` timings of each command, round robin after one untimed run of each (the file cache), so a machine busy
 * with other work slows every case alike.
 */
export const roundRobin = async (commands: ReadonlyArray<Command>, runs: number): Promise<Array<Stats>> => {
  const times = commands.map((): Array<number> => [])
  for (const c of commands) await timeSpawn(c)
  for (let i = 0; i < runs; i++) for (const [j, c] of commands.entries()) times[j]!.push(await timeSpawn(c))
  return times.map(stats)
}
