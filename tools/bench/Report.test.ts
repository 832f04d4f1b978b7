// What the bench's numbers rest on: the order statistics, that every ratio printed is recorded under its name (and
// a name only once), and how results.json is replaced by a whole run and updated by a partial one.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { type Results, report, writeResults } from "./Report.ts"
import { median, stats } from "./Stats.ts"

const printed = (run: () => void): Array<string> => {
  const lines: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => lines.push(String(chunk)) > 0)
  try {
    run()
  } finally {
    spy.mockRestore()
  }
  return lines
}

describe("Stats", () => {
  it("takes the middle value, or the mean of the two middle ones", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
  })

  it("reads p99 as the sample at that rank: the slowest of 30", () => {
    const samples = Array.from({ length: 30 }, (_, i) => 30 - i)
    expect(stats(samples)).toEqual({ median: 15.5, p99: 30, min: 1, max: 30, n: 30 })
  })
})

describe("Report", () => {
  const floor = stats([1, 2, 4])
  const ours = stats([3, 6, 8])

  it("records each ratio it prints, under the names given", () => {
    const results: Results = new Map()
    const lines = printed(() => report(results, 10).ratio("x / floor", ours, floor, ["x_vs_floor", "x_p99_vs_floor"]))
    expect(lines).toEqual(["  x / floor  3.00× median, 2.00× p99\n"])
    expect([...results]).toEqual([
      ["x_vs_floor", 3],
      ["x_p99_vs_floor", 2]
    ])
  })

  it("refuses a name recorded twice, so two ratios cannot share one", () => {
    const out = report(new Map(), 10)
    printed(() => out.factors("a", [{ name: "same", value: 1 }]))
    expect(() => out.factors("b", [{ name: "same", value: 2 }])).toThrow(/same twice/)
  })
})

describe("writeResults", () => {
  const dirs: Array<string> = []
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))
  const file = async (content: object) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-bench-test-"))
    dirs.push(dir)
    await writeFile(path.join(dir, "results.json"), JSON.stringify(content))
    return path.join(dir, "results.json")
  }
  const read = async (at: string) => JSON.parse(await readFile(at, "utf8")) as Record<string, number>

  it("replaces the file after a whole run, rounded to 3 decimals", async () => {
    const at = await file({ old: 1 })
    await writeResults(new Map([["a", 1 / 3]]), true, at)
    expect(await read(at)).toEqual({ a: 0.333 })
  })

  it("updates only the names a partial run measured, and drops one it could not compute", async () => {
    const at = await file({ kept: 1, a: 5, gone: 2 })
    const spy = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    await writeResults(
      new Map([
        ["a", 2],
        ["gone", Number.NaN]
      ]),
      false,
      at
    )
    spy.mockRestore()
    expect(await read(at)).toEqual({ kept: 1, a: 2 })
  })
})
