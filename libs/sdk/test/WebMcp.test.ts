// createSession({ webmcp: true }) against a fake `document.modelContext` shaped as the WebMCP draft (registerTool(tool,
// { signal }) → Promise; execute(input, { signal })): what is registered, the hints mapped, calls run the page's own
// handlers with the caller's signal, the registrations end with the session, and nothing happens without the API.
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { defineTool, Pedelec } from "../src/index.ts"
import { events, FakeExtension, resetSeq, SESSION_ID, sessionInfo, tick, uninstall } from "./FakeExtension.ts"

interface Registered {
  readonly tool: {
    readonly name: string
    readonly title?: string
    readonly description: string
    readonly inputSchema: object
    readonly annotations: { readonly readOnlyHint: boolean; readonly consequentialHint: boolean }
    readonly execute: (input: object, options?: { readonly signal?: AbortSignal }) => Promise<unknown>
  }
  readonly signal: AbortSignal
}

/** The draft's ModelContext, recording registrations; a duplicate name rejects, as the draft's does. */
class FakeModelContext {
  readonly registered: Array<Registered> = []
  registerTool(tool: Registered["tool"], options: { readonly signal: AbortSignal }): Promise<void> {
    if (this.registered.some((r) => r.tool.name === tool.name && !r.signal.aborted)) {
      return Promise.reject(new DOMException("duplicate", "InvalidStateError"))
    }
    this.registered.push({ tool, signal: options.signal })
    return Promise.resolve()
  }
  byName(name: string): Registered {
    const found = this.registered.find((r) => r.tool.name === name)
    if (found === undefined) throw new Error(`${name} was not registered`)
    return found
  }
}

const scope = globalThis as { document?: unknown }
let chrome: FakeExtension
let modelContext: FakeModelContext
beforeEach(() => {
  chrome = new FakeExtension().install()
  resetSeq()
  modelContext = new FakeModelContext()
  scope.document = { modelContext }
})
afterEach(() => {
  uninstall()
  delete scope.document
})

const tools = [
  defineTool({
    name: "wipe",
    description: "Wipes the canvas.",
    argsSchema: { type: "object", properties: { layer: { type: "string" } } },
    annotations: { destructive: true, title: "Wipe" }
  }),
  defineTool({
    name: "count",
    description: "Counts shapes.",
    argsSchema: { type: "object" },
    annotations: { readOnly: true },
    handler: () => 3
  }),
  defineTool({
    name: "confirm",
    description: "Asks first.",
    argsSchema: { type: "object" },
    annotations: { requiresConfirmation: true }
  })
] as const

const create = (webmcp: boolean) => new Pedelec().createSession({ skills: { guidance: "", tools }, webmcp })

describe("WebMCP opt-in", () => {
  it("registers each tool with its schema, readOnly as readOnlyHint and destructive as consequentialHint", async () => {
    await create(true)
    expect(modelContext.registered.map((r) => r.tool.name)).toEqual(["wipe", "count", "confirm"])
    const wipe = modelContext.byName("wipe").tool
    expect(wipe).toMatchObject({
      title: "Wipe",
      description: "Wipes the canvas.",
      inputSchema: { type: "object", properties: { layer: { type: "string" } } },
      annotations: { readOnlyHint: false, consequentialHint: true }
    })
    expect(modelContext.byName("count").tool.annotations).toEqual({ readOnlyHint: true, consequentialHint: false })
    expect(modelContext.byName("confirm").tool.annotations).toEqual({ readOnlyHint: false, consequentialHint: true })
    // What travelled to Core did not carry the option.
    expect(chrome.requests("session.create")[0]!.params).not.toHaveProperty("input.webmcp")
  })

  it("runs the page's handlers here, ctx.signal the caller's, and never asks Core", async () => {
    const session = await create(true)
    let seen: { args: unknown; signal: AbortSignal; tool: string } | undefined
    session.onTool("wipe", (args, ctx) => {
      seen = { args, signal: ctx.signal, tool: ctx.tool }
      return { wiped: args.layer }
    })
    const caller = new AbortController()
    const result = await modelContext.byName("wipe").tool.execute({ layer: "sky" }, { signal: caller.signal })
    expect(result).toEqual({ wiped: "sky" })
    expect(seen?.args).toEqual({ layer: "sky" })
    expect(seen?.tool).toBe("wipe")
    expect(seen?.signal).toBe(caller.signal)
    expect(await modelContext.byName("count").tool.execute({})).toBe(3)
    expect(chrome.requests("tool.submit_result")).toHaveLength(0)
  })

  it("rejects with the handler's failure, and with TOOL_HANDLER_NOT_FOUND where there is no handler", async () => {
    const session = await create(true)
    session.onTool("wipe", () => {
      throw new Error("the canvas is locked")
    })
    await expect(modelContext.byName("wipe").tool.execute({})).rejects.toThrow("the canvas is locked")
    await expect(modelContext.byName("confirm").tool.execute({})).rejects.toThrow("no handler for confirm")
  })

  it("unregisters every tool when the session ends (the registration signal aborts)", async () => {
    await create(true)
    const signals = modelContext.registered.map((r) => r.signal)
    expect(signals.some((signal) => signal.aborted)).toBe(false)
    chrome.port.event(events.ended())
    await tick()
    expect(signals.every((signal) => signal.aborted)).toBe(true)
    // A new session may register the same names again.
    chrome.on("session.create", () => ({ result: sessionInfo({ sessionId: "t".repeat(22) }) }))
    await create(true)
    expect(modelContext.registered).toHaveLength(6)
  })

  it("registers nothing unless asked, and throws nothing where the browser has no modelContext", async () => {
    await create(false)
    expect(modelContext.registered).toHaveLength(0)
    scope.document = {}
    await expect(create(true)).resolves.toMatchObject({ sessionId: SESSION_ID })
    delete scope.document
    await expect(create(true)).resolves.toMatchObject({ sessionId: SESSION_ID })
    // A browser that refuses synchronously is no different.
    scope.document = {
      modelContext: {
        registerTool: () => {
          throw new TypeError("unsupported")
        }
      }
    }
    await expect(create(true)).resolves.toMatchObject({ sessionId: SESSION_ID })
  })
})
