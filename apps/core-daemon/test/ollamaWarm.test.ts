// The ollama provider's warm pedelec-agent through a real Core, against the scripted model server: the process
// starts when the session opens and has asked /api/show before any turn; a session's turns run in that one process,
// which asks /api/show once and keeps the conversation; a cancel during a page tool call and a killed process each
// end only the running turn (cancelled, PROVIDER_FAILED), and the next turn resumes the saved conversation in a new
// process; the session's end leaves no process.
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import {
  completionOf,
  coreForFile,
  desktopClient,
  hostClient,
  isType,
  ORIGIN,
  openSession,
  runTurnAnswering,
  sessionProcesses,
  waitUntil
} from "@pedelec/test-kit/core/Harness"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { userTextsOf } from "@pedelec/test-kit/model-server/RequestLog"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll } from "vitest"

const core = coreForFile()
let server: ModelServer
beforeAll(async () => {
  server = await startModelServer()
})
afterAll(() => server.close())

const tools: ToolsManifest = [
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } }
]

const warmSession = Effect.gen(function* () {
  const desktop = yield* desktopClient(core.info)
  yield* desktop["desktop.settings.set"]({
    settings: { ...DEFAULT_SETTINGS, ollama: { baseUrl: server.url, timeoutMs: 10_000 } }
  })
  yield* desktop["desktop.settings.set_secret"]({ name: "ollamaApiKey", value: "ollama" })
  const client = yield* hostClient(core.info)
  const opened = yield* openSession(client, {
    provider: "ollama",
    model: "scripted-model",
    skills: { guidance: "", tools }
  })
  const turn = (text: string) =>
    runTurnAnswering(client, opened.events, opened.sessionId, text, () => ({ ok: true, result: "page" }))
  const agentPids = Effect.promise(async () =>
    (await sessionProcesses(opened.sessionId))
      .filter((p) => p.argv.some((arg) => path.basename(arg).startsWith("pedelec-agent")))
      .map((p) => p.pid)
  )
  /** Sends a turn whose model calls the page's `wait`, which the test never answers, and waits for the call. */
  const pendingCall = Effect.gen(function* () {
    const { turnId } = yield* client["session.send_text"]({
      origin: ORIGIN,
      sessionId: opened.sessionId,
      text: "TOOL[wait]ARGS[{}]END"
    })
    yield* opened.events.next(isType("tool_call"), 30_000)
    return turnId
  })
  return { client, ...opened, turn, agentPids, pendingCall }
})

const showRequests = () => server.requests().filter((request) => request.route === "ollama-show").length
const chatRequests = () => server.requests().filter((request) => request.route === "ollama-chat").length

describe("ollama's warm pedelec-agent through a real Core", () => {
  it.live("the process starts with the session and asks /api/show before the first turn, which runs in it", () =>
    Effect.gen(function* () {
      const shownBefore = showRequests()
      const chatsBefore = chatRequests()
      const { agentPids, turn } = yield* warmSession
      const started = yield* Effect.promise(() =>
        waitUntil(
          "the session's pedelec-agent to ask /api/show",
          () => Effect.runPromise(agentPids),
          (pids) => pids.length === 1 && showRequests() - shownBefore === 1
        )
      )
      assert.strictEqual(chatRequests(), chatsBefore)
      assert.strictEqual((yield* turn("TEXT[first]END")).reason, "completed")
      assert.deepStrictEqual(yield* agentPids, started)
      assert.strictEqual(showRequests() - shownBefore, 1)
    }).pipe(Effect.scoped)
  )

  it.live("a session's turns run in one process, which asks /api/show once and keeps the conversation", () =>
    Effect.gen(function* () {
      const shownBefore = showRequests()
      const { client, sessionId, turn, agentPids } = yield* warmSession
      assert.strictEqual((yield* turn("TEXT[first]END warm-marker-one")).reason, "completed")
      const between = yield* agentPids
      assert.lengthOf(between, 1)
      const second = yield* turn("RECALL")
      assert.strictEqual(second.reason, "completed")
      assert.include(second.text, "warm-marker-one")
      assert.deepStrictEqual(yield* agentPids, between)
      assert.strictEqual(showRequests() - shownBefore, 1)
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
      const left = yield* Effect.promise(() =>
        waitUntil(
          "the session's processes to die",
          () => sessionProcesses(sessionId),
          (alive) => alive.length === 0
        )
      )
      assert.deepStrictEqual(left, [])
    }).pipe(Effect.scoped)
  )

  it.live("a cancel during a page tool call ends the turn; the next one resumes in a new process", () =>
    Effect.gen(function* () {
      const { client, sessionId, events, turn, agentPids, pendingCall } = yield* warmSession
      assert.strictEqual((yield* turn("TEXT[noted]END warm-marker-two")).reason, "completed")
      const before = yield* agentPids
      const turnId = yield* pendingCall
      assert.isTrue((yield* client["session.cancel"]({ origin: ORIGIN, sessionId })).cancelled)
      assert.strictEqual((yield* events.next(completionOf(turnId), 30_000)).reason, "cancelled")
      const recalled = yield* turn("RECALL")
      assert.strictEqual(recalled.reason, "completed")
      assert.include(recalled.text, "warm-marker-two")
      const after = yield* agentPids
      assert.lengthOf(after, 1)
      assert.notDeepEqual(after, before)
    }).pipe(Effect.scoped)
  )

  it.live("a killed process fails only its running turn; the next one resumes the saved conversation", () =>
    Effect.gen(function* () {
      const { events, turn, agentPids, pendingCall } = yield* warmSession
      assert.strictEqual((yield* turn("TEXT[noted]END warm-marker-three")).reason, "completed")
      const turnId = yield* pendingCall
      const [pid] = yield* agentPids
      process.kill(pid!, "SIGKILL")
      const killed = yield* events.next(completionOf(turnId), 30_000)
      assert.strictEqual(killed.reason, "failed")
      assert.strictEqual(killed.error?.code, "PROVIDER_FAILED")
      const recalled = yield* turn("RECALL")
      assert.strictEqual(recalled.reason, "completed")
      assert.include(recalled.text, "warm-marker-three")
      const said = userTextsOf(
        server
          .requests()
          .filter((request) => request.route === "ollama-chat")
          .at(-1)!
      )
      assert.isTrue(said.some((text) => text.includes("warm-marker-three")))
      assert.notDeepEqual(yield* agentPids, [pid])
    }).pipe(Effect.scoped)
  )
})
