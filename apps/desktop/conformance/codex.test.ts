// Codex CLI conformance: the real built Core runs the real `codex` (pinned, from the global setup) against the
// scripted model server of @pedelec/test-kit (Responses API), through the least-privilege invocation Core uses by
// default (codex's workspace-write sandbox). It checks what the adapter promises on real output: a text turn, a page
// tool call made from codex's sandboxed shell (so PEDELEC_SESSION_CAP reached it), a resumed turn (`exec resume`)
// that keeps its context, a model error with its code and a good turn after it, and a cancel during a long tool call
// that leaves no process of the session.

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

let server: ModelServer
let core: RunningCore
let root: string

/** codex's own config: the scripted server as its only provider, no retries so errors come back at once. */
const configToml = (baseUrl: string) =>
  [
    'model = "fake-model"',
    'model_provider = "fake"',
    "[model_providers.fake]",
    'name = "Fake local"',
    `base_url = "${baseUrl}/v1"`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    ""
  ].join("\n")

beforeAll(async () => {
  server = await startModelServer()
  // codex keeps its config, sessions and helper links under CODEX_HOME: never the user's real ones. CODEX_HOME must
  // not lie inside TMPDIR: the sandbox then hides codex's own helper and every command fails (verified).
  root = await mkdtemp(path.join(os.tmpdir(), "pedelec-codex-"))
  const home = path.join(root, "home")
  const codexHome = path.join(home, ".codex")
  const tmp = path.join(root, "tmp")
  await mkdir(codexHome, { recursive: true })
  await mkdir(tmp, { recursive: true })
  await writeFile(path.join(codexHome, "config.toml"), configToml(server.url))
  core = await startCore({
    env: {
      PATH: `${inject("codexBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: home,
      CODEX_HOME: codexHome,
      TMPDIR: tmp,
      FAKE_API_KEY: "sk-fake"
    }
  })
})

afterAll(async () => {
  if (core !== undefined) {
    await stopCore(core)
    await removeHome(core.home)
  }
  await server?.close()
  if (root !== undefined) await rm(root, { recursive: true, force: true })
})

/** One host client and one codex session for ORIGIN, in the test's scope. */
const codexSession = Effect.gen(function* () {
  const client = yield* hostClient(core.info)
  const { sessionId, events } = yield* openSession(client, { provider: "codex", skills })
  const turn = (text: string, answer = () => ({ ok: true as const, result: "Example Page" })) =>
    runTurnAnswering(client, events, sessionId, text, answer, 60_000)
  return { client, sessionId, events, turn }
})

/** Runs a test body that opens clients and sessions; they close with it. */
const live = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe(`Codex CLI ${inject("codexVersion")} through a real Core`, () => {
  it("is listed as available with its version", () =>
    live(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const listed = yield* client["providers.list"]({ rescan: true })
        const codex = listed.find((info) => info.code === "codex")
        expect(codex).toMatchObject({ available: true, version: inject("codexVersion"), error: null })
        expect(codex?.experimental).toBe(false)
      })
    ))

  it("a text-only turn completes with the model's text", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* codexSession
        const completed = yield* turn("TEXT[hello from codex conformance]END")
        expect(completed.reason).toBe("completed")
        expect(completed.text).toBe("hello from codex conformance")
        // codex exec prints whole messages, not deltas: what streamed must still add up to the text.
        const deltas = events.seen.filter(isType("chat_delta")).filter((e) => e.turnId === completed.turnId)
        expect(deltas.length).toBeGreaterThan(0)
        expect(deltas.map((e) => e.delta).join("")).toBe("hello from codex conformance")
      })
    ))

  it("a tool turn: codex's sandboxed shell runs pedelec-cli with the session's capability and the page answers", () =>
    live(
      Effect.gen(function* () {
        const { sessionId, events, turn } = yield* codexSession
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
        const { turn } = yield* codexSession
        const first = yield* turn("TEXT[first answer]END remember-marker-c0d3")
        expect(first.reason).toBe("completed")
        const second = yield* turn("RECALL")
        expect(second.reason).toBe("completed")
        expect(second.text).toContain("remember-marker-c0d3")
        const last = mainRequests(server.requests()).at(-1)
        expect(last).toBeDefined()
        const said = userTextsOf(last!)
        expect(said.some((text) => text.includes("remember-marker-c0d3"))).toBe(true)
        expect(said.at(-1)).toContain("RECALL")
      })
    ))

  it("a model error fails the turn with PROVIDER_FAILED, the next turn works, and a 401 asks for sign-in", () =>
    live(
      Effect.gen(function* () {
        const { events, turn } = yield* codexSession
        const failed = yield* turn("FAIL_HTTP[400]END")
        expect(failed.reason).toBe("failed")
        expect(failed.error?.code).toBe("PROVIDER_FAILED")
        expect(failed.error?.message).toContain("400")
        expect(events.seen.filter(isType("error")).length).toBe(1)
        const good = yield* turn("TEXT[recovered]END")
        expect(good.reason).toBe("completed")
        expect(good.text).toBe("recovered")
        // A refused key is told apart: the user has to sign in again, not retry.
        const other = yield* codexSession
        const denied = yield* other.turn("FAIL_HTTP[401]END")
        expect(denied.reason).toBe("failed")
        expect(denied.error?.code).toBe("PROVIDER_AUTH_REQUIRED")
      })
    ))

  it("cancel during a long tool call kills codex, its shell and pedelec-cli", () =>
    live(
      Effect.gen(function* () {
        const { client, sessionId, events } = yield* codexSession
        const command = `pedelec-cli --thread-id ${sessionId} tool-call wait '{}'`
        const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: `RUN[${command}]END` })
        yield* events.next(isType("tool_call"), 60_000)
        const running = yield* Effect.promise(() => sessionProcesses(sessionId))
        const names = running.map((p) => p.argv.join(" "))
        expect(names.some((argv) => argv.includes("codex"))).toBe(true)
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
