/**
 * Tools — the demo page's tools, as the agent sees them (name, description, argument schema, annotations) with
 * their handlers inline: each one reads or changes PageState and returns plain JSON. Business rules the schema
 * cannot state (a colour the canvas understands, an item that exists) are checked here and thrown as errors with a
 * `code`, which the agent receives as TOOL_HANDLER_ERROR with that `appCode`.
 */
import { defineTool } from "@pedelec/sdk"
import type { PageState, Shape } from "./PageState.ts"

const NO_ARGS = { type: "object", properties: {}, additionalProperties: false } as const

class DemoRuleError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

const checkColor = (color: string): string => {
  // The canvas silently ignores a colour it cannot parse; the agent should hear about it instead.
  if (!CSS.supports("color", color))
    throw new DemoRuleError("BAD_COLOR", `${JSON.stringify(color)} is not a CSS colour`)
  return color
}

export const demoTools = (state: PageState) => [
  defineTool({
    name: "counter.get",
    description: "Reads the counter shown on the page.",
    argsSchema: NO_ARGS,
    annotations: { readOnly: true },
    handler: () => ({ value: state.counter })
  }),
  defineTool<"counter.increment", { readonly by?: number }>({
    name: "counter.increment",
    description: "Adds `by` (default 1, may be negative) to the counter and returns the new value.",
    argsSchema: {
      type: "object",
      properties: { by: { type: "integer", minimum: -1000, maximum: 1000, default: 1 } },
      additionalProperties: false
    },
    handler: ({ by }) => ({ value: state.increment(by ?? 1) })
  }),
  defineTool<"counter.set", { readonly value: number }>({
    name: "counter.set",
    description: "Sets the counter to a value.",
    argsSchema: {
      type: "object",
      properties: { value: { type: "integer", minimum: -1_000_000, maximum: 1_000_000 } },
      required: ["value"],
      additionalProperties: false
    },
    annotations: { idempotent: true },
    handler: ({ value }) => ({ value: state.setCounter(value) })
  }),
  defineTool({
    name: "list.items",
    description: "Lists the items of the page's list, in order.",
    argsSchema: NO_ARGS,
    annotations: { readOnly: true },
    handler: () => ({ items: state.listItems() })
  }),
  defineTool<"list.add", { readonly item: string }>({
    name: "list.add",
    description: "Appends an item to the page's list and returns the whole list.",
    argsSchema: {
      type: "object",
      properties: { item: { type: "string", minLength: 1, maxLength: 200 } },
      required: ["item"],
      additionalProperties: false
    },
    handler: ({ item }) => ({ items: state.addItem(item) })
  }),
  defineTool<"list.remove", { readonly item: string }>({
    name: "list.remove",
    description: "Removes the first item equal to `item` from the page's list.",
    argsSchema: {
      type: "object",
      properties: { item: { type: "string", minLength: 1, maxLength: 200 } },
      required: ["item"],
      additionalProperties: false
    },
    annotations: { destructive: true },
    handler: ({ item }) => {
      if (!state.removeItem(item)) throw new DemoRuleError("NO_SUCH_ITEM", `the list has no ${JSON.stringify(item)}`)
      return { items: state.listItems() }
    }
  }),
  defineTool<"shapes.add", Shape>({
    name: "shapes.add",
    description: "Draws a circle (size = radius) or a square (size = side) on the canvas; x and y are pixels.",
    argsSchema: {
      type: "object",
      properties: {
        kind: { type: "string", enum: ["circle", "rect"] },
        x: { type: "number", minimum: 0, maximum: 2000 },
        y: { type: "number", minimum: 0, maximum: 2000 },
        size: { type: "number", minimum: 1, maximum: 1000 },
        color: { type: "string", minLength: 1, maxLength: 64, examples: ["tomato", "#3366ff"] }
      },
      required: ["kind", "x", "y", "size", "color"],
      additionalProperties: false
    },
    handler: (shape) => ({ shapes: state.addShape({ ...shape, color: checkColor(shape.color) }) })
  }),
  defineTool({
    name: "shapes.list",
    description: "Lists the shapes on the canvas and the canvas size.",
    argsSchema: NO_ARGS,
    annotations: { readOnly: true },
    handler: () => ({ canvas: state.canvasSize, shapes: state.listShapes() })
  }),
  defineTool({
    name: "shapes.clear",
    description: "Removes every shape from the canvas; returns how many there were.",
    argsSchema: NO_ARGS,
    annotations: { destructive: true },
    handler: () => ({ removed: state.clearShapes() })
  })
]

export const GUIDANCE = [
  "You are working with the Pedelec demo page: a counter, a list and a canvas the user sees.",
  "Use its tools to read or change them, and say briefly what you did."
].join(" ")
