/**
 * Fuzzed pedelec-cli argv: its argument parser (apps/cli Args, the first thing every run does) fed 10,000 seeded
 * argv and environments in-process — the real commands and flags in random order and arity, JSON arguments of
 * hostile shapes and 10,000-deep nesting, noise — and then 50 of the same kind through the real built pedelec-cli
 * against a real Core, as an agent shell runs it (with a thread id and capability Core never issued). Expected:
 * the parser never throws and every refusal is a usage error; every real run exits non-zero with exactly one JSON
 * line on stdout whose error carries a contracts code (INTERNAL_ERROR is a crash, not an answer).
 */
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { parseArgs } from "@pedelec/cli/src/Args"
import { removeHome, runCli, startCore, stopCore } from "@pedelec/test-kit/core/Harness"
import { casesOf, deepText, faultSeed, hostileValue, safeStringify } from "@pedelec/test-kit/faults/Hostile"
import fc from "fast-check"
import { afterAll, beforeAll, expect, test } from "vitest"
import { contractsCodeOf, fuzzRow, record, tallier, tallyCases, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const SPAWNS = 50
const SPAWN_CONCURRENCY = 4
const seed = faultSeed()

const WORDS = [
  "tool-list",
  "tool-spec",
  "tool-call",
  "settings",
  "get",
  "set",
  "providers",
  "install-native-host",
  "uninstall-native-host",
  "--thread-id",
  "--json",
  "--rescan",
  "--browser",
  "--extension-id",
  "--",
  "-x",
  "--thread-id=",
  "ollama.apiKey"
]

const jsonArg = fc.oneof(
  hostileValue.map(safeStringify),
  fc.constantFrom(deepText(10_000), `{"a":${deepText(10_000)}}`, "{", "{}", '{"a":1}', "null", "[]")
)
const word = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 2, arbitrary: jsonArg },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) }
)
const argv = fc.array(word, { maxLength: 6 })
const env = fc.record({ PEDELEC_THREAD_ID: fc.option(fc.string({ maxLength: 70 }), { nil: undefined }) })

const KNOWN = new Set([
  "ToolList",
  "ToolSpec",
  "ToolCall",
  "SettingsGet",
  "SettingsSet",
  "Providers",
  "Help",
  "Version"
])
const parsedVerdict = ([args, environment]: readonly [Array<string>, Record<string, string | undefined>]): Verdict => {
  const parsed = parseArgs(args, environment)
  if (parsed._tag === "UsageError")
    return typeof parsed.message === "string" && parsed.message !== ""
      ? { outcome: "usage error", ok: true }
      : { outcome: "usage error without a message", ok: false, note: JSON.stringify(args).slice(0, 200) }
  if (parsed._tag === "InstallNativeHost" || parsed._tag === "UninstallNativeHost")
    return { outcome: "native-host command", ok: true }
  return KNOWN.has(parsed._tag) ? { outcome: parsed._tag, ok: true } : { outcome: "unknown result", ok: false }
}

test(`pedelec-cli's argument parser: ${CASES} fuzzed argv, never a throw (seed ${seed})`, async () => {
  const tally = await tallyCases(casesOf(fc.tuple(argv, env), seed, CASES), parsedVerdict)
  const row = await record(fuzzRow("fuzz: pedelec-cli argv (parser)", tally, seed, CASES, "0 throws"), tally.offenders)
  expect(tally.offenders).toEqual([])
  expect(row.pass).toBe(true)
})

// The agent commands only: the others change this machine (native host manifests) or start a Core of their own.
const agentArgv = fc.tuple(
  fc.constantFrom(["tool-list"], ["tool-spec", "add"], ["tool-call", "add"], ["tool-call"], ["tool-spec"]),
  fc.array(jsonArg, { maxLength: 2 }),
  fc.constantFrom([], ["--json"], ["--thread-id"], ["--", "x"])
)

let core: Awaited<ReturnType<typeof startCore>> | undefined
beforeAll(async () => {
  core = await startCore()
})
afterAll(async () => {
  if (core === undefined) return
  await stopCore(core)
  await removeHome(core.home)
})

const spawnVerdict = async (args: ReadonlyArray<string>, home: string): Promise<Verdict> => {
  const run = await runCli(args, {
    PEDELEC_HOME: home,
    HOME: path.join(home, "user"),
    PEDELEC_THREAD_ID: "A".repeat(22),
    PEDELEC_SESSION_CAP: "B".repeat(43)
  })
  const lines = run.stdout.split("\n").filter((line) => line !== "")
  const note = `exit ${run.code} ${JSON.stringify(args).slice(0, 80)}: ${run.stdout.slice(0, 160)}`
  if (lines.length !== 1) return { outcome: "not one line", ok: false, note }
  const line = JSON.parse(lines[0]!) as { readonly ok?: boolean; readonly error?: unknown }
  const code = contractsCodeOf(line.error)
  if (line.ok !== false || code === undefined || run.code === 0) return { outcome: "uncoded", ok: false, note }
  return { outcome: code, ok: true }
}

test(`pedelec-cli run for real: ${SPAWNS} fuzzed argv against a real Core, each one coded JSON line (seed ${seed})`, async () => {
  const home = core!.home
  await mkdir(path.join(home, "user"), { recursive: true })
  // The crash first (arguments nested 10,000 deep), then random ones.
  const fixed = [["tool-call", "add", `{"a":${deepText(10_000)}}`]]
  const random = casesOf(agentArgv, seed, SPAWNS - fixed.length).map(([command, rest, flags]) => [
    ...flags,
    ...command,
    ...rest
  ])
  const cases = [...fixed, ...random]
  const { add, tally } = tallier()
  for (let start = 0; start < cases.length; start += SPAWN_CONCURRENCY) {
    const batch = cases.slice(start, start + SPAWN_CONCURRENCY)
    const verdicts = await Promise.all(batch.map((args) => spawnVerdict(args, home)))
    for (const [i, verdict] of verdicts.entries()) add(start + i, verdict)
  }
  const done = tally()
  const row = await record(
    fuzzRow("fuzz: pedelec-cli argv (real runs)", done, seed, SPAWNS, "exit ≠ 0, one JSON line, a contracts code"),
    done.offenders
  )
  expect(done.offenders).toEqual([])
  expect(row.pass).toBe(true)
})
