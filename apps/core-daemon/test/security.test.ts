// Core IPC's boundaries against a real Core: the agent role (a session capability) and the host role (the launch
// secret), origin ownership, the permissions of run/, and the protocol hello.
import { lstat, stat } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import type { ToolsManifest } from "@pedelec/contracts/Tool"
import type { HostClient } from "@pedelec/core-client/CoreClient"
import {
  agentClient,
  coreForFile,
  failureCode,
  hostClient,
  ORIGIN,
  OTHER_ORIGIN,
  runCli,
  sessionWithAgent
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const core = coreForFile()

const tools: ToolsManifest = [
  { name: "wait", description: "Waits for the page.", argsSchema: { type: "object", properties: {} } }
]

/** 43 URL-safe characters: shaped like a capability, opening nothing. */
const FORGED = "A".repeat(43)

const agentSession = (client: HostClient) => sessionWithAgent(client, { skills: { guidance: "", tools } })

const cliEnv = (sessionId: SessionId, capability: string) => ({
  PEDELEC_HOME: core.home,
  PEDELEC_THREAD_ID: sessionId,
  PEDELEC_SESSION_CAP: capability
})

const lineOf = (stdout: string) =>
  JSON.parse(stdout.trim()) as { ok: boolean; result?: unknown; error?: { code: string; message: string } }

describe("Core IPC boundaries", () => {
  it.live(
    "pedelec-cli with a wrong capability exits 3 UNAUTHORIZED; the right one works, for its own session only",
    () =>
      Effect.gen(function* () {
        const client = yield* hostClient(core.info)
        const a = yield* agentSession(client)
        const b = yield* client["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })

        const ok = yield* Effect.promise(() => runCli(["tool-list"], cliEnv(a.sessionId, a.capability)))
        assert.strictEqual(ok.code, 0)
        assert.deepStrictEqual(
          (lineOf(ok.stdout).result as Array<{ name: string }>).map((tool) => tool.name),
          ["wait"]
        )
        for (const [threadId, capability] of [
          [a.sessionId, FORGED],
          [b.sessionId, a.capability]
        ] as const) {
          const refused = yield* Effect.promise(() => runCli(["tool-list"], cliEnv(threadId, capability)))
          assert.strictEqual(refused.code, 3, refused.stdout)
          assert.strictEqual(lineOf(refused.stdout).error?.code, "UNAUTHORIZED")
        }
        yield* client["session.end"]({ origin: ORIGIN, sessionId: b.sessionId })
      }).pipe(Effect.scoped)
  )

  it.live("a capability stops working when its session ends", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId, capability } = yield* Effect.scoped(
        Effect.gen(function* () {
          const a = yield* agentSession(client)
          const before = yield* Effect.promise(() => runCli(["tool-list"], cliEnv(a.sessionId, a.capability)))
          assert.strictEqual(before.code, 0)
          return a
        })
      )
      const after = yield* Effect.promise(() => runCli(["tool-list"], cliEnv(sessionId, capability)))
      assert.strictEqual(after.code, 3)
      assert.strictEqual(lineOf(after.stdout).error?.code, "UNAUTHORIZED")
    }).pipe(Effect.scoped)
  )

  it.live("the agent role can neither act as the host nor reach another session", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const a = yield* agentSession(client)
      const b = yield* client["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })

      // Host methods with only a capability header: refused before any handler runs.
      const posing = yield* hostClient(core.info, { proof: { sessionCap: a.capability } })
      const create = posing["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })
      assert.strictEqual(yield* failureCode(create), "UNAUTHORIZED")
      assert.strictEqual(yield* failureCode(posing["session.list"]({})), "UNAUTHORIZED")
      assert.strictEqual(
        yield* failureCode(posing["session.resume"]({ origin: ORIGIN, sessionId: a.sessionId })),
        "UNAUTHORIZED"
      )

      const agent = yield* agentClient(core.info, { sessionCap: a.capability })
      const own = yield* agent["tool.list"]({ sessionId: a.sessionId })
      assert.deepStrictEqual(
        own.map((tool) => tool.name),
        ["wait"]
      )
      assert.strictEqual(yield* failureCode(agent["tool.list"]({ sessionId: b.sessionId })), "UNAUTHORIZED")
      const call = agent["tool.call"]({ sessionId: b.sessionId, name: "wait", args: {} })
      assert.strictEqual(yield* failureCode(call), "UNAUTHORIZED")
      const forged = yield* agentClient(core.info, { sessionCap: FORGED })
      assert.strictEqual(yield* failureCode(forged["tool.list"]({ sessionId: a.sessionId })), "UNAUTHORIZED")
      // The launch secret does not open the agent role either: it names no session.
      const host = yield* agentClient(core.info, { launchSecret: core.info.launchSecret })
      assert.strictEqual(yield* failureCode(host["tool.list"]({ sessionId: a.sessionId })), "UNAUTHORIZED")
      yield* client["session.end"]({ origin: ORIGIN, sessionId: b.sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("a host client without this launch's secret is UNAUTHORIZED", () =>
    Effect.gen(function* () {
      for (const proof of [{ launchSecret: FORGED }, { launchSecret: `${core.info.launchSecret}x` }, {}]) {
        const stranger = yield* hostClient(core.info, { proof })
        const create = stranger["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })
        assert.strictEqual(yield* failureCode(create), "UNAUTHORIZED")
        assert.strictEqual(yield* failureCode(stranger["settings.get"]()), "UNAUTHORIZED")
      }
      const client = yield* hostClient(core.info)
      const sessions = yield* client["session.list"]({})
      assert.lengthOf(sessions, 0, "none of the refused creates made a session")
    }).pipe(Effect.scoped)
  )

  it.live("another origin cannot resume, watch, drive or end a session: SESSION_ACCESS_DENIED", () =>
    Effect.gen(function* () {
      const client = yield* hostClient(core.info)
      const { sessionId } = yield* client["session.create"]({ origin: ORIGIN, input: { provider: "scripted" } })
      const other = { origin: OTHER_ORIGIN, sessionId }
      const attempts = [
        client["session.resume"](other),
        client["session.end"](other),
        client["session.send_text"]({ ...other, text: "hello" }),
        client["session.cancel"](other),
        client["session.prepare"](other)
      ]
      for (const attempt of attempts) assert.strictEqual(yield* failureCode(attempt), "SESSION_ACCESS_DENIED")
      const watch = client["session.subscribe"]({ ...other, afterSeq: 0, claimTools: true })
      assert.strictEqual(
        yield* failureCode(Stream.runDrain(watch).pipe(Effect.timeout(5_000))),
        "SESSION_ACCESS_DENIED"
      )
      assert.lengthOf(yield* client["session.list"]({ origin: OTHER_ORIGIN }), 0)
      // The owner still has it, untouched.
      const info = yield* client["session.resume"]({ origin: ORIGIN, sessionId })
      assert.strictEqual(info.status, "idle")
      assert.strictEqual(info.lastSeq, 0, "nothing happened in the session")
      yield* client["session.end"]({ origin: ORIGIN, sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("run/ is 0700; the socket and core.json are 0600", () =>
    Effect.gen(function* () {
      const { runDir, runtimeFile } = core.paths
      assert.strictEqual(core.info.socketPath, path.join(runDir, "core.sock"))
      const mode = async (file: string) => ((await lstat(file)).mode & 0o777).toString(8)
      assert.strictEqual(yield* Effect.promise(() => mode(runDir)), "700")
      assert.strictEqual(yield* Effect.promise(() => mode(core.info.socketPath)), "600")
      assert.isTrue((yield* Effect.promise(() => lstat(core.info.socketPath))).isSocket())
      assert.strictEqual(yield* Effect.promise(() => mode(runtimeFile)), "600")
      assert.strictEqual((yield* Effect.promise(() => stat(runDir))).uid, process.getuid?.())
    })
  )

  it.live(
    "a hello with another protocol version is PROTOCOL_VERSION_MISMATCH; a new connection's right one works",
    () =>
      Effect.gen(function* () {
        const hello = { component: "native-host", version: "test" } as const
        const refusedClient = yield* hostClient(core.info, { hello: false })
        const refused = refusedClient["core.hello"]({ ...hello, protocolVersion: PROTOCOL_VERSION + 1 })
        assert.strictEqual(yield* failureCode(refused), "PROTOCOL_VERSION_MISMATCH")
        // The refused connection is closed after the answer (ipc-bounds.test.ts); a client starts over on a new one.
        const client = yield* hostClient(core.info, { hello: false })
        const welcome = yield* client["core.hello"]({ ...hello, protocolVersion: PROTOCOL_VERSION })
        assert.strictEqual(welcome.protocolVersion, PROTOCOL_VERSION)
      }).pipe(Effect.scoped)
  )
})
