import { DEFAULT_SETTINGS } from "@pedelec/contracts/Settings"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Pedelec, PedelecError } from "../src/index.ts"
import { FakeExtension, SESSION_ID, sessionInfo, tick, uninstall, wireError } from "./FakeExtension.ts"

let chrome: FakeExtension
beforeEach(() => {
  chrome = new FakeExtension().install()
})
afterEach(uninstall)

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(PedelecError)
  return (error as PedelecError).code
}

describe("connecting", () => {
  it("is lazy: constructing the client opens no port", () => {
    new Pedelec()
    expect(chrome.ports).toHaveLength(0)
  })

  it("says hello with the protocol version before the first request", async () => {
    chrome.on("providers.list", () => ({ result: [] }))
    await new Pedelec().listProviders()
    expect(chrome.port.sent.map((r) => r.method)).toEqual(["extension.hello", "providers.list"])
    expect(chrome.port.sent[0]!.params).toMatchObject({ protocolVersion: 1 })
  })

  it("rejects EXTENSION_UNAVAILABLE without chrome.runtime, and without window (server rendering)", async () => {
    uninstall()
    expect(await codeOf(new Pedelec().getSettings())).toBe("EXTENSION_UNAVAILABLE")
    Object.assign(globalThis, { window: globalThis, chrome: {} })
    expect(await codeOf(new Pedelec().getSettings())).toBe("EXTENSION_UNAVAILABLE")
  })

  it("maps Chrome's 'Receiving end does not exist' to EXTENSION_UNAVAILABLE with the browser's reason", async () => {
    chrome.refuseWith = "Could not establish connection. Receiving end does not exist."
    const error = await new Pedelec().getSettings().catch((e: PedelecError) => e)
    expect(error).toMatchObject({ code: "EXTENSION_UNAVAILABLE", details: { reason: chrome.refuseWith } })
  })

  it("reports an extension that is not there as not installed, never as a failure", async () => {
    chrome.refuseWith = "Could not establish connection. Receiving end does not exist."
    const client = new Pedelec()
    expect(await client.getApprovalStatus()).toMatchObject({ installed: false, approved: false })
    expect(await client.checkAvailability()).toMatchObject({
      available: false,
      error: { code: "EXTENSION_UNAVAILABLE" }
    })
  })

  it("refuses an extension speaking another protocol version", async () => {
    chrome.on("extension.hello", () => ({ result: { protocolVersion: 99, extensionVersion: "9" } }))
    expect(await codeOf(new Pedelec().getSettings())).toBe("PROTOCOL_VERSION_MISMATCH")
  })

  it("times out an unanswered request with REQUEST_TIMEOUT naming the method", async () => {
    chrome.on("extension.approval_status", () => "silent")
    const error = await new Pedelec({ requestTimeoutMs: 50 }).getApprovalStatus().catch((e: PedelecError) => e)
    expect(error).toMatchObject({
      code: "REQUEST_TIMEOUT",
      details: { method: "extension.approval_status", timeoutMs: 50 }
    })
  })

  it("takes the earlier SDK's bridgeTimeoutMs as requestTimeoutMs", async () => {
    chrome.on("extension.approval_status", () => "silent")
    const error = await new Pedelec({ bridgeTimeoutMs: 40 }).getApprovalStatus().catch((e: PedelecError) => e)
    expect(error).toMatchObject({ code: "REQUEST_TIMEOUT", details: { timeoutMs: 40 } })
  })

  it("gives listProviders, getSettings and requestApproval the approval window on top of the request timeout", async () => {
    const status = { installed: true, approved: true, origin: "http://localhost", appConnected: true }
    const DEFAULT_PUBLIC_SETTINGS = { ...DEFAULT_SETTINGS, secretsSet: { ollamaApiKey: false } }
    const afterTheWindow = (result: unknown) => async () => {
      await tick(120)
      return { result }
    }
    chrome.on("providers.list", afterTheWindow([]))
    chrome.on("settings.get", afterTheWindow(DEFAULT_PUBLIC_SETTINGS))
    chrome.on("extension.request_approval", afterTheWindow(status))
    const pedelec = new Pedelec({ requestTimeoutMs: 50 })
    expect(await pedelec.listProviders()).toEqual([])
    expect((await pedelec.getSettings()).defaultProvider).toBe(DEFAULT_PUBLIC_SETTINGS.defaultProvider)
    expect(await pedelec.requestApproval()).toEqual(status)
  })

  it("gives creation the approval window on top of the request timeout", async () => {
    chrome.on("session.create", async () => {
      await tick(120)
      return { result: sessionInfo() }
    })
    const session = await new Pedelec({ requestTimeoutMs: 50 }).createSession()
    expect(session.sessionId).toBe(SESSION_ID)
  })

  it("passes the extension's errors through with their code and message", async () => {
    chrome.on("settings.get", () => ({ error: wireError("APPROVAL_REQUIRED", "Approve this site first.") }))
    const error = await new Pedelec().getSettings().catch((e: PedelecError) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ code: "APPROVAL_REQUIRED", message: "Approve this site first.", source: "core" })
  })

  it("refuses a malformed answer as PROTOCOL_ERROR rather than handing it to the page", async () => {
    chrome.on("providers.list", () => ({ result: [{ code: "nope" }] }))
    expect(await codeOf(new Pedelec().listProviders())).toBe("PROTOCOL_ERROR")
  })
})

