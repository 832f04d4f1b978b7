/**
 * Fuzzed provider output: every provider's output decoder (libs/providers/src/<cli>/<Cli>Events.ts — what turns a
 * CLI's stdout lines into events — and codex app-server's turn, CodexAppServer.ts, whose replies are also drained
 * after every line) fed 10,000 seeded lines each: lines of the CLI's own captured output
 * (libs/providers/test/fixtures, and test/codex/app-server) with one value somewhere swapped for a hostile one, the same lines cut short or
 * with invalid UTF-8, and pure hostile JSON. A fresh decoder every 50 lines, as a turn gets one. In-process: the
 * decoders are pure. Expected: never a throw, and every event they emit is a valid ProviderEvent (an error event's
 * code is a contracts code), because Core forwards these events to pages as they are.
 */
import { readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { AntigravityTurnDecoder } from "@pedelec/providers/antigravity/AntigravityEvents"
import { ClaudeTurnDecoder } from "@pedelec/providers/claude/ClaudeEvents"
import { CodexAppServerTurn } from "@pedelec/providers/codex/CodexAppServer"
import { CodexTurnDecoder } from "@pedelec/providers/codex/CodexEvents"
import { CursorTurnDecoder } from "@pedelec/providers/cursor/CursorEvents"
import { GeminiTurnDecoder } from "@pedelec/providers/gemini/GeminiEvents"
import type { OutputLine } from "@pedelec/providers/OutputLines"
import { AgentLoopDecoder } from "@pedelec/providers/ollama/OllamaEvents"
import { OpencodeTurnDecoder } from "@pedelec/providers/opencode/OpencodeEvents"
import type { TurnDecoder } from "@pedelec/providers/TurnProcess"
import { casesOf, faultSeed, hostileBytes, hostileValue, safeStringify } from "@pedelec/test-kit/faults/Hostile"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, test } from "vitest"
import { fuzzRow, record, tallyCases, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const LINES_PER_TURN = 50
const seed = faultSeed()
const providerTests = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../libs/providers/test")

/** The pedelec-agent loop has no capture: its lines are ProviderEvents, so a few of each kind stand in. */
const AGENT_LOOP_LINES = [
  { type: "session", providerSessionId: "s1" },
  { type: "delta", text: "hi" },
  { type: "tool_activity", name: "shell", detail: "ls" },
  { type: "usage", inputTokens: 1, outputTokens: 2 },
  { type: "error", code: "OLLAMA_UNAVAILABLE", message: "no" },
  { type: "completed", text: "done" }
]

/** A new app-server process's turn, begun as the adapter begins one; every decode also drains what it owes codex. */
const appServerTurn = (): TurnDecoder => {
  const turn = new CodexAppServerTurn(
    { next: 0 },
    { cwd: "/tmp/ws", sandbox: "workspace-write", approvalPolicy: "never" }
  )
  turn.begin("hi", true, undefined)
  return {
    counts: turn.counts,
    decode: (line) => {
      const events = turn.decode(line)
      turn.replies()
      return events
    }
  }
}

/** Each decoder, and the folder under libs/providers/test holding its CLI's captured lines. */
const DECODERS: ReadonlyArray<readonly [string, string, () => TurnDecoder]> = [
  ["antigravity", "fixtures/antigravity", () => new AntigravityTurnDecoder()],
  ["claude", "fixtures/claude", () => new ClaudeTurnDecoder()],
  ["codex", "fixtures/codex", () => new CodexTurnDecoder()],
  ["codex app-server", "codex/app-server", appServerTurn],
  ["cursor", "fixtures/cursor", () => new CursorTurnDecoder()],
  ["gemini", "fixtures/gemini", () => new GeminiTurnDecoder()],
  ["opencode", "fixtures/opencode", () => new OpencodeTurnDecoder()],
  ["ollama", "", () => new AgentLoopDecoder()]
]

/** Every JSON line the CLI printed in its captured fixtures (`folder` under libs/providers/test). */
const capturedLines = (folder: string): Array<unknown> => {
  const dir = path.join(providerTests, folder)
  const files = readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isFile() && entry.name.endsWith(".jsonl") ? [path.join(dir, entry.name)] : []
  )
  return files.flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as unknown]
        } catch {
          return []
        }
      })
  )
}

/** `value` with the node that `picks` walks to replaced by `replacement` (a copy; iterative, any depth). */
const swapped = (value: unknown, picks: ReadonlyArray<number>, replacement: unknown): unknown => {
  const root = structuredClone(value)
  let node: unknown = root
  for (const [step, pick] of picks.entries()) {
    if (typeof node !== "object" || node === null) break
    const keys = Object.keys(node)
    if (keys.length === 0) break
    const key = keys[pick % keys.length]!
    const child = (node as Record<string, unknown>)[key]
    const last = step === picks.length - 1 || typeof child !== "object" || child === null
    if (last) {
      ;(node as Record<string, unknown>)[key] = replacement
      return root
    }
    node = child
  }
  return replacement
}

const linesFor = (seeds: ReadonlyArray<unknown>) => {
  const mutated = fc
    .tuple(fc.constantFrom(...seeds), fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), hostileValue)
    .map(([line, picks, replacement]) => swapped(line, picks, replacement))
  return hostileBytes(fc.oneof({ weight: 3, arbitrary: mutated }, { weight: 1, arbitrary: hostileValue }))
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const asLine = (bytes: Buffer): OutputLine => {
  try {
    return { _tag: "Text", text: utf8.decode(bytes) }
  } catch {
    return { _tag: "Invalid", bytes: bytes.length }
  }
}

const isProviderEvent = Schema.is(ProviderEvent)

const runDecoder = (make: () => TurnDecoder) => {
  let decoder = make()
  return (bytes: Buffer, index: number): Verdict => {
    if (index % LINES_PER_TURN === 0) decoder = make()
    const events = decoder.decode(asLine(bytes))
    const invalid = events.find((event) => !isProviderEvent(event))
    if (invalid !== undefined)
      return { outcome: "invalid event", ok: false, note: safeStringify(invalid).slice(0, 200) }
    if (events.length === 0) return { outcome: "skipped", ok: true }
    return { outcome: events.some((event) => event.type === "error") ? "error event" : "events", ok: true }
  }
}

describe(`provider output decoders, ${CASES} fuzzed lines each (seed ${seed})`, () => {
  test.each(DECODERS)("%s", async (cli, folder, make) => {
    const seeds = cli === "ollama" ? AGENT_LOOP_LINES : capturedLines(folder)
    const lines = casesOf(linesFor(seeds), seed, CASES)
    const tally = await tallyCases(lines, runDecoder(make))
    const row = await record(
      fuzzRow(`fuzz: ${cli} output decoder`, tally, seed, CASES, "0 throws, every event a valid ProviderEvent"),
      tally.offenders
    )
    expect(tally.offenders).toEqual([])
    expect(row.pass).toBe(true)
  })
})
