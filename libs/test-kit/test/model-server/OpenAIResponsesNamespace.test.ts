/**
 * OpenAIResponses and codex 0.171.0's MCP tools: a server's tools come as one `type: "namespace"` tool, the script
 * names each `<namespace>__<name>`, a call to one is a function_call naming the inner tool with its namespace, and
 * that call read back from the history (with its output) is the qualified tool again.
 */
import { assert, describe, it } from "@effect/vitest"
import { CODEX_TOOLS, codexRequest, codexUser } from "./shapes.ts"
import { call, json, useModelServer } from "./support.ts"

const server = useModelServer()

const PEDELEC_NAMESPACE = {
  type: "namespace",
  name: "mcp__pedelec",
  description: "The tools of the web page",
  tools: [
    {
      type: "function",
      name: "page_title",
      description: "Returns the title of a tab.",
      strict: false,
      parameters: { type: "object", properties: { tab: { type: "integer" } }, required: ["tab"] }
    }
  ]
}
const TOOLS = [...CODEX_TOOLS, PEDELEC_NAMESPACE]

const answer = async (input: ReadonlyArray<unknown>) => {
  const reply = await call(server(), "/v1/responses", { ...codexRequest(input, TOOLS), stream: false })
  assert.strictEqual(reply.status, 200)
  return json(reply).output[0]
}

describe("Responses API namespaces (codex's MCP tools)", () => {
  it("TOOL[mcp__pedelec__page_title] is a function_call to page_title in namespace mcp__pedelec", async () => {
    const item = await answer([codexUser('TOOL[mcp__pedelec__page_title]ARGS[{"tab":1}]END')])
    assert.strictEqual(item.type, "function_call")
    assert.deepStrictEqual(
      [item.namespace, item.name, JSON.parse(item.arguments)],
      ["mcp__pedelec", "page_title", { tab: 1 }]
    )
  })

  it("the inner name alone is not offered, and the qualified names are listed", async () => {
    const item = await answer([codexUser('TOOL[page_title]ARGS[{"tab":1}]END')])
    assert.strictEqual(item.type, "message")
    assert.include(item.content[0].text, "mcp__pedelec__page_title")
  })

  it("the namespaced call and its output in the history: the next answer says what the tool said", async () => {
    const call = {
      type: "function_call",
      namespace: "mcp__pedelec",
      name: "page_title",
      arguments: '{"tab":1}',
      call_id: "c1"
    }
    const output = { type: "function_call_output", call_id: "c1", output: "Example Page" }
    const item = await answer([codexUser('TOOL[mcp__pedelec__page_title]ARGS[{"tab":1}]END'), call, output])
    assert.strictEqual(item.content[0].text, "tool said: Example Page")
    const logged = server()
      .requests()
      .at(-1)
      ?.conversation?.messages.flatMap((m) => m.toolCalls)
    assert.deepStrictEqual(logged, [{ name: "mcp__pedelec__page_title", args: { tab: 1 } }])
  })
})
