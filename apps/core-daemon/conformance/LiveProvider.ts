// The conformance scenarios every live provider must pass, written once: the real built Core runs the real CLI
// (pinned, installed by the global setup) against the scripted model server of @pedelec/test-kit, with the
// least-privilege invocation Core uses by default. A text turn; a page tool call made from the CLI's own shell (so
// PEDELEC_SESSION_CAP reached it); for a CLI given the `pedelec` MCP server, the same call as an MCP tool (the
// scripted model calls the name the CLI offers it); a resumed turn that keeps its context (the server's log shows the
// history); a model error with its code and a good turn after it; a cancel during a long tool call that leaves no
// process, and for a CLI with the MCP server the same during a call through MCP (the page is told the call was
// cancelled; neither the CLI nor pedelec-cli mcp is left); an end during a pending tool call that is over within 1 s
// (EndDuringCall.ts). Each provider's file only
// says how its CLI is pointed at the server and what it cannot do.
// An adapter that keeps its CLI warm also shows that two turns of a session run in one process, and that the turn
// after a cancel resumes the conversation in a new one.

import { mkdtemp, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { DesktopClient } from "@pedelec/core-client/CoreClient"
import {
  completionOf,
  desktopClient,
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
} from "@pedelec/test-kit/core/Harness"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { mainRequests, userTextsOf } from "@pedelec/test-kit/model-server/RequestLog"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { itEndsDuringPendingCall } from "./EndDuringCall.ts"

/** What is still alive of a session's processes once they have had 15 s to die (none, for a test to pass). */
const processesLeft = (sessionId: string) =>
  Effect.promise(() =>
    waitUntil(
      "every process of the session to die",
      () => sessionProcesses(sessionId),
      (alive) => alive.length === 0,
      15_000
    )
  )

export interface LiveProvider {
  readonly code: ProviderCode
  /** As the suite's title shows it, with the version. */
  readonly title: string
  readonly version: string
  /** Where the pinned CLI's command lives; it goes first on Core's PATH (none for Pedelec's own agent). */
  readonly binDir?: string
  /** Writes the CLI's home and config under `root` (never the user's) and returns what else Core's env needs. */
  readonly environment: (root: string, server: ModelServer) => Promise<Record<string, string>>
  /** Extra session input, e.g. a model the CLI needs named. */
  readonly model?: string
  readonly turnTimeoutMs: number
  readonly testTimeoutMs: number
  /** How a running turn's processes show the CLI (part of an argv). */
  readonly processName: string
  /**
   * How the error scenario runs: in one session; with a good turn first (a CLI that never saves a session whose
   * first turn failed); or each turn in a fresh session (a CLI that re-sends a failed prompt with the next one).
   */
  readonly errorScenario: "same-session" | "good-turn-first" | "fresh-sessions"
  /** Whether the suite also checks that a refused key (HTTP 401) asks the user to sign in. */
  readonly checksSignIn: boolean
  /** The code a refused key gives; PROVIDER_AUTH_REQUIRED unless the provider has its own. */
  readonly signInCode?: ErrorCode
  /** Settings the provider needs in Core (e.g. Ollama's address and key), made as the user does (desktop role). */
  readonly configure?: (client: DesktopClient, server: ModelServer) => Effect.Effect<void, unknown>
  /**
   * How the script asks for a page tool call; by default a shell command running pedelec-cli. An agent with the page
   * tools as functions (pedelec-agent) calls them directly, so no pedelec-cli process exists during the call.
   */
  readonly toolCall?: { readonly directive: (name: string, argsJson: string) => string; readonly viaShell: false }
  /**
   * The name the CLI offers the model for page tool `name` of the `pedelec` MCP server (`pedelec-cli mcp`); when set,
   * the suite also runs the tool scenario through MCP.
   */
  readonly mcpToolName?: (name: string) => string
  /**
   * How long an end during a pending call may take, when this CLI's tree is known to need more than the 1 s
   * (EndDuringCall's ENDED_WITHIN_MS); the file says why.
   */
  readonly endedWithinMs?: number
  /** Whether the adapter keeps one warm CLI process for a session's turns (then the suite checks its pid). */
  readonly warmProcess?: boolean
}

const shellToolCall = (sessionId: string, name: string, argsJson: string) =>
  `RUN[pedelec-cli --thread-id ${sessionId} tool-call ${name} '${argsJson}']END`

const tools: ToolsManifest = [
  {
    name: "page_title",
    description: "Returns the title of a tab.",
    argsSchema: { type: "object", properties: { tab: { type: "integer" } }, required: ["tab"] }
  },
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } }
]
const skills = { guidance: "", tools }

