// Compile-time checks, run by `npm run typecheck` (tsconfig.test.json): each `@ts-expect-error` line must fail to
// compile, or tsc reports the directive as unused and the check fails.
import { defineTool, Pedelec } from "../src/index.ts"

const counter = defineTool({
  name: "counter.get",
  description: "Reads the counter",
  argsSchema: { type: "object", properties: {} }
})
const shape = defineTool<"shape.add", { readonly color: string }>({
  name: "shape.add",
  description: "Adds a shape",
  argsSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
  handler: (args) => args.color.length
})

export const checks = async () => {
  const session = await new Pedelec().createSession({ skills: { guidance: "", tools: [counter, shape] } })
  session.onTool("counter.get", () => 1)
  session.onTool<{ readonly color: string }>("shape.add", (args, ctx) => `${args.color} ${ctx.toolCallId}`)
  // @ts-expect-error: not one of the session's tools
  session.onTool("typo", () => 1)
  session.onTool((tool) => {
    // @ts-expect-error: the generic handler's tool is the union of the session's names
    const other: "typo" = tool
    return other
  })
  const resumed = await new Pedelec().resumeSession("id")
  resumed.onTool("anything", () => 1)
  // @ts-expect-error: argsSchema is the documented subset
  defineTool({ name: "bad", description: "d", argsSchema: { type: "string" } })
  // @ts-expect-error: effort levels are typed
  await new Pedelec().createSession({ effortLevel: "extreme" })
}
