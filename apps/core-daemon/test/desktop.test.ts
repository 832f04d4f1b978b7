// The desktop role on a real Core: the launch secret as its proof, settings and secrets (a bad value leaves the file
// as it was, a secret never comes back), providers, effort profiles against the adapters' allow-lists, an Ollama
// connection check against a real loopback server, every origin's sessions (list, end), history from the log, a
// watch of every session that holds no lease, and the full-access opt-in. Also: the host role cannot write settings.
import { readFile, stat } from "node:fs/promises"
import net from "node:net"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { WatchItem } from "@pedelec/contracts/Desktop"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { DEFAULT_SETTINGS, type Settings } from "@pedelec/contracts/Settings"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import { script } from "@pedelec/providers/scripted/Script"
import {
  completionOf,
  coreForFile,
  desktopClient,
  failureCode,
  failureOf,
  hostClient,
  ORIGIN,
  OTHER_ORIGIN,
  openSession
} from "@pedelec/test-kit/core/Harness"
import { type ModelServer, startModelServer } from "@pedelec/test-kit/model-server/ModelServer"
import { OLLAMA_VERSION } from "@pedelec/test-kit/model-server/Ollama"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll } from "vitest"

/** Scaled down so a lease runs out within the test. */
const LEASE_MS = 1_500
const core = coreForFile({ env: { PEDELEC_LEASE_MS: String(LEASE_MS) } })

let server: ModelServer
beforeAll(async () => {
  server = await startModelServer({ ollamaModels: ["scripted-model", "llama3.2:1b"] })
})
afterAll(() => server.close())

/** One request as raw NDJSON on Core's socket, and the first answer: what any client could send, typed or not. */
/** One request of `tag` after a good hello, as raw effect/rpc lines; answers the request's own reply. */
const rawRequest = (tag: string, payload: unknown, headers: ReadonlyArray<[string, string]>) =>
  new Promise<Record<string, unknown>>((resolve, reject) => {
    const socket = net.createConnection(core.info.socketPath)
    let buffered = ""
    socket.on("data", (chunk) => {
      buffered += chunk.toString("utf8")
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      for (const line of lines.filter((l) => l !== "")) {
        const reply = JSON.parse(line) as Record<string, unknown>
        if (reply.requestId !== "1") continue
        socket.destroy()
        resolve(reply)
      }
    })
    socket.on("error", reject)
    const hello = { component: "native-host", version: "test", protocolVersion: PROTOCOL_VERSION }
    socket.write(`${JSON.stringify({ _tag: "Request", id: "0", tag: "core.hello", payload: hello, headers: [] })}\n`)
    socket.write(`${JSON.stringify({ _tag: "Request", id: "1", tag, payload, headers })}\n`)
  })

const proven = (): ReadonlyArray<[string, string]> => [["x-pedelec-launch-secret", core.info.launchSecret]]
const settingsText = () => readFile(core.paths.settingsFile, "utf8").catch(() => "(none)")

/** Collects a watch in the background; `next` waits for the first item after the last one taken that matches. */
const watching = Effect.gen(function* () {
  const desktop = yield* desktopClient(core.info)
  const queue = yield* Queue.unbounded<WatchItem>()
  yield* desktop["desktop.events.watch"]().pipe(
    Stream.runForEach((item) => Queue.offer(queue, item)),
    Effect.forkScoped
  )
  const next = <I extends WatchItem>(predicate: (item: WatchItem) => item is I, timeoutMs = 20_000) =>
    Effect.gen(function* () {
      while (true) {
        const item = yield* Queue.take(queue)
        if (predicate(item)) return item
      }
    }).pipe(Effect.timeout(timeoutMs)) as Effect.Effect<I, unknown>
  return { next }
})

type EventItem = Extract<WatchItem, { kind: "event" }>
const eventOf =
  (sessionId: SessionId, type?: SessionEvent["type"]) =>
  (item: WatchItem): item is EventItem =>
    item.kind === "event" && item.event.sessionId === sessionId && (type === undefined || item.event.type === type)

