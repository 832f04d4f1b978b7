// Claude Code conformance: the real built Core runs the real `claude` (pinned, from the global setup) against the
// scripted model server of @pedelec/test-kit, through the least-privilege invocation Core uses by default. It checks
// what the adapter promises on real output: a text turn, a page tool call made from claude's own shell (so
// PEDELEC_SESSION_CAP reached it), a resumed turn that keeps its context, model errors with their codes, and a
// cancel during a long tool call that leaves no process of the session.

import { mkdtemp, rm } from "node:fs/promises"
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
  killSessionProcesses,
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
let claudeHome: string

beforeAll(async () => {
  server = await startModelServer()
  // claude keeps its config and sessions under CLAUDE_CONFIG_DIR (and HOME): never the user's real ones.
  claudeHome = await mkdtemp(path.join(os.tmpdir(), "pedelec-claude-home-"))
  core = await startCore({
    env: {
      PATH: `${inject("claudeBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: claudeHome,
      CLAUDE_CONFIG_DIR: path.join(claudeHome, ".claude"),
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "sk-ant-fake",
      CLAUDE_CODE_MAX_RETRIES: "0"
    }
  })
})

afterAll(async () => {
  if (core !== undefined) {
    await stopCore(core)
    await removeHome(core.home)
  }
  await server?.close()
  if (claudeHome !== undefined) await rm(claudeHome, { recursive: true, force: true })
})

/** One host client and one claude session for ORIGIN, in the test's scope. */
const claudeSession = Effect.gen(function* () {
  const client = yield* hostClient(core.info)
  const { sessionId, events } = yield* openSession(client, { provider: "claude", skills })
  const turn = (text: string, answer = () => ({ ok: true as const, result: "Example Page" })) =>
    runTurnAnswering(client, events, sessionId, text, answer, 60_000)
  return { client, sessionId, events, turn }
})

/** Runs a test body that opens clients and sessions; they close with it. */
const live = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe(`Claude Code ${inject("claudeVersion")} through a real Core`, () => {
  it("is listed as available with its version", () =>
    live(
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const listed = yield* client["providers.list"]({ rescan: true })
        const claude = listed.find((info) => info.code === "claude")
        expect(claude).toMatchObject({ available: true, version: inject("claudeVersion"), error: null })
        expect(claude?.experimental).toBe(false)
      })
    ))

  it("a text-only turn streams deltas and completes with the model's text", () =>
    live(
      Effect.gen(function* () {
        const { sessionId, events, turn } = yield* claudeSession
        const completed = yield* turn("TEXT[hello from claude conformance]END")
        expect(completed.reason).toBe("completed")
        expect(completed.text).toBe("hello from claude conformance")
        const deltas = events.seen.filter(isType("chat_delta")).filter((e) => e.turnId === completed.turnId)
        expect(deltas.length).toBeGreaterThan(1)
        expect(deltas.map((e) => e.delta).join("")).toBe("hello from claude conformance")
        yield* Effect.promise(() => killSessionProcesses(sessionId))
      })
    ))

  it("a tool turn: claude's shell runs pedelec-cli with the session's capability and the page answers", () =>
    live(
      Effect.gen(function* () {
        const { sessionId, events, turn } = yield* claudeSession
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
        const { turn } = yield* claudeSession
        const first = yield* turn("TEXT[first answer]END remember-marker-7f3a")
        expect(first.reason).toBe("completed")
        const second = yield* turn("RECALL")
        expect(second.reason).toBe("completed")
        expect(second.text).toContain("remember-marker-7f3a")
        const last = mainRequests(server.requests()).at(-1)
        expect(last).toBeDefined()
        const said = userTextsOf(last!)
        expect(said.some((text) => text.includes("remember-marker-7f3a"))).toBe(true)
        expect(said.at(-1)).toContain("RECALL")
      })
    ))

  // After a failed turn claude re-sends that turn's text merged into the next user message (verified), and the
  // model server obeys the first directive it finds there; so each error, and the good turn after them, get a
  // session of their own here. The Core, the adapter and claude are the same ones throughout.
  it("a model error fails the turn with the right code, and the next turn works", () =>
    live(
      Effect.gen(function* () {
        const first = yield* claudeSession
        const failed = yield* first.turn("FAIL_HTTP[400]END")
        expect(failed.reason).toBe("failed")
        expect(failed.error?.code).toBe("PROVIDER_FAILED")
        expect(failed.error?.message).toContain("400")
        expect(first.events.seen.filter(isType("error")).length).toBe(1)
        const second = yield* claudeSession
        const denied = yield* second.turn("FAIL_HTTP[401]END")
        expect(denied.reason).toBe("failed")
        expect(denied.error?.code).toBe("PROVIDER_AUTH_REQUIRED")
        const third = yield* claudeSession
        const good = yield* third.turn("TEXT[recovered]END")
        expect(good.reason).toBe("completed")
        expect(good.text).toBe("recovered")
      })
    ))

  it("cancel during a long tool call kills claude, its shell and pedelec-cli", () =>
    live(
      Effect.gen(function* () {
        const { client, sessionId, events } = yield* claudeSession
        const command = `pedelec-cli --thread-id ${sessionId} tool-call wait '{}'`
        const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text: `RUN[${command}]END` })
        yield* events.next(isType("tool_call"), 60_000)
        const running = yield* Effect.promise(() => sessionProcesses(sessionId))
        const names = running.map((p) => p.argv.join(" "))
        expect(names.some((argv) => argv.includes("claude"))).toBe(true)
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

describe("Claude Code missing", () => {
  it("is listed as unavailable, with what to do", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "pedelec-no-claude-"))
    const bare = await startCore({ env: { PATH: process.env.PATH ?? "", HOME: home } })
    try {
      await live(
        Effect.gen(function* () {
          const client = yield* hostClient(bare.info)
          const claude = (yield* client["providers.list"]({ rescan: true })).find((info) => info.code === "claude")
          // A machine with its own claude installed globally says so; this suite's cached copy is not on PATH here.
          if (claude?.available === true) return
          expect(claude?.available).toBe(false)
          expect(claude?.version).toBeNull()
          expect(claude?.error).toContain("npm install -g @anthropic-ai/claude-code")
        })
      )
    } finally {
      await stopCore(bare)
      await removeHome(bare.home)
      await rm(home, { recursive: true, force: true })
    }
  })
})
