// createSession({ webmcp: true }) in real Chromium 156 (issue 16.6). This Chromium has WebMCP behind
// `--enable-features=WebMCP` (measured: `document.modelContext` with registerTool/getTools/executeTool), so the real
// registration is tested there: the session's tools appear to the browser's agent with their hints, a call runs the
// page's handler without Core, and the session's end unregisters them. Without the flag the API is missing, and the
// same page creates and ends its session with nothing registered and nothing thrown.

import { approving } from "@pedelec/chain/Browser"
import type { Chain } from "@pedelec/chain/Chain"
import { chainForFile } from "@pedelec/chain/Harness"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"

const SKILLS = {
  guidance: "WebMCP probe.",
  tools: [
    {
      name: "add",
      description: "Adds two numbers.",
      argsSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false
      },
      annotations: { readOnly: true, title: "Add" }
    },
    {
      name: "wipe",
      description: "Wipes everything.",
      argsSchema: { type: "object" },
      annotations: { destructive: true }
    }
  ]
} as const

/** Creates a `webmcp: true` session on a fresh tab of the http origin (approving it), with a handler for `add`. */
const openWebMcpSession = async (chain: Chain): Promise<{ page: Page; sessionId: string }> => {
  const page = await chain.openPage(chain.origins.http)
  const { value: sessionId } = await approving(chain.context, chain.extensionId, () =>
    page.evaluate(
      async ({ extensionId, skills }) => {
        const session = await window.e2e.client(extensionId).createSession({ skills, webmcp: true })
        window.e2e.keep(session)
        session.onTool("add", (args) => (args.a as number) + (args.b as number))
        return session.sessionId
      },
      { extensionId: chain.extensionId, skills: SKILLS }
    )
  )
  return { page, sessionId }
}

type Listed = ReadonlyArray<{ readonly name: string; readonly title: unknown; readonly annotations: unknown }>

/** What the browser's agent would see: the page's registered tools, by the API itself. */
const listed = (page: Page) =>
  page.evaluate(async () => {
    const context = (document as unknown as { modelContext: { getTools(): Promise<Listed> } }).modelContext
    return (await context.getTools()).map(({ name, title, annotations }) => ({ name, title, annotations }))
  })

describe("WebMCP where Chromium has it (--enable-features=WebMCP)", () => {
  const chain = chainForFile({ extraFlags: ["--enable-features=WebMCP"] })

  it("registers the session's tools with their hints, runs calls in the page, and unregisters at the end", async () => {
    const { page, sessionId } = await openWebMcpSession(chain())
    const tools = await listed(page)
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "wipe"])
    // A browser's WebMCP keeps the hints it knows and drops the rest: consequentialHint came after readOnlyHint
    // (Debian's Chromium 150 lists readOnlyHint and untrustedContentHint only), so it is asserted where it is kept.
    const keepsConsequential = tools.some((tool) => Object.hasOwn(tool.annotations as object, "consequentialHint"))
    const hints = (readOnlyHint: boolean, consequentialHint: boolean) =>
      keepsConsequential ? { readOnlyHint, consequentialHint } : { readOnlyHint }
    expect(tools.find((tool) => tool.name === "add")).toMatchObject({ title: "Add", annotations: hints(true, false) })
    expect(tools.find((tool) => tool.name === "wipe")?.annotations).toMatchObject(hints(false, true))
    const answers = await page.evaluate(async () => {
      const context = (
        document as unknown as {
          modelContext: {
            getTools(): Promise<ReadonlyArray<{ name: string }>>
            executeTool(tool: unknown, input: object | string): Promise<string | null>
          }
        }
      ).modelContext
      // Chromium 150's executeTool takes the input as JSON text ("Failed to parse input arguments" for an object),
      // later ones take the object.
      const execute = (tool: unknown, input: object) =>
        context
          .executeTool(tool, input)
          .catch((error: unknown) =>
            String(error).includes("parse input")
              ? context.executeTool(tool, JSON.stringify(input))
              : Promise.reject(error)
          )
      const all = await context.getTools()
      const add = all.find((tool) => tool.name === "add")
      const wipe = all.find((tool) => tool.name === "wipe")
      const sum = await execute(add, { a: 2, b: 3 })
      // `wipe` has no handler on this page: the call rejects (WebMCP's errors are undifferentiated).
      const refused = await execute(wipe, {}).then(
        () => "resolved",
        (error: unknown) => String(error)
      )
      return { sum, refused }
    })
    expect(answers.sum).toBe("5")
    expect(answers.refused).not.toBe("resolved")
    await page.evaluate((id) => window.e2e.session(id).end(), sessionId)
    await expect.poll(() => listed(page), { timeout: 5_000 }).toEqual([])
    await page.close()
  })
})

describe("WebMCP where Chromium lacks it (no flag)", () => {
  const chain = chainForFile()

  it("creates and ends the session as without the option: nothing registered, nothing thrown", async () => {
    const { page, sessionId } = await openWebMcpSession(chain())
    const state = await page.evaluate(async (id) => {
      const missing = typeof (document as unknown as { modelContext?: unknown }).modelContext === "undefined"
      const status = window.e2e.session(id).getStatus()
      await window.e2e.session(id).end()
      return { missing, status, after: window.e2e.session(id).getStatus() }
    }, sessionId)
    expect(state).toEqual({ missing: true, status: "idle", after: "ended" })
    await page.close()
  })
})
