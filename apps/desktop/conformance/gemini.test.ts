// Gemini CLI conformance: the real built Core runs the real `gemini` (pinned, from the global setup) against the
// scripted model server of @pedelec/test-kit (the Gemini API, GOOGLE_GEMINI_BASE_URL), through the least-privilege
// invocation Core uses by default (auto_edit plus Pedelec's admin policy: the shell runs pedelec-cli only). It checks
// what the adapter promises on real output: a text turn, a page tool call made from gemini's shell tool (so
// PEDELEC_SESSION_CAP reached it), a resumed turn that keeps its context, a model error with its code and a good turn
// after it, and a cancel during a long tool call that leaves no process of the session.
// gemini turns take 6–16 s on a loaded machine, so timeouts are generous and the scenarios few.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { mainRequests, userTextsOf } from "@pedelec/test-kit/model-server/RequestLog"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import {
  completionOf,
  hostClient,
  isStatus,
  isType,
  ORIGIN,
  openSession,
  type RunningCore,
  removeHome,
  runTurnAnswering,
  sessionProcesses,
  startCore,
  stopCore,
  waitUntil
} from "../test/harness.ts"

const tools: ToolsManifest = [
  {
    name: "page_title",
    description: "Returns the title of a tab.",
    argsSchema: { type: "object", properties: { tab: { type: "integer" } }, required: ["tab"] }
  },
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } }
]
const skills = { guidance: "", tools }
const TURN_TIMEOUT_MS = 90_000

/** An API key login that never asks, and nothing phoning home or updating itself during a run. */
const SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true }
}

let server: ModelServer
let core: RunningCore
let home: string

