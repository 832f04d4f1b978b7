// The main scenario on both origin kinds (plain http on 127.0.0.1 and a real https origin), then the turn-level
// cases on the http page: busy, cancel, handler errors, sizes beyond the 1 MiB native frame, a service-worker
// restart in the middle of a turn, a second tab observing the same session, and one taking its tools over. One
// Chromium for the whole file.
import { readFile } from "node:fs/promises"
import { approvingIfAsked, stopServiceWorkers } from "@pedelec/chain/Browser"
import type { Chain } from "@pedelec/chain/Chain"
import { chainForFile, chatsOf, cliLines, createApproved, waitUntil } from "@pedelec/chain/Harness"
import { script } from "@pedelec/providers/scripted/Script"
import type { Page } from "playwright-core"
import { describe, expect, test } from "vitest"

const chain = chainForFile()

const originOf = { http: (c: Chain) => c.origins.http, https: (c: Chain) => c.origins.https! }

describe.each(["http", "https"] as const)("the main scenario on an %s origin", (kind) => {
  let page: Page
  let sessionId: string

  test("an unapproved origin is approved through the extension's approval window", async () => {
    const origin = originOf[kind](chain())
    page = await chain().openPage(origin)
    const { value, shown } = await createApproved(chain(), page)
    sessionId = value
    expect(shown).toContain(origin)
    const status = await page.evaluate((id) => window.e2e.client(id).getApprovalStatus(), chain().extensionId)
    expect(status).toMatchObject({ installed: true, approved: true, origin, appConnected: true })
  })

  test("a turn with two tool calls answered by the page's handlers", async () => {
    const text = script('call add {"a":2,"b":3}', 'call echo {"text":"héllo from the agent"}', "say done")
    const { result, calls } = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        const calls: Array<{ tool: string; turnId: string; sessionId: string; args: unknown }> = []
        const offAdd = session.onTool<{ readonly a: number; readonly b: number }>("add", (args, ctx) => {
          calls.push({ tool: ctx.tool, turnId: ctx.turnId, sessionId: ctx.sessionId, args })
          return { sum: args.a + args.b }
        })
        const offEcho = session.onTool<{ readonly text: string }>("echo", async (args, ctx) => {
          calls.push({ tool: ctx.tool, turnId: ctx.turnId, sessionId: ctx.sessionId, args })
          return { echoed: args.text }
        })
        const result = await session.sendText(text)
        offAdd()
        offEcho()
        return { result, calls }
      },
      { sessionId, text }
    )
    expect(result).toMatchObject({ reason: "completed", text: "done" })
    expect(calls).toEqual([
      { tool: "add", turnId: result.turnId, sessionId, args: { a: 2, b: 3 } },
      { tool: "echo", turnId: result.turnId, sessionId, args: { text: "héllo from the agent" } }
    ])
    // What the agent got back on pedelec-cli's stdout, as the scripted agent printed it.
    const chats = await chatsOf(page, sessionId, result.turnId)
    expect(cliLines(chats, "add")).toEqual([{ exit: 0, output: { ok: true, result: { sum: 5 } } }])
    expect(cliLines(chats, "echo")).toEqual([
      { exit: 0, output: { ok: true, result: { echoed: "héllo from the agent" } } }
    ])
  })

  test("a file the page uploads reaches the agent, and the file the agent writes comes back", async () => {
    const text = script(
      "read .pedelec-runtime/assets/in/notes.txt",
      'write .pedelec-runtime/assets/out/result.json {"ok":true,"from":"the agent"}',
      "say done"
    )
    const outcome = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        const upload = new File(["héllo from the page"], "notes.txt", { type: "text/plain" })
        const path = await session.uploadAsset(upload, "in/notes.txt")
        const result = await session.sendText(text)
        const listed = (await session.listAssets()).map((asset) => `${asset.path} ${asset.bytes} ${asset.contentType}`)
        const json = await session.readAsset("out/result.json", "json")
        const file = await session.readAsset("in/notes.txt", "file")
        return { path, result, listed: listed.sort(), json, file: [file.name, file.type, await file.text()] }
      },
      { sessionId, text }
    )
    expect(outcome.path).toBe("in/notes.txt")
    expect(outcome.result.reason).toBe("completed")
    expect(await chatsOf(page, sessionId, outcome.result.turnId)).toContain("héllo from the page")
    expect(outcome.json).toEqual({ ok: true, from: "the agent" })
    expect(outcome.file).toEqual(["notes.txt", expect.stringContaining("text/plain"), "héllo from the page"])
    expect(outcome.listed).toEqual([
      expect.stringMatching(/^in\/notes\.txt 20 text\/plain/),
      expect.stringMatching(/^out\/result\.json 30 application\/json/)
    ])
  })

  test("chat deltas arrive once, in order, before the complete message", async () => {
    const text = script("delta Hel", "delta lo, ", "delta world")
    const { result, seen } = await page.evaluate(
      async ({ sessionId, text }) => {
        const result = await window.e2e.session(sessionId).sendText(text)
        const seen = (window.e2e.records.get(sessionId) ?? []).filter((item) => item.turnId === result.turnId)
        return { result, seen }
      },
      { sessionId, text }
    )
    expect(result).toMatchObject({ reason: "completed", text: "Hello, world" })
    const deltas = seen.filter((item) => item.kind === "delta")
    // Core coalesces deltas that queue up together: the page may get fewer, never other text or another order.
    expect(deltas.map((item) => item.text).join("")).toBe("Hello, world")
    expect(deltas.length).toBeGreaterThanOrEqual(1)
    expect(deltas.every((item) => item.text !== "")).toBe(true)
    const chat = seen.find((item) => item.kind === "chat")
    expect(chat?.text).toBe("Hello, world")
    const fromCore = seen.filter((item) => item.source === "core").map((item) => item.seq)
    expect(fromCore).toEqual([...fromCore].sort((a, b) => a - b))
    expect(new Set(fromCore).size).toBe(fromCore.length)
    expect(deltas.every((item) => item.seq < (chat?.seq ?? 0))).toBe(true)
  })
})

