/**
 * Script — what the model server answers, decided from one request alone. Each protocol file reads its request body
 * into a Conversation (the tools offered and the messages carried); `decide` turns that into an Answer, which the
 * protocol file then writes in its own wire format. Nothing is kept between requests, so a resumed conversation (a new
 * CLI process replaying the history) gets the same answers as the first run did.
 *
 * The rules, first match wins:
 *  1. Gemini JSON mode (`responseMimeType: "application/json"`, gemini-cli's router and next-speaker side calls):
 *     a value made from the request's schema. Left unanswered, gemini-cli retries for 97 s.
 *  2. The last turn carries tool results: the text `tool said: <content>` (several results joined by "\n").
 *  3. The request offers no tools (a side call, e.g. claude's or opencode's title generation): DEFAULT_TEXT.
 *  4. The last user text carries a directive, looked for in this order:
 *       FAIL_HTTP[<status>]END       a provider-shaped error response with that HTTP status (400–599)
 *       ECHO_AUTH[<status>]END       the same, its message quoting the request's Authorization header back, as a
 *                                    server that leaks the key it refused does (what Core must scrub)
 *       GARBAGE                      a malformed stream (or body): status 200, then bytes that are not the protocol
 *       TOOL[<name>]ARGS[<json>]END  a call to the offered tool <name> with these arguments
 *       RUN[<command>]END            a call to the offered shell tool (exec_command, shell_command, shell, Bash, bash,
 *                                    run_shell_command, in that order) with the argument shape its schema says
 *       RECALL                       the text of every earlier user message of the conversation, joined by "\n"
 *       TEXT[<text>]END              this text, streamed as a few deltas
 *     `<…>` runs to the first `]END` (or `]ARGS[`), so it may contain brackets and newlines.
 *  5. Otherwise: DEFAULT_TEXT.
 * A directive that cannot be carried out (an unknown tool, ARGS that are not JSON, no shell tool) answers with a text
 * saying so, which the test then sees in the agent's reply.
 */

import { asArray, asObject, isObject, type JsonObject } from "./Json.ts"

export const DEFAULT_TEXT = "hello from the scripted model"

export interface OfferedTool {
  readonly name: string
  /** The tool's JSON Schema for its arguments; `{}` when the protocol gave none (e.g. codex's freeform tools). */
  readonly schema: JsonObject
}

export interface ToolCall {
  readonly name: string
  readonly args: unknown
}

/** One message of the history in the script's terms; tool results count as user turns, as Anthropic and Gemini say. */
export interface Message {
  readonly role: "system" | "user" | "assistant"
  /** The message's text parts joined by "\n"; "" when it has none. */
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  /** The content of each tool result the message carries, as text. */
  readonly toolResults: ReadonlyArray<string>
}

export interface Conversation {
  readonly tools: ReadonlyArray<OfferedTool>
  readonly messages: ReadonlyArray<Message>
  /** Set when the request asks for JSON output matching this schema (Gemini JSON mode). */
  readonly jsonSchema: JsonObject | undefined
}

export type Answer =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly name: string; readonly args: unknown }
  | { readonly _tag: "Fail"; readonly status: number; readonly echoAuth?: true }
  | { readonly _tag: "Garbage" }

/** The answers a protocol writes as a model reply; failures and garbage are written the same way for all. */
export type Reply = Extract<Answer, { readonly _tag: "Text" | "ToolCall" }>

export type Directive =
  | { readonly _tag: "FailHttp"; readonly status: number; readonly echoAuth?: true }
  | { readonly _tag: "Garbage" }
  | { readonly _tag: "Tool"; readonly name: string; readonly args: string }
  | { readonly _tag: "Run"; readonly command: string }
  | { readonly _tag: "Recall" }
  | { readonly _tag: "Text"; readonly text: string }

export const message = (
  role: Message["role"],
  text: string,
  parts: { readonly toolCalls?: ReadonlyArray<ToolCall>; readonly toolResults?: ReadonlyArray<string> } = {}
): Message => ({ role, text, toolCalls: parts.toolCalls ?? [], toolResults: parts.toolResults ?? [] })

/** The first directive of a user text, in the order of the header. */
export const parseDirective = (text: string): Directive | undefined => {
  const fail = /FAIL_HTTP\[(\d+)\]END/.exec(text)
  if (fail) return { _tag: "FailHttp", status: Number(fail[1]) }
  const echo = /ECHO_AUTH\[(\d+)\]END/.exec(text)
  if (echo) return { _tag: "FailHttp", status: Number(echo[1]), echoAuth: true }
  if (/\bGARBAGE\b/.test(text)) return { _tag: "Garbage" }
  const tool = /TOOL\[([\s\S]*?)\]ARGS\[([\s\S]*?)\]END/.exec(text)
  if (tool) return { _tag: "Tool", name: tool[1]!, args: tool[2]! }
  const run = /RUN\[([\s\S]*?)\]END/.exec(text)
  if (run) return { _tag: "Run", command: run[1]! }
  if (/\bRECALL\b/.test(text)) return { _tag: "Recall" }
  const say = /TEXT\[([\s\S]*?)\]END/.exec(text)
  if (say) return { _tag: "Text", text: say[1]! }
  return undefined
}