beforeAll(async () => {
  server = await startModelServer()
  // gemini keeps its settings, sessions and history under HOME (~/.gemini): never the user's real ones.
  home = await mkdtemp(path.join(os.tmpdir(), "pedelec-gemini-home-"))
  await mkdir(path.join(home, ".gemini"), { recursive: true })
  await writeFile(path.join(home, ".gemini", "settings.json"), `${JSON.stringify(SETTINGS, null, 2)}\n`)
  core = await startCore({
    env: {
      PATH: `${inject("geminiBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: home,
      GEMINI_API_KEY: "fake-key",
      GOOGLE_GEMINI_BASE_URL: server.url,
      // Under GitHub Actions (a non-empty GITHUB_SHA, or SURFACE=Github) gemini strips every unlisted variable from
      // its shell's environment, PEDELEC_* included; it tests them for truthiness, so empty ones are "not set".
      GITHUB_SHA: "",
      SURFACE: ""
    }
  })
})

afterAll(async () => {
  if (core !== undefined) {
    await stopCore(core)
    await removeHome(core.home)
  }
  await server?.close()
  if (home !== undefined) await rm(home, { recursive: true, force: true })
})

/** One host client and one gemini session for ORIGIN, in the test's scope. */
const geminiSession = Effect.gen(function* () {
  const client = yield* hostClient(core.info)
  const { sessionId, events } = yield* openSession(client, { provider: "gemini", skills })
  const turn = (text: string, answer = () => ({ ok: true as const, result: "Example Page" })) =>
    runTurnAnswering(client, events, sessionId, text, answer, TURN_TIMEOUT_MS)
  return { client, sessionId, events, turn }
})

/** Runs a test body that opens clients and sessions; they close with it. */
const live = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe(`Gemini CLI ${inject("geminiVersion")} through a real Core`, { timeout: 240_000 }, () => {
  it("is listed as available with its version", () =>
    live(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const listed = yield* client["providers.list"]({ rescan: true })
        const gemini = listed.find((info) => info.code === "gemini")
        expect(gemini).toMatchObject({ available: true, version: inject("geminiVersion"), error: null })
      })
    ))

  it("a text-only turn completes with the model's text", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* geminiSession
        const completed = yield* turn("TEXT[hello from gemini conformance]END")
        expect(completed.reason).toBe("completed")
        expect(completed.text).toBe("hello from gemini conformance")
        const deltas = events.seen.filter(isType("chat_delta")).filter((e) => e.turnId === completed.turnId)
        expect(deltas.map((e) => e.delta).join("")).toBe("hello from gemini conformance")
      })
    ))

  it("a tool turn: gemini's shell runs pedelec-cli with the session's capability and the page answers", () =>
    live(
      Effect.gen(function* () {
        const { sessionId, events, turn } = yield* geminiSession
        const command = `pedelec-cli --thread-id ${sessionId} tool-call page_title '{"tab":1}'`
        const completed = yield* turn(`RUN[${command}]END`)
        expect(completed.reason).toBe("completed")
        const call = events.seen.filter(isType("tool_call")).find((e) => e.turnId === completed.turnId)
        expect(call?.tool).toBe("page_title")
        expect(call?.args).toEqual({ tab: 1 })
        // The model was shown pedelec-cli's line, and said it back.
        expect(completed.text).toContain('"ok":true')
        expect(completed.text).toContain("Example Page")
      })
    ))

  it("a resumed turn keeps the conversation: the model receives the earlier user text again", () =>
    live(
      Effect.gen(function* () {
        const { turn } = yield* geminiSession
        const first = yield* turn("TEXT[first answer]END remember-marker-6e31")
        expect(first.reason).toBe("completed")
        const second = yield* turn("RECALL")
        expect(second.reason).toBe("completed")
        expect(second.text).toContain("remember-marker-6e31")
        const last = mainRequests(server.requests()).at(-1)
        expect(last).toBeDefined()
        const said = userTextsOf(last!)
        expect(said.some((text) => text.includes("remember-marker-6e31"))).toBe(true)
        expect(said.at(-1)).toContain("RECALL")
      })
    ))

  // The error comes after a good turn, not first: a gemini session whose very first turn fails never saves it, yet
  // Core keeps the id from gemini's `init` line and resumes it, so every later turn exits 42 ("No previous sessions
  // found for this project"). That is a bug of Core/the adapter, reported, not what this scenario checks.
  it("a model error fails the turn with PROVIDER_FAILED, and the next turn works", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* geminiSession
        const before = yield* turn("TEXT[before the error]END")
        expect(before.reason).toBe("completed")
        const failed = yield* turn("FAIL_HTTP[400]END")
        expect(failed.reason).toBe("failed")
        expect(failed.error?.code).toBe("PROVIDER_FAILED")
        expect(failed.error?.message).toContain("400")
        expect(events.seen.filter(isType("error")).length).toBe(1)
        const good = yield* turn("TEXT[recovered]END")
        expect(good.reason).toBe("completed")
        expect(good.text).toBe("recovered")
      })
    ))

  it("cancel during a long tool call kills gemini, its shell and pedelec-cli", () =>
    live(
      Effect.gen(function* () {
        const { client, sessionId, events } = yield* geminiSession
        const command = `pedelec-cli --thread-id ${sessionId} tool-call wait '{}'`
        const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: `RUN[${command}]END` })
        yield* events.next(isType("tool_call"), TURN_TIMEOUT_MS)
        const running = yield* Effect.promise(() => sessionProcesses(sessionId))
        const names = running.map((p) => p.argv.join(" "))
        expect(names.some((argv) => argv.includes("gemini"))).toBe(true)
        expect(names.some((argv) => argv.includes("tool-call wait"))).toBe(true)
        const { cancelled } = yield* client["session.cancel"]({ origin: ORIGIN, sessionId })
        expect(cancelled).toBe(true)
        const completed = yield* events.next(completionOf(turnId), 30_000)
        expect(completed.reason).toBe("cancelled")
        yield* events.next(isStatus("idle"), 30_000)
        const left = yield* Effect.promise(() =>
          waitUntil(
            "every process of the session to die",
            () => sessionProcesses(sessionId),
            (alive) => alive.length === 0,
            15_000
          )
        )
        expect(left).toEqual([])
      })
    ))
})
