/**
 * Rows — the fault table's bookkeeping: each probe of the fault suite writes one row (its trials, what was expected,
 * what was observed, pass or not, its seed and figures) as a JSON file into a directory the suite's global setup
 * made, because vitest runs each test file in its own worker and only the main process sees them all at the end.
 * `summaryTable` renders every row as one plain-text table, so the last thing a run prints is the whole table
 * rather than one line buried in each file's output. It knows nothing of what a probe does.
 */
import { randomUUID } from "node:crypto"
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"

export interface FaultRow {
  /** What was probed, e.g. "fuzz: native-host frames". */
  readonly probe: string
  readonly trials: number
  readonly expected: string
  readonly observed: string
  readonly pass: boolean
  /** The fast-check seed that replays it (PEDELEC_FAULTS_SEED), when the probe is random. */
  readonly seed?: number
  /** Extra figures a reader wants (latencies, RSS), printed with the row. */
  readonly figures?: Readonly<Record<string, number | string>>
}

/** Writes one row; a file per row, so parallel writers never share a file. */
export const writeRow = async (dir: string, row: FaultRow): Promise<void> => {
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, `${Date.now()}-${randomUUID()}.json`), JSON.stringify(row))
}

/** Every row written to `dir`, in the order they were written. */
export const readRows = async (dir: string): Promise<Array<FaultRow>> => {
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith(".json")).sort()
  return Promise.all(names.map(async (name) => JSON.parse(await readFile(path.join(dir, name), "utf8")) as FaultRow))
}

/** One line of figures, `key=value` separated by spaces, for a row's own print and the table's last column. */
export const figuresLine = (figures: FaultRow["figures"]): string =>
  Object.entries(figures ?? {})
    .map(([key, value]) => `${key}=${typeof value === "number" ? Number(value.toFixed(2)) : value}`)
    .join(" ")

const COLUMNS = ["probe", "trials", "expected", "observed", "pass"] as const

const cells = (row: FaultRow): Array<string> => [
  row.probe,
  String(row.trials),
  row.expected,
  row.observed,
  row.pass ? "PASS" : "FAIL"
]

/** The rows as an aligned table, a totals line under it. */
export const summaryTable = (rows: ReadonlyArray<FaultRow>): string => {
  const body = rows.map(cells)
  const widths = COLUMNS.map((name, i) => Math.max(name.length, ...body.map((cols) => cols[i]!.length)))
  const line = (cols: ReadonlyArray<string>) => cols.map((col, i) => col.padEnd(widths[i]!)).join(" | ")
  const rule = widths.map((width) => "-".repeat(width)).join("-|-")
  const failed = rows.filter((row) => !row.pass).length
  const seeds = [...new Set(rows.flatMap((row) => (row.seed === undefined ? [] : [row.seed])))]
  return [
    line(COLUMNS),
    rule,
    ...body.map(line),
    rule,
    `${rows.length} probes, ${rows.length - failed} pass, ${failed} fail; seed ${seeds.join(", ") || "none"}`
  ].join("\n")
}
