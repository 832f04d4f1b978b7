import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { defineTool, Pedelec, PedelecError } from "../src/index.ts"
import {
  events,
  FakeExtension,
  resetSeq,
  SESSION_ID,
  sessionInfo,
  tick,
  uninstall,
  wireError
} from "./FakeExtension.ts"

let chrome: FakeExtension
beforeEach(() => {
  chrome = new FakeExtension().install()
  resetSeq()
})
afterEach(uninstall)

const TURN = "turn0001"
const tools = [
  defineTool({ name: "count", description: "counts", argsSchema: { type: "object" } }),
  defineTool({ name: "inline", description: "has its own", argsSchema: { type: "object" }, handler: () => "inline" })
] as const

const open = async (claim = true) => {
  const client = new Pedelec()
  const session = claim
    ? await client.createSession({ skills: { guidance: "", tools } })
    : await client.resumeSession(SESSION_ID)
  return { client, session }
}

const submitted = () => chrome.requests("tool.submit_result").map((r) => r.params)

describe("events", () => {
  it("delivers each event once and in order: a replayed seq is dropped", async () => {
    const { session } = await open()
    const seen: Array<string> = []
    session.onChatDelta((delta, ctx) => seen.push(`${ctx.seq}:${delta}`))
    const a = events.delta(TURN, "a")
    const b = events.delta(TURN, "b")
    for (const event of [a, b, a, b]) chrome.port.event(event)
    expect(seen).toEqual(["1:a", "2:b"])
  })

  it("gives every callback the event's context", async () => {
    const { session } = await open()
    let ctx: unknown
    session.onChat((_, c) => {
      ctx = c
    })
    chrome.port.event(events.chat(TURN, "hi"))
    expect(ctx).toMatchObject({ sessionId: SESSION_ID, turnId: TURN, provider: "scripted", source: "core", seq: 1 })
  })

  it("keeps dispatching when a page callback throws", async () => {
    const { session } = await open()
    const seen: Array<string> = []
    const reported: Array<unknown> = []
    const report = (globalThis as { reportError?: unknown }).reportError
    Object.assign(globalThis, { reportError: (e: unknown) => reported.push(e) })
    session.onChat(() => {
      throw new Error("page bug")
    })
    session.onChat((text) => seen.push(text))
    chrome.port.event(events.chat(TURN, "x"))
    Object.assign(globalThis, { reportError: report })
    expect(seen).toEqual(["x"])
    expect(reported).toHaveLength(1)
  })

  it("fires onEnded once, from Core's status and ended events alike", async () => {
    const { session } = await open()
    let ended = 0
    session.onEnded(() => ended++)
    chrome.port.event({ ...events.status("idle"), status: "ended" } as never)
    chrome.port.event(events.ended())
    await session.end()
    expect(ended).toBe(1)
    expect(session.getStatus()).toBe("ended")
    expect(chrome.requests("session.end")).toHaveLength(0)
  })
})

describe("turns", () => {
  it("resolves sendText at the completion event, even one that arrives before the answer", async () => {
    chrome.on("session.send_text", (_, port) => {
      port.event(events.completed(TURN, "done"))
      return { result: { turnId: TURN } }
    })
    const { session } = await open()
    expect(await session.sendText("go")).toEqual({ turnId: TURN, reason: "completed", text: "done" })
  })

  it("rejects with the turn's own error code, and the session stays usable", async () => {
    let turn = 0
    chrome.on("session.send_text", (_, port) => {
      const id = `turn000${++turn}`
      setTimeout(() => port.event(events.completed(id, "", turn === 1 ? wireError("PROVIDER_FAILED") : undefined)))
      return { result: { turnId: id } }
    })
    const { session } = await open()
    const error = await session.sendText("go").catch((e: PedelecError) => e)
    expect(error).toMatchObject({ code: "PROVIDER_FAILED" })
    expect((await session.sendText("again")).reason).toBe("completed")
  })

  it("refuses a second turn while one runs with SESSION_BUSY", async () => {
    chrome.on("session.send_text", () => ({ result: { turnId: TURN } }))
    const { session } = await open()
    const first = session.sendText("one")
    const second = await session.sendText("two").catch((e: PedelecError) => e.code)
    expect(second).toBe("SESSION_BUSY")
    chrome.port.event(events.completed(TURN, "ok"))
    expect((await first).text).toBe("ok")
  })

  it("frees the session when the request itself fails", async () => {
    chrome.on("session.send_text", () => ({ error: wireError("MODEL_REQUIRED") }))
    const { session } = await open()
    expect(await session.sendText("x").catch((e: PedelecError) => e.code)).toBe("MODEL_REQUIRED")
    chrome.on("session.send_text", () => ({ error: wireError("SESSION_BUSY") }))
    expect(await session.sendText("x").catch((e: PedelecError) => e.code)).toBe("SESSION_BUSY")
    expect(chrome.requests("session.send_text")).toHaveLength(2)
  })

  it("times a turn out with REQUEST_TIMEOUT and cancels it", async () => {
    chrome.on("session.send_text", () => ({ result: { turnId: TURN } }))
    chrome.on("session.cancel", () => ({ result: { cancelled: true } }))
    const { session } = await open()
    const error = await session.sendText("x", { timeoutMs: 30 }).catch((e: PedelecError) => e)
    expect(error).toMatchObject({ code: "REQUEST_TIMEOUT", details: { method: "sendText" } })
    await tick()
    expect(chrome.requests("session.cancel")).toHaveLength(1)
  })

  it("hides the chat of a prepare turn", async () => {
    chrome.on("session.prepare", (_, port) => {
      port.event(events.delta(TURN, "warming up"))
      setTimeout(() => port.event({ ...events.completed(TURN, ""), turnKind: "prepare" } as never))
      return { result: { turnId: TURN } }
    })
    const { session } = await open()
    const seen: Array<string> = []
    session.onChatDelta((d) => seen.push(d))
    await session.prepare()
    expect(seen).toEqual([])
  })

  it("rejects a waiting sendText with SESSION_ENDED when the session ends", async () => {
    chrome.on("session.send_text", () => ({ result: { turnId: TURN } }))
    const { session } = await open()
    const turn = session.sendText("x").catch((e: PedelecError) => e.code)
    await tick()
    chrome.port.event(events.ended())
    expect(await turn).toBe("SESSION_ENDED")
    expect(await session.sendText("y").catch((e: PedelecError) => e.code)).toBe("SESSION_ENDED")
  })
})

