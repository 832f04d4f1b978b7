// The pull-request workflow's selection: `nx affected` must pick a changed project and every project that depends on
// it (read from `nx graph`, not listed here, so a new dependent is covered), and nothing for a change to the docs.
// It asks Nx for the targets the workflow names (read from the workflow: Nx 24 selects by target inputs, so the sdk's
// `docs` target, whose inputs are the docs, is selected by a doc change while its tests are not), with the changed
// files given (`--files`), so the working tree's own uncommitted changes do not count. It runs no target.

import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
// Each Nx call computes the project graph without a daemon: seconds, more on two busy cores.
const NX_MS = 120_000
const NX_ENV = { ...process.env, NX_DAEMON: "false", NX_NO_CLOUD: "true", NX_TUI: "false" }

const scratch = await mkdtemp(path.join(os.tmpdir(), "pedelec-affected-"))
afterAll(() => rm(scratch, { recursive: true, force: true }))

const nx = async (args: ReadonlyArray<string>): Promise<string> => {
  const bin = path.join(ROOT, "node_modules/.bin/nx")
  const run = await promisify(execFile)(bin, [...args], { cwd: ROOT, env: NX_ENV, maxBuffer: 64 * 1024 * 1024 })
  return run.stdout
}

/** The targets of the workflow's `nx affected -t … --base` step. */
const workflowTargets = async (): Promise<ReadonlyArray<string>> => {
  const workflow = await readFile(path.join(ROOT, ".github/workflows/ci.yml"), "utf8")
  const targets = /nx affected -t ([\w -]+?) --base/.exec(workflow)?.[1]?.split(" ")
  if (targets === undefined) throw new Error("ci.yml has no `nx affected -t <targets> --base` step; update this test")
  return targets
}

const affected = async (files: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const targets = await workflowTargets()
  const args = ["show", "projects", "--affected", "-t", ...targets, `--files=${files.join(",")}`, "--json"]
  return (JSON.parse(await nx(args)) as Array<string>).slice().sort()
}

type Graph = { readonly graph: { readonly dependencies: Record<string, ReadonlyArray<{ readonly target: string }>> } }

/** `project` and every project that depends on it, directly or through others, from `nx graph`. */
const withDependents = async (project: string): Promise<ReadonlyArray<string>> => {
  const file = path.join(scratch, "graph.json")
  await nx(["graph", `--file=${file}`])
  const edges = Object.entries((JSON.parse(await readFile(file, "utf8")) as Graph).graph.dependencies)
  const selected = new Set([project])
  for (let grew = true; grew; ) {
    grew = false
    for (const [source, targets] of edges) {
      if (selected.has(source) || !targets.some((edge) => selected.has(edge.target))) continue
      selected.add(source)
      grew = true
    }
  }
  return [...selected].sort()
}

describe("nx affected, for the targets the pull-request workflow runs", () => {
  it(
    "selects the SDK and every project that depends on it for a change under libs/sdk",
    async () => {
      const [selected, expected] = await Promise.all([affected(["libs/sdk/src/index.ts"]), withDependents("sdk")])
      expect(expected).toContain("demo")
      expect(expected).toContain("e2e")
      expect(selected).toEqual(expected)
    },
    NX_MS
  )

  it(
    "selects no project for a change to the docs",
    async () => {
      const docs = ["README.md", "AGENTS.md", "docs/ARCHITECTURE.md", "docs/PROVIDERS.md", "docs/guide/README.md"]
      expect(await affected(docs)).toEqual([])
    },
    NX_MS
  )
})