describe("reconnecting", () => {
  it("reconnects after the service worker stops, resumes and re-subscribes from the last seq seen", async () => {
    const client = new Pedelec()
    const session = await client.createSession()
    const first = chrome.port
    first.event({
      type: "chat",
      sessionId: SESSION_ID as never,
      seq: 1,
      at: 1,
      turnId: "t".repeat(8) as never,
      text: "a"
    })
    first.drop()
    await tick(300)
    expect(chrome.ports).toHaveLength(2)
    const second = chrome.port.sent.map((r) => [r.method, r.params])
    expect(second).toEqual([
      ["extension.hello", expect.anything()],
      ["session.resume", { sessionId: SESSION_ID, claimTools: true }],
      ["session.subscribe", { sessionId: SESSION_ID, afterSeq: 1, claimant: expect.any(String) }]
    ])
    expect(session.getStatus()).toBe("idle")
  })

  it("re-sends an idempotent request (a tool result) on the new port and rejects one that may have run", async () => {
    chrome.on("settings.get", () => "silent")
    chrome.on("tool.submit_result", (_, port) => (port === chrome.ports[0] ? "silent" : { result: { accepted: true } }))
    const client = new Pedelec()
    const session = await client.createSession()
    session.onTool(() => "result")
    const settings = client.getSettings().catch((e: PedelecError) => e.code)
    chrome.port.event({
      type: "tool_call",
      sessionId: SESSION_ID as never,
      seq: 1,
      at: 1,
      turnId: "t".repeat(8) as never,
      toolCallId: "c".repeat(8) as never,
      tool: "count",
      args: {},
      timeoutMs: 60_000
    })
    await tick()
    chrome.port.drop()
    expect(await settings).toBe("EXTENSION_DISCONNECTED")
    await tick(300)
    const submits = chrome.requests("tool.submit_result")
    expect(submits).toHaveLength(2)
    expect(submits[1]).toEqual({ ...submits[0], id: submits[1]!.id })
    expect(chrome.ports[1]!.sent.map((r) => r.method)).toEqual([
      "extension.hello",
      "session.resume",
      "session.subscribe",
      "tool.submit_result"
    ])
  })

  it("re-subscribes one session when the native side dropped its subscription", async () => {
    const client = new Pedelec()
    await client.createSession()
    chrome.port.push({ kind: "notice", sessionId: SESSION_ID, error: wireError("NATIVE_CONNECTION_CLOSED") })
    await tick(10)
    expect(chrome.requests("session.subscribe")).toHaveLength(2)
    expect(chrome.ports).toHaveLength(1)
  })
})

describe("sessions", () => {
  it("validates tools before anything travels, with the pointer of the bad keyword", async () => {
    const error = await new Pedelec()
      .createSession({
        skills: {
          guidance: "",
          tools: [{ name: "t", description: "d", argsSchema: { type: "object", format: "x" } as never }]
        }
      })
      .catch((e: PedelecError) => e)
    expect(error).toMatchObject({
      code: "TOOLS_MANIFEST_INVALID",
      details: { pointer: "/skills/tools/0/argsSchema/format" }
    })
    expect(chrome.ports).toHaveLength(0)
  })

  it("refuses a model without a provider as INVALID_INPUT", async () => {
    const error = await new Pedelec().createSession({ model: "m" }).catch((e: PedelecError) => e)
    expect(error).toMatchObject({ code: "INVALID_INPUT", details: { pointer: "/model" } })
  })

  it("takes a property set to undefined as not given, as the earlier SDK's types allowed", async () => {
    await new Pedelec().createSession({
      provider: undefined,
      model: undefined,
      workspace: undefined,
      skills: {
        guidance: "g",
        tools: [{ name: "t", description: "d", argsSchema: { type: "object" }, timeoutMs: undefined }]
      }
    })
    expect(chrome.requests("session.create")[0]!.params).toEqual({
      input: { skills: { guidance: "g", tools: [{ name: "t", description: "d", argsSchema: { type: "object" } }] } }
    })
  })

  it("sends the manifest without handlers", async () => {
    await new Pedelec().createSession({
      skills: {
        guidance: "g",
        tools: [{ name: "count", description: "d", argsSchema: { type: "object" }, handler: () => 1 }]
      }
    })
    const sent = chrome.requests("session.create")[0]!.params
    expect(sent).toEqual({
      input: { skills: { guidance: "g", tools: [{ name: "count", description: "d", argsSchema: { type: "object" } }] } }
    })
  })

  it("refuses a malformed session id before asking the extension", async () => {
    expect(await codeOf(new Pedelec().resumeSession("../x"))).toBe("INVALID_INPUT")
    expect(chrome.ports).toHaveLength(0)
  })

  it("resumes a session it holds as the same handle, picked up from the last seq it saw", async () => {
    const client = new Pedelec()
    const observed = await client.resumeSession(SESSION_ID)
    chrome.port.event({
      type: "chat",
      sessionId: SESSION_ID as never,
      seq: 4,
      at: 1,
      turnId: "t".repeat(8) as never,
      text: "a"
    })
    const again = await client.resumeSession(SESSION_ID, { claimTools: true })
    expect(again).toBe(observed)
    expect(chrome.requests("session.resume").map((r) => r.params.claimTools)).toEqual([false, true])
    expect(chrome.requests("session.subscribe").map((r) => r.params.afterSeq)).toEqual([0, 4])
  })

  it("subscribes after the last seq the creation answer reported", async () => {
    chrome.on("session.create", () => ({ result: sessionInfo({ lastSeq: 7 }) }))
    await new Pedelec().createSession()
    // A creator claims the tools: its subscribe carries the token Core names in the tool calls offered to it.
    expect(chrome.requests("session.subscribe")[0]!.params).toEqual({
      sessionId: SESSION_ID,
      afterSeq: 7,
      claimant: expect.stringMatching(/^[0-9a-f]{32}$/)
    })
  })
})