describe("the desktop role", () => {
  it.effect("the host role has no settings writes: an unknown tag is PROTOCOL_ERROR and settings.json stays", () =>
    Effect.gen(function* () {
      const before = yield* Effect.promise(settingsText)
      const settings = { ...DEFAULT_SETTINGS, defaultProvider: "scripted" }
      for (const tag of ["settings.set", "settings.set_secret"]) {
        const payload = tag === "settings.set" ? { settings } : { name: "ollamaApiKey", value: "sk-site" }
        const answer = yield* Effect.promise(() => rawRequest(tag, payload, proven()))
        // No such method on the server: a coded failure (not the rpc server's own "unknown tag" defect).
        const exit = answer.exit as { _tag: string; cause: ReadonlyArray<{ _tag: string; error?: { code?: string } }> }
        assert.strictEqual(exit._tag, "Failure")
        assert.strictEqual(exit.cause[0]?._tag, "Fail", JSON.stringify(exit))
        assert.strictEqual(exit.cause[0]?.error?.code, "PROTOCOL_ERROR")
      }
      assert.strictEqual(yield* Effect.promise(settingsText), before)
      const desktop = yield* desktopClient(core.info)
      assert.isFalse((yield* desktop["desktop.settings.get"]()).secretsSet.ollamaApiKey)
    }).pipe(Effect.scoped)
  )

  it.effect("without this launch's secret every desktop method is UNAUTHORIZED", () =>
    Effect.gen(function* () {
      const forged = `${core.info.launchSecret.slice(0, -1)}${core.info.launchSecret.endsWith("A") ? "B" : "A"}`
      for (const proof of [{ launchSecret: forged }, {}]) {
        const desktop = yield* desktopClient(core.info, { proof })
        assert.strictEqual(yield* failureCode(desktop["desktop.settings.get"]()), "UNAUTHORIZED")
        assert.strictEqual(yield* failureCode(desktop["desktop.session.list"]()), "UNAUTHORIZED")
      }
    }).pipe(Effect.scoped)
  )

  it.effect("status names this Core: pid, start, home, socket", () =>
    Effect.gen(function* () {
      const status = yield* (yield* desktopClient(core.info))["desktop.status"]()
      assert.strictEqual(status.pid, core.info.pid)
      assert.strictEqual(status.startedAt, core.info.startedAt)
      assert.strictEqual(status.socketPath, core.info.socketPath)
      assert.strictEqual(status.home, core.home)
      assert.isAtLeast(status.now, status.startedAt)
    }).pipe(Effect.scoped)
  )

  it.effect("settings round trip; a value Core refuses leaves settings.json as it was", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      const next: Settings = {
        ...DEFAULT_SETTINGS,
        defaultProvider: "scripted",
        defaultModels: { claude: "sonnet" },
        effortProfiles: { codex: { low: { argv: ["--config=model_reasoning_effort=low"], env: {} } } }
      }
      const saved = yield* desktop["desktop.settings.set"]({ settings: next })
      const { secretsSet: _, ...stored } = yield* desktop["desktop.settings.get"]()
      assert.deepStrictEqual(stored, next)
      assert.strictEqual(saved.defaultProvider, "scripted")
      const before = yield* Effect.promise(settingsText)

      // A token outside codex's allow-list: refused by the rule sessions are created with.
      const unsafe = { ...next, effortProfiles: { codex: { high: { argv: ["--yolo"], env: {} } } } }
      const refused = yield* failureOf(desktop["desktop.settings.set"]({ settings: unsafe }))
      assert.strictEqual(refused?.code, "EFFORT_LEVEL_INVALID")
      assert.include(String(refused?.details?.reason), "--yolo")
      // Not a Settings at all (sent raw: the typed client would not even encode it).
      const bad = { ...next, ollama: { baseUrl: "ftp://example.com", timeoutMs: 5 } }
      const answer = yield* Effect.promise(() => rawRequest("desktop.settings.set", { settings: bad }, proven()))
      assert.notInclude(JSON.stringify(answer), '"_tag":"Success"')
      assert.strictEqual(yield* Effect.promise(settingsText), before)
    }).pipe(Effect.scoped)
  )

  it.effect("a secret is stored 0600 and never shown back; clear_secret removes it", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      const value = "sk-desktop-0123456789"
      const set = yield* desktop["desktop.settings.set_secret"]({ name: "ollamaApiKey", value })
      assert.isTrue(set.secretsSet.ollamaApiKey)
      const got = yield* desktop["desktop.settings.get"]()
      for (const answer of [set, got]) assert.notInclude(JSON.stringify(answer), value)
      const host = yield* hostClient(core.info)
      assert.notInclude(JSON.stringify(yield* host["settings.get"]()), value)
      const mode = (yield* Effect.promise(() => stat(core.paths.secretsFile))).mode & 0o777
      assert.strictEqual(mode, 0o600)
      const cleared = yield* desktop["desktop.settings.clear_secret"]({ name: "ollamaApiKey" })
      assert.isFalse(cleared.secretsSet.ollamaApiKey)
      assert.notInclude(yield* Effect.promise(() => readFile(core.paths.secretsFile, "utf8")), value)
    }).pipe(Effect.scoped)
  )

  it.effect("providers: listed with where each was found, and again after a rescan", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      for (const rescan of [false, true]) {
        const listed = yield* desktop["desktop.providers.list"]({ rescan })
        const scripted = listed.find((info) => info.code === "scripted")
        assert.isTrue(scripted?.available)
        assert.isTrue(path.isAbsolute(scripted?.location ?? ""), String(scripted?.location))
        const codex = listed.find((info) => info.code === "codex")
        assert.strictEqual(codex?.location === null, !codex?.available)
      }
    }).pipe(Effect.scoped)
  )

  it.effect("effort: each provider's knob, allow-list and defaults; a profile checked with the reason", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      const described = yield* desktop["desktop.effort.describe"]()
      const codex = described.find((entry) => entry.provider === "codex")
      assert.isTrue(codex?.effort.supported)
      assert.isTrue(codex?.allowList.argv.some((pattern) => pattern.includes("model_reasoning_effort")))
      assert.deepStrictEqual(codex?.defaults.low.argv, ["--config=model_reasoning_effort=low"])
      assert.isFalse(described.find((entry) => entry.provider === "scripted")?.effort.supported ?? true)

      const profile = { argv: ["--config=model_reasoning_effort=high"], env: {}, model: "gpt-5" }
      const ok = yield* desktop["desktop.effort.check"]({ provider: "codex", level: "high", profile })
      assert.strictEqual(ok.commandLine, "--model gpt-5 --config=model_reasoning_effort=high")
      const token = "--dangerously-bypass-approvals-and-sandbox"
      const refused = yield* failureOf(
        desktop["desktop.effort.check"]({ provider: "codex", level: "low", profile: { argv: [token], env: {} } })
      )
      assert.strictEqual(refused?.code, "EFFORT_LEVEL_INVALID")
      assert.include(String(refused?.details?.reason), token)
      const env = { argv: [], env: { LD_PRELOAD: "/tmp/x.so" } }
      const byEnv = yield* failureOf(desktop["desktop.effort.check"]({ provider: "codex", level: "low", profile: env }))
      assert.include(String(byEnv?.details?.reason), "LD_PRELOAD")
    }).pipe(Effect.scoped)
  )

  it.effect("ollama check: a real loopback server's version and models; an unreachable one is OLLAMA_UNAVAILABLE", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      const found = yield* desktop["desktop.ollama.check"]({ baseUrl: server.url, apiKey: "ollama" })
      assert.strictEqual(found.version, OLLAMA_VERSION)
      assert.deepStrictEqual(
        found.models.map((model) => model.name),
        ["scripted-model", "llama3.2:1b"]
      )
      const tags = server.requests().filter((request) => request.route === "ollama-tags")
      assert.strictEqual(tags.at(-1)?.headers.authorization, "Bearer [redacted]")
      // A port nobody listens on: bind one, note it, close it.
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const probe = net.createServer().listen(0, "127.0.0.1", () => {
              const { port } = probe.address() as net.AddressInfo
              probe.close(() => resolve(port))
            })
          })
      )
      const unreachable = yield* failureOf(desktop["desktop.ollama.check"]({ baseUrl: `http://127.0.0.1:${port}` }))
      assert.strictEqual(unreachable?.code, "OLLAMA_UNAVAILABLE")
      assert.strictEqual(unreachable?.details?.baseUrl, `http://127.0.0.1:${port}`)
    }).pipe(Effect.scoped)
  )

  it.live("every origin's sessions: listed, one of another origin ended, its history read from the log", () =>
    Effect.gen(function* () {
      const host = yield* hostClient(core.info)
      const desktop = yield* desktopClient(core.info)
      const mine = yield* openSession(host, {})
      const theirs = yield* openSession(host, {}, { origin: OTHER_ORIGIN })
      const turn = yield* host["session.send_text"]({
        origin: OTHER_ORIGIN,
        sessionId: theirs.sessionId,
        text: script("say from the other origin")
      })
      yield* theirs.events.next(completionOf(turn.turnId))

      const listed = yield* desktop["desktop.session.list"]()
      const originOf = (sessionId: SessionId) => listed.find((session) => session.sessionId === sessionId)?.origin
      assert.strictEqual(originOf(mine.sessionId), ORIGIN as Origin)
      assert.strictEqual(originOf(theirs.sessionId), OTHER_ORIGIN)
      const busy = listed.find((session) => session.sessionId === theirs.sessionId)
      assert.isAtLeast(busy?.lastActivityAt ?? 0, busy?.createdAt ?? Number.MAX_SAFE_INTEGER)

      yield* desktop["desktop.session.end"]({ sessionId: theirs.sessionId })
      const ended = yield* theirs.events.next(
        (event): event is Extract<SessionEvent, { type: "ended" }> => event.type === "ended"
      )
      assert.strictEqual(ended.reason, "requested")
      const after = (yield* desktop["desktop.session.list"]()).map((session) => session.sessionId)
      assert.notInclude(after, theirs.sessionId)
      assert.include(after, mine.sessionId)
      const resumed = host["session.resume"]({ origin: OTHER_ORIGIN, sessionId: theirs.sessionId })
      assert.strictEqual(yield* failureCode(resumed), "SESSION_ENDED")
      assert.strictEqual(
        yield* failureCode(desktop["desktop.session.end"]({ sessionId: theirs.sessionId })),
        "SESSION_NOT_FOUND"
      )

      const all = yield* desktop["desktop.events.history"]({ sessionId: theirs.sessionId, afterSeq: 0, limit: 5_000 })
      assert.isFalse(all.more)
      assert.deepStrictEqual(
        all.events.map((event) => event.seq),
        all.events.map((_, index) => index + 1)
      )
      assert.deepStrictEqual(all.events, theirs.events.seen)
      assert.strictEqual(all.events.at(-1)?.type, "ended")
      const page = yield* desktop["desktop.events.history"]({ sessionId: theirs.sessionId, afterSeq: 1, limit: 2 })
      assert.deepStrictEqual(
        page.events.map((event) => event.seq),
        [2, 3]
      )
      assert.isTrue(page.more)
      yield* host["session.end"]({ origin: ORIGIN, sessionId: mine.sessionId })
    }).pipe(Effect.scoped)
  )

  it.live("watch: a live turn's events in order, and a watched lease still runs out", () =>
    Effect.gen(function* () {
      const host = yield* hostClient(core.info)
      const watch = yield* watching
      yield* watch.next((item): item is Extract<WatchItem, { kind: "sessions" }> => item.kind === "sessions")
      const { sessionId, events } = yield* openSession(host, {})
      const opened = yield* watch.next((item): item is Extract<WatchItem, { kind: "opened" }> => item.kind === "opened")
      assert.strictEqual(opened.session.sessionId, sessionId)
      const { turnId } = yield* host["session.send_text"]({ origin: ORIGIN, sessionId, text: script("say watched") })
      const completed = yield* events.next(completionOf(turnId))
      const seen: Array<SessionEvent> = []
      while (seen.at(-1)?.seq !== completed.seq) seen.push((yield* watch.next(eventOf(sessionId))).event)
      assert.deepStrictEqual(
        seen,
        events.seen.filter((event) => event.seq <= completed.seq)
      )
      yield* host["session.end"]({ origin: ORIGIN, sessionId })

      // Nobody subscribes to this one; the watcher sees it, yet does not keep it alive.
      const leased = yield* host["session.create"]({
        origin: ORIGIN,
        input: { provider: "scripted", autoEndOnDisconnect: true }
      })
      const end = yield* watch.next(eventOf(leased.sessionId, "ended"), LEASE_MS + 10_000)
      assert.strictEqual((end.event as Extract<SessionEvent, { type: "ended" }>).reason, "disconnected")
    }).pipe(Effect.scoped)
  )

  it.effect("full access: the opt-in is set and taken back per origin, each origin once", () =>
    Effect.gen(function* () {
      const desktop = yield* desktopClient(core.info)
      yield* desktop["desktop.origin.full_access"]({ origin: OTHER_ORIGIN, enabled: true })
      const twice = yield* desktop["desktop.origin.full_access"]({ origin: OTHER_ORIGIN, enabled: true })
      assert.deepStrictEqual(
        twice.fullAccessOrigins.filter((origin) => origin === OTHER_ORIGIN),
        [OTHER_ORIGIN]
      )
      const stored = JSON.parse(yield* Effect.promise(settingsText)) as Settings
      assert.include(stored.fullAccessOrigins, OTHER_ORIGIN)
      const off = yield* desktop["desktop.origin.full_access"]({ origin: OTHER_ORIGIN, enabled: false })
      assert.notInclude(off.fullAccessOrigins, OTHER_ORIGIN)
    }).pipe(Effect.scoped)
  )
})
