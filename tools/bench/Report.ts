/**
 * Report — how every scenario prints and records: the row of a measurement, a ratio next to its floor, and the
 * results file. A ratio is printed and recorded by the same call, under a stable snake_case name, so each one
 * printed is in `tools/bench/results.json` and nothing else is. It does not measure (Stats, the scenarios do).
 */
import { readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import type { Rate, Stats } from "./Stats.ts"

export const RESULTS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), "results.json")

/** Every ratio of a run, by name, in the order printed. */
export type Results = Map<string, number>

/** One ratio: its name in the results file and its value (ours / floor, or floor-relative throughput). */
export interface Factor {
  readonly name: string
  readonly value: number
}

export interface Report {
  readonly say: (line: string) => void
  /** A sample of times: median, p99 and its size. */
  readonly row: (label: string, s: Stats) => void
  readonly rateRow: (label: string, r: Rate) => void
  readonly msRow: (label: string, ms: number, note?: string) => void
  /** A label and cells of `cellWidth` characters, for the tables with two columns (first event, completion). */
  readonly columns: (label: string, cells: ReadonlyArray<string>, cellWidth: number) => void
  /** `ours / floor` as "X× median, Y× p99", recorded as `names[0]` and `names[1]`. */
  readonly ratio: (label: string, ours: Stats, floor: Stats, names: readonly [string, string]) => void
  /** `ours / floor` throughput as "X× msg/s, Y× MB/s", recorded as `names[0]` and `names[1]`. */
  readonly rateRatio: (label: string, ours: Rate, floor: Rate, names: readonly [string, string]) => void
  /** Amounts in `unit` (not ratios: CPU ms per call), recorded like ratios. */
  readonly amounts: (label: string, amounts: ReadonlyArray<Factor>, unit: string) => void
  /** Ratios already computed, one "X×" cell of `cellWidth` characters each. */
  readonly factors: (label: string, factors: ReadonlyArray<Factor>, cellWidth?: number, digits?: number) => void
}

// Not console: one writer for every line, so a scenario's report is plain stdout in order.
const say = (line: string) => {
  process.stdout.write(`${line}\n`)
}

const times = (value: number, digits = 2) => `${value.toFixed(digits)}×`
/** Milliseconds; a socket round trip of 12 µs would read 0.01 in two digits, so below 0.1 ms it gets three. */
const millis = (value: number) => value.toFixed(value < 0.1 ? 3 : 2).padStart(8)

/** A report whose labels are `width` characters wide, recording into `results`. */
export const report = (results: Results, width: number): Report => {
  const label = (text: string) => `  ${text.padEnd(width)}`
  const record = (factors: ReadonlyArray<Factor>) => {
    for (const { name, value } of factors) {
      if (results.has(name)) throw new Error(`the bench records ${name} twice`)
      results.set(name, value)
    }
  }
  return {
    say,
    row: (text, s) => say(`${label(text)} median ${millis(s.median)} ms   p99 ${millis(s.p99)} ms   n=${s.n}`),
    rateRow: (text, r) =>
      say(
        `${label(text)} ${r.perSecond.toFixed(0).padStart(8)} msg/s ${r.mbPerSecond.toFixed(2).padStart(8)} MB/s   n=${r.n} in ${r.ms.toFixed(0)} ms`
      ),
    msRow: (text, ms, note = "") =>
      say(`${label(text)} ${ms.toFixed(0).padStart(8)} ms${note === "" ? "" : `   ${note}`}`),
    columns: (text, cells, cellWidth) =>
      say(`${label(text)} ${cells.map((c) => c.padEnd(cellWidth)).join(" ")}`.trimEnd()),
    ratio: (text, ours, floor, [medianName, p99Name]) => {
      const factors = [
        { name: medianName, value: ours.median / floor.median },
        { name: p99Name, value: ours.p99 / floor.p99 }
      ]
      record(factors)
      say(`${label(text)} ${times(factors[0]!.value)} median, ${times(factors[1]!.value)} p99`)
    },
    rateRatio: (text, ours, floor, [perSecondName, mbName]) => {
      const factors = [
        { name: perSecondName, value: ours.perSecond / floor.perSecond },
        { name: mbName, value: ours.mbPerSecond / floor.mbPerSecond }
      ]
      record(factors)
      say(`${label(text)} ${times(factors[0]!.value)} msg/s, ${times(factors[1]!.value)} MB/s`)
    },
    amounts: (text, amounts, unit) => {
      record(amounts)
      say(`${label(text)} ${amounts.map((a) => `${a.value.toFixed(2).padStart(8)} ${unit}`).join("   ")}`)
    },
    factors: (text, factors, cellWidth = 0, digits = 2) => {
      record(factors)
      say(`${label(text)} ${factors.map((f) => times(f.value, digits).padEnd(cellWidth)).join(" ")}`.trimEnd())
    }
  }
}

/**
 * Writes the ratios, rounded to 3 decimals. A whole run replaces the file; a run of some scenarios updates their
 * names and keeps the others', so one ratio can be re-measured alone while working on it.
 */
export const writeResults = async (results: Results, whole: boolean, file = RESULTS_FILE): Promise<number> => {
  const kept: Record<string, unknown> = whole
    ? {}
    : await readFile(file, "utf8").then(
        (text) => JSON.parse(text) as Record<string, unknown>,
        () => ({})
      )
  const written = { ...kept }
  for (const [name, value] of results) {
    // JSON has no NaN or Infinity: a ratio that could not be computed is left out (and said so), not written as null.
    if (Number.isFinite(value)) written[name] = Number(value.toFixed(3))
    else {
      delete written[name]
      process.stderr.write(`bench: ${name} is ${value}, not written\n`)
    }
  }
  await writeFile(file, `${JSON.stringify(written, null, 2)}\n`)
  return results.size
}