describe("tool calls", () => {
  /** A call offered to a claim: this page's own (the token its subscribe carried) or another tab's. */
  const offeredTo = (claimant: string, toolCallId: string, tool = "count") => ({
    ...events.toolCall(TURN, toolCallId, tool),
    claimant
  })
  const myClaimant = () => String(chrome.requests("session.subscribe")[0]!.params.claimant)
  /** A handler that runs until its signal aborts, and says with what. */
  const untilAborted =
    (runs: Array<string>, reasons: Array<string>) =>
    (_args: unknown, ctx: { signal: AbortSignal; toolCallId: string }) => {
      runs.push(ctx.toolCallId)
      return new Promise((_, reject) =>
        ctx.signal.addEventListener("abort", () => {
          reasons.push(String((ctx.signal.reason as PedelecError).details?.reason ?? ""))
          reject(ctx.signal.reason)
        })
      )
    }

  it("stops the handler when the tab loses the claim, and runs only calls offered to its own claim", async () => {
    const { session } = await open()
    const [runs, reasons]: [Array<string>, Array<string>] = [[], []]
    session.onTool("count", untilAborted(runs, reasons))
    chrome.port.event(offeredTo(myClaimant(), "call0001"))
    await tick(10)
    expect(runs).toEqual(["call0001"])
    // Another tab resumed with claimTools: Core offers the call again, to it.
    chrome.port.event(offeredTo("other-tab-claim", "call0001"))
    chrome.port.event(offeredTo("other-tab-claim", "call0002"))
    await tick(10)
    expect(reasons).toEqual(["another tab claimed the tools"])
    expect(runs).toEqual(["call0001"])
    expect(submitted()).toEqual([])
  })

  it("stops a handler running here when the call's result arrives from elsewhere", async () => {
    const { session } = await open()
    const [runs, reasons]: [Array<string>, Array<string>] = [[], []]
    session.onTool("count", untilAborted(runs, reasons))
    chrome.port.event(offeredTo(myClaimant(), "call0001"))
    await tick(10)
    chrome.port.event({
      ...events.toolCall(TURN, "call0001", "count"),
      type: "tool_result",
      outcome: { ok: true, result: 1 }
    } as never)
    await tick(10)
    expect([runs, reasons]).toEqual([["call0001"], ["the call was answered elsewhere"]])
    expect(submitted()).toEqual([])
  })

  it("makes no error for the result of a call that finished here (every call's result comes back to its page)", async () => {
    const { session } = await open()
    session.onTool("count", () => 1)
    chrome.port.event(offeredTo(myClaimant(), "call0001"))
    await tick(10)
    expect(submitted()).toHaveLength(1)
    const made = vi.spyOn(PedelecError, "fromCode")
    try {
      chrome.port.event({
        ...events.toolCall(TURN, "call0001", "count"),
        type: "tool_result",
        outcome: { ok: true, result: 1 }
      } as never)
      chrome.port.event({ ...events.toolCancelled(TURN, "call0001"), reason: "TOOL_TIMEOUT" } as never)
      expect(made).not.toHaveBeenCalled()
    } finally {
      made.mockRestore()
    }
  })

  it("picks the named handler, then the inline one, then the generic one, then TOOL_HANDLER_NOT_FOUND", async () => {
    const { session } = await open()
    session.onTool("count", () => "named")
    session.onTool((tool) => `generic ${tool}`)
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    chrome.port.event(events.toolCall(TURN, "call0002", "inline"))
    chrome.port.event(events.toolCall(TURN, "call0003", "other"))
    await tick(10)
    expect(submitted().map((p) => p.outcome)).toEqual([
      { ok: true, result: "named" },
      { ok: true, result: "inline" },
      { ok: true, result: "generic other" }
    ])
    const { session: bare } = await open()
    chrome.port.event(events.toolCall(TURN, "call0004", "count"))
    await tick(10)
    expect(bare.getStatus()).toBe("idle")
    expect(submitted().at(-1)!.outcome).toMatchObject({ ok: false, error: { code: "TOOL_HANDLER_NOT_FOUND" } })
  })

  it("turns a throw into TOOL_HANDLER_ERROR with the thrown code as appCode", async () => {
    const { session } = await open()
    session.onTool("count", () => {
      throw Object.assign(new Error("no such row"), { code: "ROW_MISSING" })
    })
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick(10)
    expect(submitted()[0]!.outcome).toMatchObject({
      ok: false,
      error: { code: "TOOL_HANDLER_ERROR", details: { tool: "count", reason: "no such row", appCode: "ROW_MISSING" } }
    })
  })

  it("refuses results that are not plain JSON, or over 4 MiB", async () => {
    const { session } = await open()
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const results: Record<string, unknown> = {
      call0001: () => 1,
      call0002: cyclic,
      call0003: 10n,
      call0004: new Date(0),
      call0005: "x".repeat(4 * 1024 * 1024 + 1),
      call0006: undefined
    }
    session.onTool("count", (_, ctx) => results[ctx.toolCallId])
    for (const id of Object.keys(results)) chrome.port.event(events.toolCall(TURN, id, "count"))
    await tick(20)
    const codes = submitted().map((p) => {
      const outcome = p.outcome as { ok: boolean; error?: { code: string }; result?: unknown }
      return outcome.ok ? outcome.result : outcome.error!.code
    })
    expect(codes).toEqual([
      "TOOL_RESULT_INVALID",
      "TOOL_RESULT_INVALID",
      "TOOL_RESULT_INVALID",
      "TOOL_RESULT_INVALID",
      "TOOL_RESULT_TOO_LARGE",
      null
    ])
  })

  it("gives the handler the call's id under both names, toolCallId and the earlier SDK's toolRequestId", async () => {
    const { session } = await open()
    const seen: Array<readonly [string, string]> = []
    session.onTool("count", (_, ctx) => seen.push([ctx.toolCallId, ctx.toolRequestId]))
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick(10)
    expect(seen).toEqual([["call0001", "call0001"]])
  })

  it("runs a call offered again (same toolCallId) once", async () => {
    const { session } = await open()
    let runs = 0
    session.onTool("count", () => ++runs)
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick(10)
    expect(runs).toBe(1)
  })

  it("leaves calls to the claiming tab: an observer never runs a handler", async () => {
    chrome.on("session.resume", () => ({ result: sessionInfo() }))
    const { session } = await open(false)
    let runs = 0
    session.onTool(() => ++runs)
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick(10)
    expect(runs).toBe(0)
    expect(submitted()).toHaveLength(0)
  })

  it("aborts ctx.signal when Core cancels the call, and submits nothing after", async () => {
    const { session } = await open()
    let aborted: unknown
    session.onTool("count", (_, ctx) => {
      ctx.progress("working")
      return new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => {
          aborted = ctx.signal.reason
          resolve("late")
        })
      )
    })
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick()
    chrome.port.event(events.toolCancelled(TURN, "call0001"))
    await tick(10)
    expect(aborted).toMatchObject({ code: "TOOL_CANCELLED" })
    expect(submitted()).toHaveLength(0)
    expect(chrome.requests("tool.progress")[0]!.params).toMatchObject({ toolCallId: "call0001", message: "working" })
  })

  it("ctx.awaitingUser() tells Core the call waits on a person, with the session and call ids only", async () => {
    const { session } = await open()
    let answer: (value: string) => void = () => undefined
    session.onTool("count", (_, ctx) => {
      ctx.awaitingUser()
      return new Promise<string>((resolve) => {
        answer = resolve
      })
    })
    chrome.port.event(events.toolCall(TURN, "call0001", "count"))
    await tick(10)
    expect(chrome.requests("tool.awaiting_user").map((request) => request.params)).toEqual([
      { sessionId: SESSION_ID, toolCallId: "call0001" }
    ])
    expect(submitted()).toHaveLength(0)
    answer("yes")
    await tick(10)
    expect(submitted()[0]).toMatchObject({ toolCallId: "call0001", outcome: { ok: true, result: "yes" } })
  })
})
