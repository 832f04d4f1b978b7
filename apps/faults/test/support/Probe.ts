/**
 * Probe — how a fault-suite test turns many trials into one row of the table: run each case, sort what it observed
 * into named outcomes, keep the first few offenders with their case index (with the printed seed, that replays
 * them), print the row's figures at once and write the row for the summary. Expectations stay in the test: a row
 * is written before the assertion that may fail, so a failing probe still shows in the table.
 */
import { isContractsCode } from "@pedelec/test-kit/faults/Codes"
import { type FaultRow, figuresLine, writeRow } from "@pedelec/test-kit/faults/Rows"
import { inject } from "vitest"

/** What one trial observed: an outcome name for the tally, and whether it is one the probe accepts. */
export interface Verdict {
  readonly outcome: string
  readonly ok: boolean
  /** For an offender: what it was, shortly. */
  readonly note?: string
}

export interface Tally {
  readonly trials: number
  readonly outcomes: Readonly<Record<string, number>>
  readonly bad: number
  /** The first offenders: case index, outcome, note. */
  readonly offenders: ReadonlyArray<string>
}

const KEPT_OFFENDERS = 5

/** An empty tally to add verdicts to, for probes whose trials arrive out of a loop's order. */
export const tallier = () => {
  const outcomes: Record<string, number> = {}
  const offenders: Array<string> = []
  let trials = 0
  let bad = 0
  const add = (index: number, verdict: Verdict) => {
    trials++
    outcomes[verdict.outcome] = (outcomes[verdict.outcome] ?? 0) + 1
    if (verdict.ok) return
    bad++
    if (offenders.length < KEPT_OFFENDERS) offenders.push(`#${index} ${verdict.outcome}: ${verdict.note ?? ""}`)
  }
  const tally = (): Tally => ({ trials, outcomes: { ...outcomes }, bad, offenders: [...offenders] })
  return { add, tally }
}

/** Runs `check` on every case in order and tallies the verdicts; a throw is the outcome "threw". */
export const tallyCases = async <A>(
  cases: ReadonlyArray<A>,
  check: (value: A, index: number) => Verdict | Promise<Verdict>
): Promise<Tally> => {
  const { add, tally } = tallier()
  for (const [index, value] of cases.entries()) {
    try {
      add(index, await check(value, index))
    } catch (error) {
      add(index, { outcome: "threw", ok: false, note: String(error).slice(0, 200) })
    }
  }
  return tally()
}

/** "coded 9990, success 10" — the tally's outcomes, largest first. */
export const outcomesLine = (tally: Tally): string =>
  Object.entries(tally.outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name} ${count}`)
    .join(", ")

/** Prints the row with its figures and offenders, and writes it for the summary table. */
export const record = async (row: FaultRow, offenders: ReadonlyArray<string> = []): Promise<FaultRow> => {
  const seed = row.seed === undefined ? "" : ` seed=${row.seed}`
  const lines = [
    `[faults] ${row.pass ? "PASS" : "FAIL"} ${row.probe}: ${row.trials} trials; expected ${row.expected}; observed ${row.observed}${seed}`,
    ...(row.figures === undefined ? [] : [`[faults]   ${figuresLine(row.figures)}`]),
    ...offenders.map((offender) => `[faults]   offender ${offender}`)
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  await writeRow(inject("faultsRows"), row)
  return row
}

/** The row of a fuzzer: passes when no case was an offender and there were at least `minimum` cases. */
export const fuzzRow = (probe: string, tally: Tally, seed: number, minimum: number, expected: string): FaultRow => ({
  probe,
  trials: tally.trials,
  expected: `≥ ${minimum} cases, ${expected}`,
  observed: outcomesLine(tally),
  pass: tally.bad === 0 && tally.trials >= minimum,
  seed
})

/** A wire error's code, when it is one of the contracts' codes (INTERNAL_ERROR counts as a crash, not a code). */
export const contractsCodeOf = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined
  const code = (error as { readonly code: unknown }).code
  return typeof code === "string" && isContractsCode(code) && code !== "INTERNAL_ERROR" ? code : undefined
}
