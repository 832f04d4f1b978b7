/**
 * The scripted provider end to end, with the real bundled agent as a child process: messages and deltas, a tool
 * call through a `pedelec-cli` on PATH (a shell-script double here: the real CLI is another project's), resume,
 * crash, garbage, agent errors, interrupt, and a setsid grandchild and a hung agent killed when their scope closes.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { SessionId } from "@pedelec/contracts/Ids"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import type { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ProcessTree from "../src/ProcessTree.ts"
import type { SessionProcess } from "../src/Provider.ts"
import {
  decodeAgentLine,
  makeScriptedAdapter,
  resolveAgentPath,
  ScriptedAdapter
} from "../src/scripted/ScriptedAdapter.ts"
import type { LineCounts } from "../src/TurnProcess.ts"
import { pidExists, tempDir, waitFor, waitGone } from "./support.ts"

const enabled = makeScriptedAdapter({ env: { PEDELEC_ENABLE_SCRIPTED: "1" } })
const THREAD = "thread-0123456789abcdefghij"

/** A fake pedelec-cli: logs its argv and environment, then prints one JSON line like the real one. */
const FAKE_CLI = `#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_CLI_LOG"
echo '{"ok":true,"result":{"sum":3}}'
exit 0
`

const script = (...lines: ReadonlyArray<string>) =>
  `Runtime rules Core prepends.\n\`\`\`pedelec-script\n${lines.join("\n")}\n\`\`\`\n`

/** A workspace, a PATH with the fake CLI first, and a session process on the enabled adapter. */
const session = (extraEnv: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function* () {
    const workspace = yield* tempDir("workspace")
    const bin = yield* tempDir("bin")
    writeFileSync(path.join(bin, "pedelec-cli"), FAKE_CLI)
    chmodSync(path.join(bin, "pedelec-cli"), 0o755)
    const cliLog = path.join(bin, "argv.log")
    const sp = yield* enabled.start({
      sessionId: Schema.decodeSync(SessionId)("session-0123456789abcdefghij"),
      workspace,
      env: {
        PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
        PEDELEC_THREAD_ID: THREAD,
        FAKE_CLI_LOG: cliLog,
        ...extraEnv
      },
      model: undefined,
      effort: { argv: [], env: {} },
      fullAccess: false
    })
    return { sp, workspace, cliLog }
  })

const turn = (sp: SessionProcess, prompt: string, providerSessionId?: string) =>
  sp.send({ prompt, providerSessionId, kind: "user" })

const collect = (sp: SessionProcess, prompt: string, providerSessionId?: string) =>
  Stream.runCollect(turn(sp, prompt, providerSessionId))

/** Runs a turn that is expected to fail, keeping the events that arrived before the failure. */
const collectFailure = (sp: SessionProcess, prompt: string) =>
  Effect.gen(function* () {
    const events: Array<ProviderEvent> = []
    const error: PedelecError = yield* turn(sp, prompt).pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.flip
    )
    return { events, error }
  })

const withoutSession = (events: ReadonlyArray<ProviderEvent>) => events.filter((e) => e.type !== "session")

/** Runs a turn in a fiber, handing its events over a queue so a test can act mid-turn. */
const startTurn = (sp: SessionProcess, prompt: string) =>
  Effect.gen(function* () {
    const events = yield* Queue.unbounded<ProviderEvent>()
    const fiber = yield* turn(sp, prompt).pipe(
      Stream.runForEach((event) => Queue.offer(events, event)),
      Effect.exit,
      Effect.forkChild
    )
    const waitForMessage = (text: string) =>
      Effect.gen(function* () {
        while (true) {
          const event = yield* Queue.take(events)
          if (event.type === "message" && event.text === text) return
        }
      }).pipe(Effect.timeout(10_000))
    return { fiber, waitForMessage }
  })

describe("detect and start", () => {
  it.effect("is unavailable unless PEDELEC_ENABLE_SCRIPTED=1, and then refuses to start", () =>
    Effect.gen(function* () {
      const disabled = makeScriptedAdapter({ env: {} })
      const info = yield* disabled.detect
      assert.isFalse(info.available)
      assert.include(info.error, "PEDELEC_ENABLE_SCRIPTED=1")
      const error = yield* Effect.flip(Effect.scoped(disabled.start({} as never)))
      assert.strictEqual(error.code, "PROVIDER_START_FAILED")
    })
  )

  it.effect("is available when enabled and built, without an effort knob", () =>
    Effect.gen(function* () {
      const info = yield* enabled.detect
      assert.deepInclude(info, { code: "scripted", name: "Scripted test agent", available: true, error: null })
      assert.isFalse(info.effort.supported)
      assert.deepStrictEqual(enabled.effortAllowList, { argv: [], env: [] })
      assert.strictEqual(ScriptedAdapter.code, "scripted")
      const missing = makeScriptedAdapter({
        env: { PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_SCRIPTED_AGENT: "/nope.mjs" }
      })
      assert.include((yield* missing.detect).error, "not built")
      const bundle = resolveAgentPath({})
      assert.match(bundle ?? "", /dist\/scripted-agent\.mjs$/)
      const overridden = makeScriptedAdapter({ env: { PEDELEC_ENABLE_SCRIPTED: "1", PEDELEC_SCRIPTED_AGENT: bundle! } })
      assert.isTrue((yield* overridden.detect).available)
    })
  )
})

