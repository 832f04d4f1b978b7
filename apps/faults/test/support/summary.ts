/**
 * The fault suite's global setup: makes the directory every probe writes its row into (handed to the workers with
 * vitest's `provide`) and, after the last file, prints the one summary table of all rows. It runs in vitest's main
 * process, the only place that outlives every file's worker; a probe that crashed before writing its row is
 * simply missing from the table (its file's failure says why).
 */
import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { readRows, summaryTable } from "@pedelec/test-kit/faults/Rows"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    faultsRows: string
  }
}

let dir: string | undefined

export const setup = async (project: TestProject): Promise<void> => {
  dir = await mkdtemp(path.join(os.tmpdir(), "pedelec-faults-rows-"))
  project.provide("faultsRows", dir)
}

export const teardown = async (): Promise<void> => {
  if (dir === undefined) return
  const rows = await readRows(dir)
  process.stdout.write(`\n=== fault table (issue 14) ===\n${summaryTable(rows)}\n`)
  await rm(dir, { recursive: true, force: true })
}
