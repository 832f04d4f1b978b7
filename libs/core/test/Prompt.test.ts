import { assert, describe, it } from "@effect/vitest"
import type { SessionId } from "@pedelec/contracts/Ids"
import { freshSessionPrompt } from "../src/Prompt.ts"

const sessionId = "AAAAAAAAAAAAAAAAAAAAAA" as SessionId
const tools = [
  {
    name: "shapes.add",
    description: "Adds a shape to the canvas.",
    timeoutMs: 90_000,
    annotations: { destructive: true }
  },
  {
    name: "count",
    description: "Reads the counter.",
    timeoutMs: 60_000,
    annotations: { readOnly: true, title: "Counter" }
  }
]

describe("freshSessionPrompt", () => {
  const prompt = freshSessionPrompt(
    { sessionId, guidance: "Keep the canvas tidy.", tools, denoAvailable: false, toolsAsFunctions: false },
    "Draw."
  )

  it("orders rules, guidance verbatim, the tool index, then the user's text", () => {
    const order = [
      "# Pedelec runtime rules",
      "# Guidance from the page\nKeep the canvas tidy.",
      "# Page tools",
      "# User\nDraw."
    ]
    const positions = order.map((part) => prompt.indexOf(part))
    assert.isFalse(positions.includes(-1), prompt)
    assert.deepStrictEqual(
      [...positions].sort((a, b) => a - b),
      positions
    )
  })

  it("gives each tool its exact spec and call commands, timeout and annotations, but no argument schema", () => {
    assert.include(prompt, `pedelec-cli --thread-id ${sessionId} tool-spec shapes.add`)
    assert.include(prompt, `pedelec-cli --thread-id ${sessionId} tool-call shapes.add '{…json args…}'`)
    assert.include(prompt, "shapes.add [destructive]: Adds a shape to the canvas.")
    assert.include(prompt, "count (Counter) [read-only]: Reads the counter.")
    assert.include(prompt, "timeout: 90 s")
    assert.notInclude(prompt, "argsSchema")
  })

  it("mentions pedelec-deno only when it is available, and then forbids falling back", () => {
    assert.notInclude(prompt, "pedelec-deno")
    const withDeno = freshSessionPrompt(
      { sessionId, guidance: undefined, tools: [], denoAvailable: true, toolsAsFunctions: false },
      "Run it."
    )
    assert.include(withDeno, `pedelec-deno --thread-id ${sessionId} run`)
    assert.include(withDeno, "never fall back to node, bun or another deno")
    assert.notInclude(withDeno, "# Guidance from the page")
    assert.notInclude(withDeno, "# Page tools")
  })

  it("for an agent given the tools as functions: no shell commands and no tool index, the guidance kept", () => {
    const functions = freshSessionPrompt(
      { sessionId, guidance: "Keep the canvas tidy.", tools, denoAvailable: false, toolsAsFunctions: true },
      "Draw a square."
    )
    assert.notInclude(functions, "pedelec-cli")
    assert.notInclude(functions, "# Page tools")
    assert.include(functions, "offered to you as functions")
    assert.include(functions, "pedelec_read_file")
    assert.include(functions, "Keep the canvas tidy.")
    assert.isTrue(functions.endsWith("# User\nDraw a square."))
  })

  it("for a CLI given the tools over MCP too: prefer the MCP tools, the shell command stays the fallback", () => {
    const context = { sessionId, guidance: undefined, tools, denoAvailable: false, toolsAsFunctions: false }
    const mcp = freshSessionPrompt({ ...context, toolsAsMcp: true }, "Draw a square.")
    assert.include(mcp, "mcp__pedelec__<name>")
    assert.include(mcp, "call the tool with the pedelec-cli command shown for it")
    // The command for each tool is still in the index, for the fallback.
    assert.include(mcp, "# Page tools")
    assert.notInclude(freshSessionPrompt(context, "Draw a square."), "mcp__pedelec")
  })
})
