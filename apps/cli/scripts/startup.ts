// Start-up benchmark, hyperfine-style: runs each command N times (default 30) and prints medians. Compares plain
// `node -e ""` with the built CLI's `--version` (the fast path), a one-chunk eager bundle's `--version` (what the
// lazy chunk saves), `tool-list` with no Core (loads the effect chunk, reads core.json, exits 3) and a full
// `tool-call` round trip against the in-test FakeCore. Usage: npm run build && tsx scripts/startup.ts [runs]
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { CAPABILITY, SESSION_ID, startFakeCore } from "../test/FakeCore.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const runs = Number(process.argv[2] ?? 30)
const bundle = path.join(root, "dist", "pedelec-cli.mjs")

const once = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve(Number(process.hrtime.bigint() - started) / 1e6))
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface Case {
  readonly label: string
  readonly args: ReadonlyArray<string>
  readonly env?: Record<string, string>
}

/** Round robin, so a machine busy with other work slows every case alike. */
const measure = async (cases: ReadonlyArray<Case>) => {
  const times = cases.map((): Array<number> => [])
  for (const c of cases) await once(c.args, c.env ?? {}) // warm the file cache
  for (let i = 0; i < runs; i++) for (const [j, c] of cases.entries()) times[j]!.push(await once(c.args, c.env ?? {}))
  return cases.map((c, j) => ({ label: c.label, median: median(times[j]!), min: Math.min(...times[j]!) }))
}

const scratch = mkdtempSync(path.join(os.tmpdir(), "pedelec-cli-bench-"))
const eager = path.join(scratch, "eager.mjs")
await build({
  absWorkingDir: root,
  // The same program with Program imported statically: what one chunk would cost on the fast path.
  stdin: {
    contents: `import { parseArgs } from "./src/Args.ts"
import { run } from "./src/Program.ts"
const parsed = parseArgs(process.argv.slice(2), process.env)
if (parsed._tag === "Version") process.stdout.write("0.1.0\\n")
else if (parsed._tag !== "Help" && parsed._tag !== "UsageError") run(parsed, "0.1.0")`,
    resolveDir: root,
    loader: "ts"
  },
  outfile: eager,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  logLevel: "error"
})
const fake = await startFakeCore()
const agentEnv = { PEDELEC_HOME: fake.home, PEDELEC_THREAD_ID: SESSION_ID, PEDELEC_SESSION_CAP: CAPABILITY }
const empty = path.join(scratch, "empty.mjs")
writeFileSync(empty, "")
const results = await measure([
  { label: 'node -e ""', args: ["-e", ""] },
  { label: "node empty.mjs", args: [empty] },
  { label: "pedelec-cli --version (lazy chunk)", args: [bundle, "--version"] },
  { label: "eager one-chunk bundle --version", args: [eager, "--version"] },
  {
    label: "pedelec-cli tool-list, no Core (exit 3)",
    args: [bundle, "tool-list"],
    env: { ...agentEnv, PEDELEC_HOME: scratch }
  },
  {
    label: "pedelec-cli tool-call echo (round trip)",
    args: [bundle, "tool-call", "echo", '{"text":"x"}'],
    env: agentEnv
  }
])
await fake.close()
rmSync(scratch, { recursive: true, force: true })
rmSync(fake.home, { recursive: true, force: true })

const base = results[0]!.median
console.log(`${runs} runs each, node ${process.version}, ${os.cpus().length} CPUs`)
for (const r of results)
  console.log(
    `${r.label.padEnd(42)} median ${r.median.toFixed(1).padStart(6)} ms  min ${r.min.toFixed(1).padStart(6)} ms  ${(r.median / base).toFixed(2)}x`
  )
