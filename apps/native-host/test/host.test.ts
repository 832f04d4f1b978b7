// The built native host as Chrome runs it, against a real Core it starts itself: Core started detached on the first
// request that needs it, a tool turn relayed both ways, 3 MiB messages chunked, refusals that keep the port up, and
// a prompt exit 0 when stdin closes.
import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import { script } from "@pedelec/providers/scripted/Script"
import {
  coreInfo,
  eventOf,
  type Host,
  isEvent,
  ORIGIN,
  OTHER_ORIGIN,
  removeHome,
  startHost,
  stopCore,
  tempHome
} from "./harness.ts"

let home: string
const hosts: Array<Host> = []
const host = () => {
  const started = startHost(home)
  hosts.push(started)
  return started
}

beforeAll(async () => {
  home = await tempHome()
})
afterAll(async () => {
  for (const started of hosts) started.child.kill("SIGKILL")
  await stopCore(home)
  await removeHome(home)
})

const EMPTY = { type: "object", properties: {} } as const
const skills = {
  guidance: "Use the tools.",
  tools: [
    { name: "lookup", description: "Looks something up.", argsSchema: EMPTY },
    { name: "big", description: "Returns 3 MiB.", argsSchema: EMPTY }
  ]
}

const createSession = async (on: Host) => {
  const created = await on.request("session.create", {
    input: { provider: "scripted", autoEndOnDisconnect: false, skills }
  })
  assert.isTrue(created.ok, JSON.stringify(created.error))
  return (created.result as { readonly sessionId: string }).sessionId
}

/** Session id of the process group leader: a detached Core leads its own session. */
const sessionOf = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3])
}

