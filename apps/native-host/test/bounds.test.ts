// What one inbound frame may cost the built native host: a frame Core's IPC line cap would refuse is answered
// MESSAGE_TOO_LARGE by the host itself, for that request only (the Core connection, its subscription and the turn
// carry on); a frame of a million keys is refused before it is parsed, with the host's peak RSS bounded; a length
// Chrome never sends is answered and the host exits non-zero at once, since the stream cannot be read again.
import { readFile } from "node:fs/promises"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { MAX_LINE_LENGTH } from "@pedelec/core-client/Ndjson"
import { script } from "@pedelec/providers/scripted/Script"
import { eventOf, type Host, isEvent, ORIGIN, removeHome, startHost, stopCore, tempHome } from "./harness.ts"

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

const MIB = 1024 * 1024
const EMPTY = { type: "object", properties: {} } as const
const skills = { guidance: "Use the tools.", tools: [{ name: "lookup", description: "Looks up.", argsSchema: EMPTY }] }

/** Peak resident memory of a live process, in MB (VmHWM). */
const peakMb = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024
}

/** The figures a row prints: on stderr, beside vitest's own output. */
const figure = (line: string) => process.stderr.write(`${line}\n`)

const answerTo = (on: Host, id: string) => on.next((m) => m.kind === "response" && m.id === id, 60_000)
const codeOf = (message: Record<string, unknown>) => (message.error as { readonly code?: string } | undefined)?.code

describe("pedelec-native-host bounds", () => {
  it("refuses a result Core's line cap would refuse, for that request only: subscription and turn carry on", async () => {
    const on = host()
    const created = await on.request("session.create", {
      input: { provider: "scripted", autoEndOnDisconnect: false, skills }
    })
    assert.isTrue(created.ok, JSON.stringify(created.error))
    const { sessionId } = created.result as { readonly sessionId: string }
    const subscribed = await on.request("session.subscribe", { sessionId, afterSeq: 0, claimTools: true })
    assert.isTrue(subscribed.ok, JSON.stringify(subscribed.error))
    await on.request("session.send_text", { sessionId, text: script("call lookup {}", "say done") })
    const call = eventOf(await on.next(isEvent(subscribed.id, "tool_call")))
    const submit = (id: string, result: unknown) =>
      on.send({
        kind: "request",
        id,
        method: "tool.submit_result",
        origin: ORIGIN,
        params: { sessionId, toolCallId: call.toolCallId, outcome: { ok: true, result } }
      })

    // 17 MiB of frame: skipped unread; then a frame under the cap whose Core line (with its envelope) is over it.
    submit("over-frame", "x".repeat(17 * MIB))
    submit("over-line", "y".repeat(MAX_LINE_LENGTH - 1024))
    for (const id of ["over-frame", "over-line"]) {
      const refused = await answerTo(on, id)
      assert.strictEqual(codeOf(refused), "MESSAGE_TOO_LARGE", JSON.stringify(refused).slice(0, 400))
      const details = (refused.error as { readonly details: Record<string, unknown> }).details
      assert.strictEqual(details.limit, MAX_LINE_LENGTH)
      figure(`${id}: ${codeOf(refused)}, ${details.bytes} bytes over the ${details.limit} limit`)
    }

    submit("fits", { answer: 42 })
    assert.deepStrictEqual((await answerTo(on, "fits")).result, { accepted: true })
    const completed = eventOf(await on.next(isEvent(subscribed.id, "turn_completed")))
    assert.strictEqual(completed.text, "done")
    assert.isUndefined(
      on.messages.find((m) => m.kind === "subscription_ended"),
      "the subscription is still open"
    )
    assert.isTrue((await on.request("providers.list", {})).ok)
    assert.strictEqual((await on.close()).code, 0)
  })

  it("refuses a frame of 1e6 keys before parsing it: MESSAGE_TOO_LARGE, host VmHWM under 200 MB", async () => {
    const on = host()
    const keys: Record<string, number> = {}
    for (let index = 0; index < 1_000_000; index++) keys[`k${index}`] = 1
    const params = { sessionId: "s".repeat(30), toolCallId: "t".repeat(30), outcome: { ok: true, result: keys } }
    const started = Date.now()
    on.send({ kind: "request", id: "keys", method: "tool.submit_result", origin: ORIGIN, params })
    const refused = await answerTo(on, "keys")
    const peak = await peakMb(on.child.pid!)
    figure(`1e6 keys: ${codeOf(refused)} in ${Date.now() - started} ms, host VmHWM ${peak.toFixed(0)} MB`)
    assert.strictEqual(codeOf(refused), "MESSAGE_TOO_LARGE")
    assert.isBelow(peak, 200)
    assert.strictEqual((await on.request("providers.list", {})).kind, "response", "still answering")
    assert.strictEqual((await on.close()).code, 0)
  })

  it("answers a 0xFFFFFFFF length MESSAGE_TOO_LARGE, then exits non-zero within 1 s", async () => {
    const on = host()
    const header = Buffer.alloc(4)
    header.writeUInt32LE(0xffffffff)
    const exited = new Promise<{ readonly code: number | null; readonly at: number }>((resolve) =>
      on.child.once("exit", (code) => resolve({ code, at: Date.now() }))
    )
    on.writeRaw(Buffer.concat([header, Buffer.from('{"kind":"request","id":"bogus","method":"providers.list"')]))
    const refused = await answerTo(on, "bogus")
    const answeredAt = Date.now()
    assert.strictEqual(codeOf(refused), "MESSAGE_TOO_LARGE")
    const { code, at } = await Promise.race([
      exited,
      new Promise<{ code: null; at: number }>((resolve) => setTimeout(() => resolve({ code: null, at: -1 }), 5_000))
    ])
    figure(`0xFFFFFFFF: ${codeOf(refused)}, exit ${code} ${at < 0 ? "not within 5 s" : `${at - answeredAt} ms later`}`)
    assert.isNotNull(code, "the host exited")
    assert.notStrictEqual(code, 0)
    assert.isBelow(at - answeredAt, 1000)
  })
})
