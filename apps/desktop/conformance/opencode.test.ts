// opencode conformance: the real built Core runs the real `opencode` (pinned, from the global setup) against the
// scripted model server of @pedelec/test-kit (Chat Completions through opencode's bundled openai-compatible
// provider), through the least-privilege invocation Core uses by default (agent `pedelec`, bash limited to
// pedelec-cli). It checks what the adapter promises on real output: a text turn, a page tool call made from opencode's
// bash tool (so PEDELEC_SESSION_CAP reached it), a resumed turn (`-s`) that keeps its context, a model error with its
// code and a good turn after it, and a cancel during a long tool call that leaves no process of the session.
// opencode turns take 7–20 s on a loaded machine, so timeouts are generous and the scenarios few.

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
/** The user-level provider below; Core passes the session's model to opencode as `-m`. */
const MODEL = "fake/fake-model"
const TURN_TIMEOUT_MS = 90_000

let server: ModelServer
let core: RunningCore
let home: string

/** The user's own opencode config: the scripted server as provider `fake` (research §3.4). */
const userConfig = (baseUrl: string) => ({
  $schema: "https://opencode.ai/config.json",
  autoupdate: false,
  share: "disabled",
  model: MODEL,
  small_model: MODEL,
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake local",
      options: { baseURL: `${baseUrl}/v1`, apiKey: "sk-fake" },
      models: { "fake-model": { name: "Fake model", tool_call: true, limit: { context: 128000, output: 8192 } } }
    }
  }
})

beforeAll(async () => {
  server = await startModelServer()
  // opencode keeps its config, database and caches under HOME (XDG folders): never the user's real ones.
  home = await mkdtemp(path.join(os.tmpdir(), "pedelec-opencode-home-"))
  const configDir = path.join(home, ".config", "opencode")
  await mkdir(configDir, { recursive: true })
  await writeFile(path.join(configDir, "opencode.json"), `${JSON.stringify(userConfig(server.url), null, 2)}\n`)
  core = await startCore({
    env: {
      PATH: `${inject("opencodeBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local", "share"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      // No models.dev catalog and no language servers: the suite is offline apart from the scripted server.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1"
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

/** One host client and one opencode session for ORIGIN, in the test's scope. */
const opencodeSession = Effect.gen(function* () {
  const client = yield* hostClient(core.info)
  const { sessionId, events } = yield* openSession(client, { provider: "opencode", model: MODEL, skills })
  const turn = (text: string, answer = () => ({ ok: true as const, result: "Example Page" })) =>
    runTurnAnswering(client, events, sessionId, text, answer, TURN_TIMEOUT_MS)
  return { client, sessionId, events, turn }
})

/** Runs a test body that opens clients and sessions; they close with it. */
const live = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe(`opencode ${inject("opencodeVersion")} through a real Core`, { timeout: 240_000 }, () => {
  it("is listed as available with its version", () =>
    live(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const listed = yield* client["providers.list"]({ rescan: true })
        const opencode = listed.find((info) => info.code === "opencode")
        expect(opencode).toMatchObject({ available: true, version: inject("opencodeVersion"), error: null })
      })
    ))

  it("a text-only turn completes with the model's text", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* opencodeSession
        const completed = yield* turn("TEXT[hello from opencode conformance]END")
        expect(completed.reason).toBe("completed")
        expect(completed.text).toBe("hello from opencode conformance")
        // opencode run prints whole text parts, not deltas: what streamed must still add up to the text.
        const deltas = events.seen.filter(isType("chat_delta")).filter((e) => e.turnId === completed.turnId)
        expect(deltas.map((e) => e.delta).join("")).toBe("hello from opencode conformance")
      })
    ))

  it("a tool turn: opencode's bash runs pedelec-cli with the session's capability and the page answers", () =>
    live(
      Effect.gen(function* () {
        const { sessionId, events, turn } = yield* opencodeSession
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
        const { turn } = yield* opencodeSession
        const first = yield* turn("TEXT[first answer]END remember-marker-0c0d")
        expect(first.reason).toBe("completed")
        const second = yield* turn("RECALL")
        expect(second.reason).toBe("completed")
        expect(second.text).toContain("remember-marker-0c0d")
        const last = mainRequests(server.requests()).at(-1)
        expect(last).toBeDefined()
        const said = userTextsOf(last!)
        expect(said.some((text) => text.includes("remember-marker-0c0d"))).toBe(true)
        expect(said.at(-1)).toContain("RECALL")
      })
    ))

  it("a model error fails the turn with PROVIDER_FAILED, and the next turn works", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* opencodeSession
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

  it("cancel during a long tool call kills opencode, its shell and pedelec-cli", () =>
    live(
      Effect.gen(function* () {
        const { client, sessionId, events } = yield* opencodeSession
        const command = `pedelec-cli --thread-id ${sessionId} tool-call wait '{}'`
        const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: `RUN[${command}]END` })
        yield* events.next(isType("tool_call"), TURN_TIMEOUT_MS)
        const running = yield* Effect.promise(() => sessionProcesses(sessionId))
        const names = running.map((p) => p.argv.join(" "))
        expect(names.some((argv) => argv.includes("opencode"))).toBe(true)
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