describe("pedelec-native-host", () => {
  it("answers extension-local requests without waking Core, then starts a detached Core that outlives it", async () => {
    // A Core that died without tidying up left its announcement behind: a dead pid counts as no Core.
    const stale = { ...JSON.parse('{"protocolVersion":1,"coreVersion":"0.1.0"}'), pid: 2 ** 22 + 7, startedAt: 0 }
    await mkdir(path.join(home, "run"), { recursive: true, mode: 0o700 })
    await writeFile(path.join(home, "run", "core.json"), JSON.stringify(stale), { mode: 0o600 })
    const first = host()
    const hello = await first.request("extension.hello", { protocolVersion: 1, sdkVersion: "0.1.0" })
    assert.strictEqual(hello.error?.code, "PROTOCOL_ERROR")
    assert.include(String(hello.error?.details?.reason), "extension itself")
    assert.strictEqual((await coreInfo(home))?.pid, stale.pid, "no Core started for an extension-local request")

    const providers = await first.request("providers.list", {})
    assert.isTrue(providers.ok, JSON.stringify(providers.error))
    assert.include(
      (providers.result as ReadonlyArray<{ readonly code: string }>).map((p) => p.code),
      "scripted"
    )
    const info = await coreInfo(home)
    assert.notStrictEqual(info?.pid, stale.pid, "a new Core replaced the stale announcement")
    const corePid = info!.pid
    assert.notStrictEqual(await sessionOf(corePid), await sessionOf(first.child.pid!), "Core has its own session")

    first.child.kill("SIGKILL")
    await sleep(300)
    assert.isTrue(isProcessAlive(corePid), "killing the host leaves Core running")

    // A second host finds the running Core instead of starting another.
    const second = host()
    const settings = await second.request("settings.get", {})
    assert.isTrue(settings.ok, JSON.stringify(settings.error))
    assert.strictEqual((await coreInfo(home))?.pid, corePid)
    assert.deepStrictEqual(await second.close().then((exit) => exit.code), 0)
  })

  it("relays a tool turn: tool_call arrives as a HostEvent, the result goes back, turn_completed arrives", async () => {
    const on = host()
    const sessionId = await createSession(on)
    const subscribed = await on.request("session.subscribe", { sessionId, afterSeq: 0, claimTools: true })
    assert.isTrue(subscribed.ok, JSON.stringify(subscribed.error))
    assert.deepStrictEqual(subscribed.result, {})
    const subscription = subscribed.id

    const sent = await on.request("session.send_text", { sessionId, text: script("call lookup {}", "say done") })
    assert.isTrue(sent.ok, JSON.stringify(sent.error))
    const turnId = (sent.result as { readonly turnId: string }).turnId
    const call = eventOf(await on.next(isEvent(subscription, "tool_call")))
    assert.strictEqual(call.tool, "lookup")
    const submitted = await on.request("tool.submit_result", {
      sessionId,
      toolCallId: call.toolCallId,
      outcome: { ok: true, result: { answer: 42 } }
    })
    assert.deepStrictEqual(submitted.result, { accepted: true })
    const completed = eventOf(await on.next(isEvent(subscription, "turn_completed")))
    assert.strictEqual(completed.turnId, turnId)
    assert.strictEqual(completed.reason, "completed")
    assert.strictEqual(completed.text, "done")

    const ended = await on.request("session.end", { sessionId })
    assert.deepStrictEqual(ended.result, {})
    const over = await on.next((m) => m.kind === "subscription_ended" && m.subscription === subscription)
    assert.strictEqual(over.sessionId, sessionId)
    assert.strictEqual((await on.close()).code, 0)
  })

  it("chunks a 3 MiB tool result event into frames of at most 1 MiB that reassemble exactly", async () => {
    const on = host()
    const sessionId = await createSession(on)
    const subscription = (await on.request("session.subscribe", { sessionId, afterSeq: 0, claimTools: true })).id
    await on.request("session.send_text", { sessionId, text: script("call big {}", "say done") })
    const call = eventOf(await on.next(isEvent(subscription, "tool_call")))
    // 3 MiB of UTF-8 with quotes and backslashes, which JSON escaping makes longer still.
    const result = `${'é€"\\'.repeat(256 * 1024)}${"x".repeat(1024 * 1024)}`
    const submitted = await on.request("tool.submit_result", {
      sessionId,
      toolCallId: call.toolCallId,
      outcome: { ok: true, result }
    })
    assert.deepStrictEqual(submitted.result, { accepted: true })
    const event = eventOf(await on.next(isEvent(subscription, "tool_result")))
    const outcome = event.outcome as { readonly ok: boolean; readonly result?: unknown }
    assert.isTrue(outcome.ok, JSON.stringify(outcome).slice(0, 500))
    // Compared without a diff: a 3 MiB string in an assertion message helps nobody.
    assert.isTrue(outcome.result === result, "the reassembled result is the submitted one")
    assert.isAtLeast(on.chunked.get(subscription) ?? 0, 3, "the tool_result came as chunk frames")
    await on.next(isEvent(subscription, "turn_completed"))
    await on.request("session.end", { sessionId })
    assert.strictEqual((await on.close()).code, 0)
  })

  it("sends a large chat as a ref to its deltas, and its turn_completed as one to the chat, only where asked", async () => {
    const on = host()
    const sessionId = await createSession(on)
    const subscribe = (textRefs: boolean) => {
      const id = `refs-${textRefs}`
      const params = { sessionId, afterSeq: 0, claimTools: false }
      on.send({
        kind: "request",
        id,
        origin: ORIGIN,
        method: "session.subscribe",
        params,
        ...(textRefs ? { textRefs } : {})
      })
      return on.next((m) => m.kind === "response" && m.id === id).then(() => id)
    }
    const refs = await subscribe(true)
    const plain = await subscribe(false)
    const big = "€".repeat(40_000)
    await on.request("session.send_text", { sessionId, text: script("say small", `say ${big}`) })
    const ofRefs = (type: string) =>
      on.next(
        (m) => m.subscription === refs && (m.kind === "event" || m.kind === "text_ref") && eventOf(m).type === type
      )
    await on.next(isEvent(plain, "turn_completed"))
    const completed = await ofRefs("turn_completed")
    const seen = on.messages.filter((m) => m.subscription === refs && m.kind !== "response")
    const shape = seen.map((m) => [m.kind, eventOf(m).type, eventOf(m).seq, m.fromSeq, m.toSeq])
    const deltas = seen.filter((m) => m.kind === "event" && eventOf(m).type === "chat_delta").map(eventOf)
    const chats = seen.filter((m) => eventOf(m).type === "chat")
    // The small chat goes whole; the large one names its one delta, and the completion that chat.
    assert.deepStrictEqual(
      chats.map((m) => [m.kind, eventOf(m).text === "" ? "" : "text"]),
      [
        ["event", "text"],
        ["text_ref", ""]
      ],
      JSON.stringify(shape)
    )
    const delta = deltas.find((event) => event.delta === big)!
    assert.deepStrictEqual([chats[1]!.fromSeq, chats[1]!.toSeq], [delta.seq, delta.seq])
    assert.deepStrictEqual([completed.kind, eventOf(completed).text], ["text_ref", ""])
    assert.deepStrictEqual([completed.fromSeq, completed.toSeq], [eventOf(chats[1]!).seq, eventOf(chats[1]!).seq])
    // Without `textRefs` every text crosses whole, as a host that predates refs sends it.
    const whole = on.messages.filter((m) => m.subscription === plain && m.kind !== "response")
    assert.isTrue(whole.every((m) => m.kind === "event"))
    assert.isTrue(whole.some((m) => eventOf(m).type === "chat" && eventOf(m).text === big))
    await on.request("session.end", { sessionId })
    assert.strictEqual((await on.close()).code, 0)
  })

  it("refuses malformed frames, bad params, deep nesting and a 57 MiB frame, and stays up", async () => {
    const on = host()
    on.writeRaw(Buffer.from([5, 0, 0, 0, 0x7b, 0x22, 0x69, 0x64, 0x22])) // `{"id"`: no JSON, no id
    on.send({ kind: "request", id: "bad-json", method: "nope", params: {} })
    const unknown = await on.next((m) => m.kind === "response" && m.id === "bad-json")
    assert.strictEqual((unknown.error as { code: string }).code, "PROTOCOL_ERROR")

    const badParams = await on.request("session.send_text", { sessionId: "s".repeat(30), text: "" })
    assert.strictEqual(badParams.error?.code, "INVALID_INPUT")
    assert.strictEqual(badParams.error?.details?.pointer, "/params/text")
    const extra = await on.request("providers.list", { rescan: true })
    assert.strictEqual(extra.error?.code, "INVALID_INPUT")

    let deep: unknown = {}
    for (let level = 0; level < 100; level++) deep = { deep }
    on.send({ kind: "request", id: "deep", method: "providers.list", origin: "http://127.0.0.1:5173", params: deep })
    const tooDeep = await on.next((m) => m.kind === "response" && m.id === "deep")
    assert.strictEqual((tooDeep.error as { code: string }).code, "PROTOCOL_ERROR")

    const noOrigin = await on.request("providers.list", {}, null)
    assert.strictEqual(noOrigin.error?.code, "PROTOCOL_ERROR")
    // Asset methods go to Core, which knows no such session.
    const assets = await on.request("asset.list", { sessionId: "s".repeat(30) })
    assert.strictEqual(assets.error?.code, "SESSION_NOT_FOUND")

    // Over Core's 16 MiB line cap, under Chrome's 64 MiB: skipped unread (a longer length is a broken stream).
    const huge = 57 * 1024 * 1024
    const head = Buffer.from('{"kind":"request","id":"huge","method":"session.send_text","params":{"text":"')
    const header = Buffer.alloc(4)
    header.writeUInt32LE(huge)
    on.writeRaw(Buffer.concat([header, head, Buffer.alloc(huge - head.length, 0x61)]))
    const tooLarge = await on.next((m) => m.kind === "response" && m.id === "huge")
    assert.strictEqual((tooLarge.error as { code: string }).code, "MESSAGE_TOO_LARGE")

    const still = await on.request("providers.list", {})
    assert.isTrue(still.ok, "the port is still up")
    assert.strictEqual((await on.close()).code, 0)
    assert.notInclude(on.stderr(), "a".repeat(100), "page data is not logged")
  })

  it("passes Core's SESSION_ACCESS_DENIED through for a session of another origin", async () => {
    const on = host()
    const sessionId = await createSession(on)
    for (const [method, params] of [
      ["session.send_text", { sessionId, text: "hi" }],
      ["session.subscribe", { sessionId, afterSeq: 0, claimTools: false }],
      ["session.end", { sessionId }]
    ] as const) {
      const refused = await on.request(method, params, OTHER_ORIGIN)
      assert.strictEqual(refused.error?.code, "SESSION_ACCESS_DENIED", method)
      assert.strictEqual(refused.error?.source, "core", "Core's error, unchanged")
    }
    await on.request("session.end", { sessionId })
    assert.strictEqual((await on.close()).code, 0)
  })

  it("answers CORE_RUNTIME_UNAVAILABLE, saying what to do, when no Core runs and none can be started", async () => {
    const empty = await tempHome()
    const on = startHost(empty, { PEDELEC_CORE_COMMAND: "" })
    hosts.push(on)
    const refused = await on.request("providers.list", {})
    assert.strictEqual(refused.error?.code, "CORE_RUNTIME_UNAVAILABLE")
    assert.include(String(refused.error?.details?.reason), "install-native-host")
    assert.strictEqual((await on.close()).code, 0)
    await removeHome(empty)
  })

  it("exits 0 promptly when stdin closes, with a subscription open", async () => {
    const on = host()
    const sessionId = await createSession(on)
    const subscribed = await on.request("session.subscribe", { sessionId, afterSeq: 0, claimTools: true })
    assert.isTrue(subscribed.ok)
    const { code, ms } = await on.close()
    assert.strictEqual(code, 0)
    assert.isBelow(ms, 3000)
    assert.include(on.stderr(), "stdin closed")
  })
})
