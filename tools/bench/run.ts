/**
 * run — `npm run bench` (after `npm run build`): Pedelec's hot paths next to the bare floor each stands on, measured
 * in the same run on the same machine, so the ratios mean something where absolute times do not (a shared 2-core
 * box). Every ratio printed is also written to tools/bench/results.json, by a stable name, for a check to read.
 *   tsx tools/bench/run.ts                       every scenario, in this order; results.json replaced
 *   tsx tools/bench/run.ts ipc deno              only those; their names updated in results.json, others kept
 *   tsx tools/bench/run.ts providers codex       a scenario's own arguments follow its name
 * It owns the choice and order of scenarios only; each scenario file owns its measurement and its lines.
 */
import path from "node:path"
import { assets } from "./Assets.ts"
import { chain } from "./Chain.ts"
import { cli } from "./Cli.ts"
import { deno } from "./Deno.ts"
import { ipc } from "./Ipc.ts"
import { mcp } from "./Mcp.ts"
import { mcpScale } from "./McpScale.ts"
import { providers } from "./Providers.ts"
import { RESULTS_FILE, type Results, writeResults } from "./Report.ts"
import { scale } from "./Scale.ts"

type Scenario = (results: Results, args: ReadonlyArray<string>) => Promise<void>

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  cli,
  mcp,
  "mcp-scale": mcpScale,
  ipc,
  scale,
  deno,
  chain,
  providers,
  assets
}

/** Scenario names, each followed by its own arguments; none means all of them. */
const parse = (argv: ReadonlyArray<string>): Map<string, Array<string>> => {
  const chosen = new Map<string, Array<string>>()
  let current: Array<string> | undefined
  for (const word of argv) {
    if (word in SCENARIOS) {
      current = chosen.get(word) ?? []
      chosen.set(word, current)
    } else if (current !== undefined) current.push(word)
    else throw new Error(`unknown scenario "${word}"; one of: ${Object.keys(SCENARIOS).join(", ")}`)
  }
  return chosen
}

const main = async () => {
  const chosen = parse(process.argv.slice(2))
  const whole = chosen.size === 0
  const results: Results = new Map()
  try {
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      const args = whole ? [] : chosen.get(name)
      if (args === undefined) continue
      // One failing scenario does not hide the others' figures; the run still fails.
      await scenario(results, args).catch((error: unknown) => {
        process.stderr.write(
          `bench: ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`
        )
        process.exitCode = 1
      })
    }
  } finally {
    const written = await writeResults(results, whole)
    console.log(`${written} ratios → ${path.relative(process.cwd(), RESULTS_FILE)}${whole ? "" : " (updated)"}`)
  }
}

await main()