/** Runs a test body that opens clients and sessions; they close with it. */
export const live = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

export const describeLiveProvider = (provider: LiveProvider) =>
  describe(`${provider.title} ${provider.version} through a real Core`, { timeout: provider.testTimeoutMs }, () => {
    let server: ModelServer
    let core: RunningCore
    let root: string

    beforeAll(async () => {
      server = await startModelServer()
      root = await mkdtemp(path.join(os.tmpdir(), `pedelec-${provider.code}-`))
      const env = await provider.environment(root, server)
      const bins = provider.binDir === undefined ? [] : [provider.binDir]
      core = await startCore({ env: { PATH: [...bins, process.env.PATH ?? ""].join(path.delimiter), ...env } })
      const configure = provider.configure
      if (configure !== undefined)
        await live(Effect.flatMap(desktopClient(core.info), (client) => configure(client, server)))
    })

    afterAll(async () => {
      if (core !== undefined) {
        await stopCore(core)
        await removeHome(core.home)
      }
      await server?.close()
      if (root !== undefined) await rm(root, { recursive: true, force: true })
    })

    /** One host client and one session of this provider for ORIGIN, in the test's scope. */
    const session = Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const input = {
        provider: provider.code,
        skills,
        ...(provider.model === undefined ? {} : { model: provider.model })
      }
      const { sessionId, events } = yield* openSession(client, input)
      const turn = (text: string) =>
        runTurnAnswering(
          client,
          events,
          sessionId,
          text,
          () => ({ ok: true as const, result: "Example Page" }),
          provider.turnTimeoutMs
        )
      return { client, sessionId, events, turn }
    })

    it("is listed as available with its version", () =>
      live(
        Effect.gen(function* () {
          const client = yield* hostClient(core.info)
          const listed = yield* client["providers.list"]({ rescan: true })
          const info = listed.find((entry) => entry.code === provider.code)
          expect(info).toMatchObject({ available: true, version: provider.version, error: null, experimental: false })
        })
      ))

    it("a text-only turn completes with the model's text, and the deltas add up to it", () =>
      live(
        Effect.gen(function* () {
          const { events, turn } = yield* session
          const text = `hello from ${provider.code} conformance`
          const completed = yield* turn(`TEXT[${text}]END`)
          expect(completed.reason).toBe("completed")
          expect(completed.text).toBe(text)
          // CLIs that print whole messages still give a UI deltas to show: one per message.
          const deltas = events.seen.filter(isType("chat_delta")).filter((e) => e.turnId === completed.turnId)
          expect(deltas.map((e) => e.delta).join("")).toBe(text)
        })
      ))

    it("a tool turn: the CLI's shell runs pedelec-cli with the session's capability and the page answers", () =>
      live(
        Effect.gen(function* () {
          const { sessionId, events, turn } = yield* session
          const directive = provider.toolCall?.directive ?? ((name, args) => shellToolCall(sessionId, name, args))
          const completed = yield* turn(directive("page_title", '{"tab":1}'))
          expect(completed.reason).toBe("completed")
          const call = events.seen.filter(isType("tool_call")).find((e) => e.turnId === completed.turnId)
          expect(call?.tool).toBe("page_title")
          expect(call?.args).toEqual({ tab: 1 })
          // The model was shown pedelec-cli's line, and said it back.
          expect(completed.text).toContain('"ok":true')
          expect(completed.text).toContain("Example Page")
        })
      ))

    const mcpToolName = provider.mcpToolName
    if (mcpToolName !== undefined) {
      it("a tool turn through MCP: the CLI's pedelec server (pedelec-cli mcp) calls the page tool and the page answers", () =>
        live(
          Effect.gen(function* () {
            const { events, turn } = yield* session
            const completed = yield* turn(`TOOL[${mcpToolName("page_title")}]ARGS[{"tab":1}]END`)
            expect(completed.text).toContain("Example Page")
            expect(completed.reason).toBe("completed")
            const call = events.seen.filter(isType("tool_call")).find((e) => e.turnId === completed.turnId)
            expect(call?.tool).toBe("page_title")
            expect(call?.args).toEqual({ tab: 1 })
          })
        ))
    }

    it("a resumed turn keeps the conversation: the model receives the earlier user text again", () =>
      live(
        Effect.gen(function* () {
          const { turn } = yield* session
          const marker = `remember-marker-${provider.code}`
          expect((yield* turn(`TEXT[first answer]END ${marker}`)).reason).toBe("completed")
          const second = yield* turn("RECALL")
          expect(second.reason).toBe("completed")
          expect(second.text).toContain(marker)
          const said = userTextsOf(mainRequests(server.requests()).at(-1)!)
          expect(said.some((text) => text.includes(marker))).toBe(true)
          expect(said.at(-1)).toContain("RECALL")
        })
      ))

    if (provider.warmProcess === true) {
      /** The pids of the session's processes that are the CLI itself (not its shells or pedelec-cli). */
      const cliPids = (sessionId: string) =>
        Effect.promise(() => sessionProcesses(sessionId)).pipe(
          Effect.map((seen) =>
            seen.filter((p) => path.basename(p.argv[0] ?? "") === provider.processName).map((p) => p.pid)
          )
        )

      it("two turns of a session run in one warm CLI process, which waits between them", () =>
        live(
          Effect.gen(function* () {
            const { sessionId, turn } = yield* session
            expect((yield* turn("TEXT[first]END")).reason).toBe("completed")
            const between = yield* cliPids(sessionId)
            expect(between).toHaveLength(1)
            const second = yield* turn("TEXT[second]END")
            expect(second.reason).toBe("completed")
            expect(second.text).toBe("second")
            expect(yield* cliPids(sessionId)).toEqual(between)
          })
        ))

      it("after a cancel, the next turn resumes the conversation in a new CLI process", () =>
        live(
          Effect.gen(function* () {
            const { client, sessionId, events, turn } = yield* session
            const marker = `warm-marker-${provider.code}`
            expect((yield* turn(`TEXT[noted]END ${marker}`)).reason).toBe("completed")
            const before = yield* cliPids(sessionId)
            const text = provider.toolCall?.directive("wait", "{}") ?? shellToolCall(sessionId, "wait", "{}")
            const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
            yield* events.next(isType("tool_call"), provider.turnTimeoutMs)
            expect((yield* client["session.cancel"]({ origin: ORIGIN, sessionId })).cancelled).toBe(true)
            expect((yield* events.next(completionOf(turnId), 30_000)).reason).toBe("cancelled")
            // Idle is published before the completion (a page that acts on it already sees idle).
            expect(isStatus("idle")(events.seen[events.seen.findIndex(completionOf(turnId)) - 1]!)).toBe(true)
            const recalled = yield* turn("RECALL")
            expect(recalled.reason).toBe("completed")
            expect(recalled.text).toContain(marker)
            const after = yield* cliPids(sessionId)
            expect(after).toHaveLength(1)
            expect(after).not.toEqual(before)
          })
        ))
    }

    it("a model error fails the turn with PROVIDER_FAILED, and the next turn works", () =>
      live(
        Effect.gen(function* () {
          const first = yield* session
          if (provider.errorScenario === "good-turn-first") {
            expect((yield* first.turn("TEXT[before the error]END")).reason).toBe("completed")
          }
          const failed = yield* first.turn("FAIL_HTTP[400]END")
          expect(failed.reason).toBe("failed")
          expect(failed.error?.code).toBe("PROVIDER_FAILED")
          expect(first.events.seen.filter(isType("error")).length).toBe(1)
          const next = provider.errorScenario === "fresh-sessions" ? yield* session : first
          const good = yield* next.turn("TEXT[recovered]END")
          expect(good.reason).toBe("completed")
          expect(good.text).toBe("recovered")
          if (provider.checksSignIn) {
            // A refused key is told apart: the user has to sign in again, not retry.
            const denied = yield* (yield* session).turn("FAIL_HTTP[401]END")
            expect(denied.reason).toBe("failed")
            expect(denied.error?.code).toBe(provider.signInCode ?? "PROVIDER_AUTH_REQUIRED")
          }
        })
      ))

    it("cancel during a long tool call kills the CLI, its shell and pedelec-cli", () =>
      live(
        Effect.gen(function* () {
          const { client, sessionId, events } = yield* session
          const text = provider.toolCall?.directive("wait", "{}") ?? shellToolCall(sessionId, "wait", "{}")
          const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
          yield* events.next(isType("tool_call"), provider.turnTimeoutMs)
          const running = (yield* Effect.promise(() => sessionProcesses(sessionId))).map((p) => p.argv.join(" "))
          expect(running.some((argv) => argv.includes(provider.processName))).toBe(true)
          if (provider.toolCall === undefined)
            expect(running.some((argv) => argv.includes("tool-call wait"))).toBe(true)
          expect((yield* client["session.cancel"]({ origin: ORIGIN, sessionId })).cancelled).toBe(true)
          expect((yield* events.next(completionOf(turnId), 30_000)).reason).toBe("cancelled")
          // Idle is published before the completion (a page that acts on it already sees idle).
          expect(isStatus("idle")(events.seen[events.seen.findIndex(completionOf(turnId)) - 1]!)).toBe(true)
          expect(yield* processesLeft(sessionId)).toEqual([])
        })
      ))

    if (mcpToolName !== undefined) {
      it("cancel during a long page tool call through MCP: the page sees it cancelled, no CLI or pedelec-cli mcp left", () =>
        live(
          Effect.gen(function* () {
            const { client, sessionId, events } = yield* session
            const text = `TOOL[${mcpToolName("wait")}]ARGS[{}]END`
            const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
            const call = yield* events.next(isType("tool_call"), provider.turnTimeoutMs)
            expect(call.tool).toBe("wait")
            const running = (yield* Effect.promise(() => sessionProcesses(sessionId))).map((p) => p.argv.join(" "))
            expect(running.some((argv) => argv.includes(provider.processName))).toBe(true)
            expect(running.some((argv) => argv.includes("pedelec-cli mcp"))).toBe(true)
            expect((yield* client["session.cancel"]({ origin: ORIGIN, sessionId })).cancelled).toBe(true)
            // What the page's handler is told: stop, this call was cancelled.
            const cancelled = yield* events.next(isType("tool_call_cancelled"), 30_000)
            expect([cancelled.toolCallId, cancelled.reason]).toEqual([call.toolCallId, "TOOL_CANCELLED"])
            expect((yield* events.next(completionOf(turnId), 30_000)).reason).toBe("cancelled")
            expect(yield* processesLeft(sessionId)).toEqual([])
          })
        ))
    }

    itEndsDuringPendingCall({
      code: provider.code,
      processName: provider.processName,
      turnTimeoutMs: provider.turnTimeoutMs,
      viaShell: provider.toolCall === undefined,
      ...(provider.endedWithinMs === undefined ? {} : { endedWithinMs: provider.endedWithinMs }),
      session,
      waitDirective: (sessionId) =>
        provider.toolCall?.directive("wait", "{}") ?? shellToolCall(sessionId, "wait", "{}"),
      live
    })
  })