describe("turns", () => {
  it.live("say, deltas and a tool call through pedelec-cli on PATH", () =>
    Effect.gen(function* () {
      const { sp, cliLog } = yield* session()
      const events = yield* collect(sp, script("say hello", "delta Hel", "delta lo", 'call add {"a": 1, "b": 2}'))
      assert.strictEqual(events[0]?.type, "session")
      // The tool line ends with the call's spawn-to-result time, which the bench reads.
      const timed = /^(tool add exit 0: \{"ok":true,"result":\{"sum":3\}\}) \(\d+\.\d{2} ms\)$/
      const toolLine = events.find((event) => event.type === "message" && event.text.startsWith("tool add"))
      assert.match(toolLine?.type === "message" ? toolLine.text : "", timed)
      const untimed = withoutSession(events).map((event) =>
        event.type === "message" ? { ...event, text: event.text.replace(timed, "$1") } : event
      )
      assert.deepStrictEqual(untimed, [
        { type: "message", text: "hello" },
        { type: "delta", text: "Hel" },
        { type: "delta", text: "lo" },
        { type: "message", text: "Hello" },
        { type: "tool_activity", name: "pedelec-cli", detail: "tool-call add" },
        { type: "message", text: 'tool add exit 0: {"ok":true,"result":{"sum":3}}' },
        { type: "completed" }
      ])
      assert.deepStrictEqual(readFileSync(cliLog, "utf8").split("\n"), [
        "--thread-id",
        THREAD,
        "tool-call",
        "add",
        '{"a": 1, "b": 2}',
        ""
      ])
    }).pipe(Effect.scoped)
  )

  it.live("a prompt without a script gets one echo message", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const events = yield* collect(sp, "What is a pedelec?")
      assert.deepStrictEqual(withoutSession(events), [
        { type: "message", text: "echo: What is a pedelec?" },
        { type: "completed" }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("a resumed turn keeps the provider session and what it remembered", () =>
    Effect.gen(function* () {
      const { sp, workspace } = yield* session()
      const first = yield* collect(sp, script("remember the saddle is red"))
      const opened = first[0]
      assert.strictEqual(opened?.type, "session")
      const id = opened?.type === "session" ? opened.providerSessionId : ""
      const second = yield* collect(sp, script("recall"), id)
      assert.deepStrictEqual(second[0], { type: "session", providerSessionId: id })
      assert.deepInclude(second, { type: "message", text: "recalled: the saddle is red" })
      assert.isTrue(existsSync(path.join(workspace, ".pedelec-runtime", "scripted", `${id}.json`)))
      const fresh = yield* collect(sp, script("recall"))
      assert.deepInclude(fresh, { type: "message", text: "recalled nothing" })
    }).pipe(Effect.scoped)
  )

  it.live("a crash fails the turn with PROVIDER_FAILED and the stderr text", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const { events, error } = yield* collectFailure(sp, script("say before", "crash 3", "say never"))
      assert.deepStrictEqual(withoutSession(events), [{ type: "message", text: "before" }])
      assert.strictEqual(error.code, "PROVIDER_FAILED")
      assert.include(error.message, "crashed on purpose (exit 3)")
      assert.strictEqual(error.details?.exitCode, 3)
    }).pipe(Effect.scoped)
  )

  it.live("garbage is skipped and the lines after it still arrive", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const events = yield* collect(sp, script("say first", "garbage", "say after"))
      assert.deepStrictEqual(withoutSession(events), [
        { type: "message", text: "first" },
        { type: "message", text: "after" },
        { type: "completed" }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("an agent error ends the turn with that code; an unknown code or command becomes PROVIDER_FAILED", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const auth = yield* collect(sp, script("error PROVIDER_AUTH_REQUIRED please log in", "say never"))
      assert.deepStrictEqual(withoutSession(auth), [
        { type: "error", code: "PROVIDER_AUTH_REQUIRED", message: "please log in" }
      ])
      const odd = yield* collect(sp, script("error NOT_A_CODE something odd"))
      assert.deepStrictEqual(withoutSession(odd), [
        {
          type: "error",
          code: "PROVIDER_FAILED",
          message: "something odd",
          details: { provider: "scripted", agentCode: "NOT_A_CODE" }
        }
      ])
      const unknown = yield* collect(sp, script("dance"))
      assert.deepStrictEqual(withoutSession(unknown), [
        { type: "error", code: "PROVIDER_FAILED", message: "unknown script command: dance" }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("interrupt stops the turn quietly and fast", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const { fiber, waitForMessage } = yield* startTurn(sp, script("say working", "sleep 60000", "say never"))
      yield* waitForMessage("working")
      const started = Date.now()
      yield* sp.interrupt
      const exit = yield* Fiber.join(fiber)
      assert.strictEqual(exit._tag, "Success")
      assert.isBelow(Date.now() - started, 2_000)
      assert.deepStrictEqual(yield* sp.processes, [])
    }).pipe(Effect.scoped)
  )
})

describe("cleanup", () => {
  it.live("closing the turn kills a setsid grandchild and leaves no process of the session", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("pid")
      const pidFile = path.join(dir, "grandchild.pid")
      const { sp } = yield* session({ SCRIPTED_PID_FILE: pidFile })
      const { fiber, waitForMessage } = yield* startTurn(sp, script("grandchild", "say spawned", "sleep 60000"))
      yield* waitForMessage("spawned")
      const grandchild = yield* waitFor(
        "the grandchild's pid file",
        Effect.sync(() => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined))
      )
      const records = yield* waitFor(
        "the grandchild among the session's processes",
        Effect.map(sp.processes, (list) => (list.some((r) => r.pid === grandchild) ? list : undefined))
      )
      const table = yield* ProcessTree.snapshot
      assert.notStrictEqual(
        table.find((p) => p.pid === grandchild)?.pgid,
        records.find((r) => r.pid !== grandchild)?.pgid,
        "the grandchild left the agent's process group"
      )
      yield* Fiber.interrupt(fiber)
      yield* waitGone(grandchild)
      assert.isFalse(pidExists(grandchild))
      for (const record of records) yield* waitGone(record.pid)
      const after = yield* ProcessTree.snapshot
      const groups = new Set(records.map((r) => r.pgid))
      assert.deepStrictEqual(
        after.filter((p) => groups.has(p.pgid) && !p.state.startsWith("Z")),
        [],
        "no process of the session remains"
      )
      assert.deepStrictEqual(yield* sp.processes, [])
    }).pipe(Effect.scoped)
  )

  it.live("a hung agent that ignores SIGINT and SIGTERM is killed within a few seconds of closing", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const { fiber, waitForMessage } = yield* startTurn(sp, script("say waiting", "hang"))
      yield* waitForMessage("waiting")
      const [agent] = yield* sp.processes
      assert.isDefined(agent)
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      assert.isBelow(Date.now() - started, 5_000)
      yield* waitGone(agent!.pid)
    }).pipe(Effect.scoped)
  )

  it.live("closing the session stops a turn still running", () =>
    Effect.gen(function* () {
      const { sp } = yield* session()
      const { fiber, waitForMessage } = yield* startTurn(sp, script("say waiting", "sleep 60000"))
      yield* waitForMessage("waiting")
      return { fiber, agents: yield* sp.processes }
    }).pipe(
      Effect.scoped,
      Effect.flatMap(({ fiber, agents }) =>
        Effect.gen(function* () {
          assert.strictEqual(agents.length, 1)
          yield* waitGone(agents[0]!.pid)
          const exit = yield* Fiber.join(fiber)
          assert.strictEqual(exit._tag, "Failure", "a turn killed under it fails")
        })
      )
    )
  )
})

describe("decodeAgentLine", () => {
  it("maps the agent's events and counts what it cannot use", () => {
    const counts: LineCounts = { skipped: 0, ignored: 0 }
    const decode = (text: string) => decodeAgentLine({ _tag: "Text", text }, counts)
    assert.deepStrictEqual(decode('{"type":"session","id":"abc"}'), { type: "session", providerSessionId: "abc" })
    assert.deepStrictEqual(decode('{"type":"done"}'), { type: "completed" })
    assert.deepStrictEqual(decode('{"type":"tool","name":"x"}'), { type: "tool_activity", name: "x" })
    assert.isUndefined(decode("not json"))
    assert.isUndefined(decode('{"type":"message"}'))
    assert.isUndefined(decode('{"type":"session","id":""}'))
    assert.isUndefined(decode("[1,2]"))
    assert.isUndefined(decode(""))
    assert.isUndefined(decodeAgentLine({ _tag: "Invalid", bytes: 4 }, counts))
    assert.isUndefined(decode('{"type":"pid","pid":42}'))
    assert.isUndefined(decode('{"type":"mystery"}'))
    assert.deepStrictEqual(counts, { skipped: 5, ignored: 2 })
  })
})