describe("turns on the http page", () => {
  let page: Page
  let sessionId: string

  test("setup: a session on the http page", async () => {
    page = await chain().openPage(chain().origins.http)
    // Approved by the main scenario already, unless only these cases run (`-t`).
    sessionId = await approvingIfAsked(chain().context, chain().extensionId, () =>
      page.evaluate(async (extensionId) => {
        const session = await window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
        window.e2e.keep(session)
        return session.sessionId
      }, chain().extensionId)
    )
  })

  test("a second sendText while a turn runs rejects SESSION_BUSY, and the first turn completes", async () => {
    const outcome = await page.evaluate(
      async ({ sessionId, slow, quick }) => {
        const session = window.e2e.session(sessionId)
        const first = session.sendText(slow)
        const second = await window.e2e.failure(session.sendText(quick))
        return { second, first: await first }
      },
      { sessionId, slow: script("sleep 1500", "say slow done"), quick: "hello?" }
    )
    expect(outcome.second?.code).toBe("SESSION_BUSY")
    expect(outcome.first).toMatchObject({ reason: "completed", text: "slow done" })
  })

  test("cancel from the page during a tool call aborts the handler's signal and resolves 'cancelled'", async () => {
    const outcome = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        let aborted = false
        let statusDuringCall = ""
        let called: () => void = () => undefined
        const handlerRuns = new Promise<void>((resolve) => {
          called = resolve
        })
        const off = session.onTool(
          "wait",
          (_args, ctx) =>
            new Promise((resolve) => {
              // Core reports the status before it offers the call, so the handler already sees it.
              statusDuringCall = session.getStatus()
              ctx.signal.addEventListener("abort", () => {
                aborted = true
                resolve({ stopped: true })
              })
              called()
            })
        )
        const turn = session.sendText(text)
        await handlerRuns
        await session.cancel()
        const result = await turn
        off()
        for (let waited = 0; session.getStatus() !== "idle" && waited < 5000; waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        return { result, aborted, statusDuringCall, statusAfter: session.getStatus() }
      },
      { sessionId, text: script("call wait {}", "say never said") }
    )
    expect(outcome.result.reason).toBe("cancelled")
    expect(outcome.aborted).toBe(true)
    expect(outcome.statusDuringCall).toBe("waiting_tool_result")
    expect(outcome.statusAfter).toBe("idle")
  })

  test("the next turn after a cancel runs normally", async () => {
    const result = await page.evaluate(({ sessionId, text }) => window.e2e.session(sessionId).sendText(text), {
      sessionId,
      text: "are you still there?"
    })
    expect(result).toMatchObject({ reason: "completed", text: "echo: are you still there?" })
  })

  test("a handler that throws gives the agent TOOL_HANDLER_ERROR with the thrown code; no onError", async () => {
    const { result, errors } = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        const off = session.onTool("fail", () => {
          throw Object.assign(new Error("the page refused"), { code: "E_REFUSED" })
        })
        const result = await session.sendText(text)
        off()
        const errors = (window.e2e.records.get(sessionId) ?? []).filter(
          (seen) => seen.kind === "error" && seen.turnId === result.turnId
        )
        return { result, errors }
      },
      { sessionId, text: script("call fail {}", "say after") }
    )
    expect(result).toMatchObject({ reason: "completed", text: "after" })
    const [line] = cliLines(await chatsOf(page, sessionId, result.turnId), "fail")
    expect(line?.exit).toBe(1)
    expect(line?.output.error?.code).toBe("TOOL_HANDLER_ERROR")
    expect(line?.output.error?.message).toContain("the page refused")
    expect(line?.output.error?.details).toMatchObject({ appCode: "E_REFUSED" })
    expect(errors).toEqual([])
  })

  test("a declared tool without any handler gives the agent TOOL_HANDLER_NOT_FOUND", async () => {
    const result = await page.evaluate(({ sessionId, text }) => window.e2e.session(sessionId).sendText(text), {
      sessionId,
      text: script("call orphan {}", "say after")
    })
    const [line] = cliLines(await chatsOf(page, sessionId, result.turnId), "orphan")
    expect(line).toMatchObject({ exit: 1, output: { ok: false, error: { code: "TOOL_HANDLER_NOT_FOUND" } } })
  })

  test("a 3.9 MiB tool result passes the 1 MiB frame limit; 4.1 MiB is TOOL_RESULT_TOO_LARGE", async () => {
    const fits = Math.round(3.9 * MIB)
    const tooLarge = Math.round(4.1 * MIB)
    const result = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        const off = session.onTool<{ readonly bytes: number }>("blob", ({ bytes }) => "x".repeat(bytes))
        const result = await session.sendText(text)
        off()
        return result
      },
      { sessionId, text: script(`call blob {"bytes":${fits}}`, `call blob {"bytes":${tooLarge}}`, "say sized") }
    )
    expect(result).toMatchObject({ reason: "completed", text: "sized" })
    const [fitting, refused] = cliLines(await chatsOf(page, sessionId, result.turnId), "blob")
    // Over 32 KiB, pedelec-cli hands the agent a file; the whole result must be in it.
    expect(fitting).toMatchObject({ exit: 0, output: { ok: true } })
    const file = fitting?.output.resultFile ?? ""
    expect(JSON.parse(await readFile(file, "utf8"))).toBe("x".repeat(fits))
    expect(refused).toMatchObject({ exit: 1, output: { ok: false, error: { code: "TOOL_RESULT_TOO_LARGE" } } })
  })

  test("a chat message over 3 MiB reaches the page whole", async () => {
    // A turn's text is at most 1,000,000 characters, so the agent builds the message from two turns' memory:
    // 600,000 three-byte characters each, recalled together (3.6 MB of UTF-8).
    const part = "€".repeat(600_000)
    const outcome = await page.evaluate(
      async ({ sessionId, first, second }) => {
        const session = window.e2e.session(sessionId)
        await session.sendText(first)
        const result = await session.sendText(second)
        const chats = (window.e2e.records.get(sessionId) ?? []).filter(
          (seen) => seen.kind === "chat" && seen.turnId === result.turnId
        )
        const recalled = chats.map((seen) => seen.text).find((text) => text.startsWith("recalled: ")) ?? ""
        return { reason: result.reason, bytes: new TextEncoder().encode(recalled).length, recalled }
      },
      { sessionId, first: script(`remember ${part}`), second: script(`remember ${part}`, "recall") }
    )
    expect(outcome.reason).toBe("completed")
    expect(outcome.bytes).toBeGreaterThan(3 * MIB)
    expect(outcome.recalled === `recalled: ${part}, ${part}`).toBe(true)
  })

  test("the service worker stopped in the middle of a turn: the turn completes, no event lost or doubled", async () => {
    const hostsGoneBefore = hostsGone(await chain().hostLog())
    await page.evaluate(({ sessionId, text }) => window.e2e.startTurn(sessionId, text), {
      sessionId,
      text: script("delta one ", "sleep 2500", "delta two", 'call echo {"text":"after the restart"}', "say end")
    })
    await page.waitForFunction(
      (sessionId) =>
        (window.e2e.records.get(sessionId) ?? []).some((seen) => seen.kind === "delta" && seen.text === "one "),
      sessionId,
      { timeout: 15_000 }
    )
    await stopServiceWorkers(chain().context, page)
    const { outcome, seen } = await page.evaluate(async (sessionId) => {
      const session = window.e2e.session(sessionId)
      const off = session.onTool<{ readonly text: string }>("echo", ({ text }) => ({ echoed: text }))
      const outcome = await window.e2e.turn(sessionId)
      off()
      return { outcome, seen: window.e2e.records.get(sessionId) ?? [] }
    }, sessionId)
    if (!("result" in outcome)) throw new Error(`the turn failed: ${JSON.stringify(outcome.failure)}`)
    const { turnId } = outcome.result
    expect(outcome.result).toMatchObject({ reason: "completed", text: "end" })
    const turn = seen.filter((item) => item.turnId === turnId)
    const chats = turn.filter((item) => item.kind === "chat").map((item) => item.text)
    const [echo] = cliLines(chats, "echo")
    expect(echo).toMatchObject({ exit: 0, output: { ok: true, result: { echoed: "after the restart" } } })
    // `sleep` and `call` end the agent's streamed message, so each delta here is a whole message.
    expect(chats).toEqual(["one ", "two", expect.stringMatching(/^tool echo exit 0: /), "end"])
    expect(turn.filter((item) => item.kind === "delta").map((item) => item.text)).toEqual(chats)
    expect(turn.filter((item) => item.kind === "turn")).toHaveLength(1)
    // Every Core event of the session, across the restart: strictly increasing seqs, none twice.
    const seqs = seen.filter((item) => item.source === "core").map((item) => item.seq)
    expect(seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!)).toBe(true)
    // The stop really dropped the worker: its native port closed, so the host it had started saw stdin end.
    expect(hostsGone(await chain().hostLog())).toBeGreaterThan(hostsGoneBefore)
  })

  test("a second tab observes the session (resume without claiming tools) and sees the same turnIds", async () => {
    const observer = await chain().openPage(chain().origins.http)
    await observer.evaluate(
      async ({ extensionId, sessionId }) => {
        const session = await window.e2e.client(extensionId).resumeSession(sessionId)
        window.e2e.keep(session)
        // Never called: tool calls go to the tab that claimed the tools.
        session.onTool("echo", () => {
          throw new Error("the observing tab got a tool call")
        })
      },
      { extensionId: chain().extensionId, sessionId }
    )
    const result = await page.evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        const off = session.onTool<{ readonly text: string }>("echo", ({ text }) => ({ echoed: text }))
        const result = await session.sendText(text)
        off()
        return result
      },
      { sessionId, text: script('call echo {"text":"seen by both"}', "say both tabs") }
    )
    const observed = await waitUntil(
      "the observer's turn completion",
      () =>
        observer.evaluate(
          ({ sessionId, turnId }) => (window.e2e.records.get(sessionId) ?? []).filter((seen) => seen.turnId === turnId),
          { sessionId, turnId: result.turnId }
        ),
      (seen) => seen.some((item) => item.kind === "turn")
    )
    const owner = await chatsOf(page, sessionId, result.turnId)
    expect(observed.filter((item) => item.kind === "chat").map((item) => item.text)).toEqual(owner)
    expect(cliLines(owner, "echo")).toMatchObject([
      { exit: 0, output: { ok: true, result: { echoed: "seen by both" } } }
    ])
    await observer.close()
  })

  test("a second tab that resumes with claimTools takes the tools over: the first tab's running handler is aborted, only the new claimant runs the call", async () => {
    // The first tab holds the call: its handler waits until its signal aborts, and says why.
    await page.evaluate((sessionId) => {
      const session = window.e2e.session(sessionId)
      const seen: Array<string> = []
      ;(window as unknown as { firstTab: Array<string> }).firstTab = seen
      session.onTool("wait", (_args, ctx) => {
        seen.push("ran")
        return new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            seen.push(`aborted: ${String((ctx.signal.reason as { code?: string })?.code)}`)
            resolve({ aborted: true })
          })
        })
      })
    }, sessionId)
    const text = script("call wait {}", "say the new tab answered")
    await page.evaluate(({ sessionId, text }) => window.e2e.startTurn(sessionId, text), { sessionId, text })
    await waitUntil(
      "the first tab's handler to run",
      () => page.evaluate(() => (window as unknown as { firstTab: Array<string> }).firstTab.length),
      (n) => n === 1
    )
    const claimant = await chain().openPage(chain().origins.http)
    await claimant.evaluate(
      async ({ extensionId, sessionId }) => {
        const runs: Array<string> = []
        ;(window as unknown as { runs: Array<string> }).runs = runs
        const session = await window.e2e.client(extensionId).resumeSession(sessionId, { claimTools: true })
        window.e2e.keep(session)
        session.onTool("wait", (_args, ctx) => {
          runs.push(ctx.toolCallId)
          return { answeredBy: "the new tab" }
        })
      },
      { extensionId: chain().extensionId, sessionId }
    )
    const outcome = await page.evaluate((sessionId) => window.e2e.turn(sessionId), sessionId)
    expect(outcome).toMatchObject({ result: { reason: "completed" } })
    const first = await page.evaluate(() => (window as unknown as { firstTab: Array<string> }).firstTab)
    expect(first[0]).toBe("ran")
    expect(first[1]).toMatch(/^aborted/)
    const runs = await claimant.evaluate(() => (window as unknown as { runs: Array<string> }).runs)
    expect(runs).toHaveLength(1)
    const chats = await chatsOf(page, sessionId, (outcome as { result: { turnId: string } }).result.turnId)
    expect(cliLines(chats, "wait")).toMatchObject([
      { exit: 0, output: { ok: true, result: { answeredBy: "the new tab" } } }
    ])
    await claimant.close()
  })
})

const MIB = 1024 * 1024

/** How many native host processes have logged their exit (each SW port to the host is one process). */
const hostsGone = (log: string) => log.split("\n").filter((line) => line.includes("stdin closed; exiting")).length