const text = (value: string): Answer => ({ _tag: "Text", text: value })

/** The shell tools of the four CLIs, in the order RUN looks for them. */
export const SHELL_TOOLS: ReadonlyArray<string> = [
  "exec_command", // codex
  "shell_command", // codex, other model families
  "shell", // codex, older
  "Bash", // claude
  "bash", // opencode
  "run_shell_command" // gemini
]

export const pickShellTool = (tools: ReadonlyArray<OfferedTool>): OfferedTool | undefined =>
  SHELL_TOOLS.map((name) => tools.find((tool) => tool.name === name)).find((tool) => tool !== undefined)

/**
 * The arguments of a shell call as the tool's schema wants them: the command under `cmd` (codex exec_command) or
 * `command`, as an argv array where the schema says array (codex shell), and every other required property filled.
 */
export const shellArgs = (tool: OfferedTool, command: string): JsonObject => {
  const properties = asObject(tool.schema.properties)
  const key = "cmd" in properties ? "cmd" : "command"
  const args: Record<string, unknown> = {
    [key]: typeOf(asObject(properties[key])) === "array" ? ["bash", "-c", command] : command
  }
  for (const name of asArray(tool.schema.required)) {
    if (typeof name !== "string" || name in args) continue
    args[name] = name === "description" ? "Runs the scripted command" : valueFromSchema(asObject(properties[name]))
  }
  return args
}

const typeOf = (schema: JsonObject): string => {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type
  // Gemini's OpenAPI-style schemas spell types in capitals ("OBJECT").
  return typeof type === "string" ? type.toLowerCase() : isObject(schema.properties) ? "object" : ""
}

/** Some value that satisfies a simple JSON Schema: the first enum value, else a placeholder per type. */
export const valueFromSchema = (schema: JsonObject): unknown => {
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if ("const" in schema) return schema.const
  const alternatives = asArray(schema.anyOf ?? schema.oneOf)
  if (alternatives.length > 0) return valueFromSchema(asObject(alternatives[0]))
  switch (typeOf(schema)) {
    case "string":
      return "scripted"
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : 1
    case "boolean":
      return false
    case "array":
      return []
    case "null":
      return null
    default:
      return Object.fromEntries(
        Object.entries(asObject(schema.properties)).map(([key, value]) => [key, valueFromSchema(asObject(value))])
      )
  }
}

const names = (tools: ReadonlyArray<OfferedTool>) => tools.map((tool) => tool.name).join(", ")

/** The tool results of the last turn: the trailing run of non-system messages that carry results. */
const lastToolResults = (turns: ReadonlyArray<Message>): ReadonlyArray<string> => {
  const results: Array<string> = []
  for (let i = turns.length - 1; i >= 0 && turns[i]!.toolResults.length > 0; i--) {
    results.unshift(...turns[i]!.toolResults)
  }
  return results
}

/** The user texts of the conversation, in order; tool-result-only messages have none. */
export const userTexts = (messages: ReadonlyArray<Message>): ReadonlyArray<string> =>
  messages.filter((m) => m.role === "user" && m.text !== "").map((m) => m.text)

export const decide = (conversation: Conversation): Answer => {
  if (conversation.jsonSchema) return text(JSON.stringify(valueFromSchema(conversation.jsonSchema)))
  // claude inserts role:"system" messages mid-conversation; they are never the turn to answer.
  const turns = conversation.messages.filter((m) => m.role !== "system")
  const results = lastToolResults(turns)
  if (results.length > 0) return text(`tool said: ${results.join("\n")}`)
  if (conversation.tools.length === 0) return text(DEFAULT_TEXT)
  const said = userTexts(turns)
  const directive = parseDirective(said.at(-1) ?? "")
  return directive ? carryOut(directive, conversation.tools, said.slice(0, -1)) : text(DEFAULT_TEXT)
}

const carryOut = (directive: Directive, tools: ReadonlyArray<OfferedTool>, earlier: ReadonlyArray<string>): Answer => {
  switch (directive._tag) {
    case "FailHttp":
      return directive.status >= 400 && directive.status <= 599
        ? { _tag: "Fail", status: directive.status, ...(directive.echoAuth ? { echoAuth: true } : {}) }
        : text(`FAIL_HTTP: ${directive.status} is not an HTTP error status (400–599)`)
    case "Garbage":
      return { _tag: "Garbage" }
    case "Tool": {
      if (!tools.some((tool) => tool.name === directive.name))
        return text(`TOOL: no tool named ${directive.name} is offered (offered: ${names(tools)})`)
      try {
        return { _tag: "ToolCall", name: directive.name, args: JSON.parse(directive.args) }
      } catch {
        return text(`TOOL: ARGS is not JSON: ${directive.args}`)
      }
    }
    case "Run": {
      const shell = pickShellTool(tools)
      return shell
        ? { _tag: "ToolCall", name: shell.name, args: shellArgs(shell, directive.command) }
        : text(`RUN: no shell tool is offered (offered: ${names(tools)})`)
    }
    case "Recall":
      return text(earlier.length > 0 ? earlier.join("\n") : "RECALL: no earlier user text")
    case "Text":
      return text(directive.text)
  }
}
