/** Script: the directive syntax and the decision rules, on Conversations built by hand. */
import { assert, describe, it } from "@effect/vitest"
import {
  type Conversation,
  DEFAULT_TEXT,
  decide,
  type Message,
  message,
  type OfferedTool,
  parseDirective,
  shellArgs,
  valueFromSchema
} from "../../src/model-server/Script.ts"
import { deltas } from "../../src/model-server/Wire.ts"

const tool = (name: string, schema: Record<string, unknown> = {}): OfferedTool => ({ name, schema })
const BASH = tool("Bash", { type: "object", properties: { command: { type: "string" } }, required: ["command"] })

const conversation = (
  messages: ReadonlyArray<Message>,
  tools: ReadonlyArray<OfferedTool> = [BASH],
  jsonSchema?: Record<string, unknown>
): Conversation => ({ tools, messages, jsonSchema })

const saying = (text: string, tools?: ReadonlyArray<OfferedTool>) =>
  decide(conversation([message("user", text)], tools))

describe("parseDirective", () => {
  it("reads each directive", () => {
    assert.deepStrictEqual(parseDirective("please TEXT[hello there]END thanks"), { _tag: "Text", text: "hello there" })
    assert.deepStrictEqual(parseDirective('TOOL[page_title]ARGS[{"tab":1}]END'), {
      _tag: "Tool",
      name: "page_title",
      args: '{"tab":1}'
    })
    assert.deepStrictEqual(parseDirective("RUN[echo PEDELEC_OK]END"), { _tag: "Run", command: "echo PEDELEC_OK" })
    assert.deepStrictEqual(parseDirective("FAIL_HTTP[429]END"), { _tag: "FailHttp", status: 429 })
    assert.deepStrictEqual(parseDirective("RECALL please"), { _tag: "Recall" })
    assert.deepStrictEqual(parseDirective("now GARBAGE"), { _tag: "Garbage" })
    assert.isUndefined(parseDirective("just a prompt, RECALLED GARBAGEMAN TEXT[no end"))
  })

  it("lets a payload hold brackets, quotes and newlines, up to the first ]END", () => {
    assert.deepStrictEqual(parseDirective('TOOL[t]ARGS[{"a":[1,[2]],"b":"]"}]END'), {
      _tag: "Tool",
      name: "t",
      args: '{"a":[1,[2]],"b":"]"}'
    })
    assert.deepStrictEqual(parseDirective("TEXT[line one\nline [two]]END and TEXT[later]END"), {
      _tag: "Text",
      text: "line one\nline [two]"
    })
    assert.deepStrictEqual(parseDirective("RUN[pedelec-cli tool-call t '{\"x\":[1]}']END"), {
      _tag: "Run",
      command: "pedelec-cli tool-call t '{\"x\":[1]}'"
    })
  })

  it("takes the directives in a fixed order, not the order of the text", () => {
    assert.deepStrictEqual(parseDirective("TEXT[x]END FAIL_HTTP[500]END"), { _tag: "FailHttp", status: 500 })
    assert.deepStrictEqual(parseDirective("TEXT[x]END GARBAGE"), { _tag: "Garbage" })
    assert.deepStrictEqual(parseDirective("RECALL RUN[ls]END"), { _tag: "Run", command: "ls" })
    assert.deepStrictEqual(parseDirective("TEXT[x]END RECALL"), { _tag: "Recall" })
  })
})

describe("decide", () => {
  it("answers TEXT, FAIL_HTTP and GARBAGE as asked", () => {
    assert.deepStrictEqual(saying("TEXT[hi]END"), { _tag: "Text", text: "hi" })
    assert.deepStrictEqual(saying("FAIL_HTTP[403]END"), { _tag: "Fail", status: 403 })
    assert.deepStrictEqual(saying("GARBAGE"), { _tag: "Garbage" })
    assert.deepStrictEqual(saying("no directive"), { _tag: "Text", text: DEFAULT_TEXT })
  })

  it("says so instead of failing an HTTP status that is no error", () => {
    const answer = saying("FAIL_HTTP[200]END")
    assert.strictEqual(answer._tag, "Text")
    assert.include(answer._tag === "Text" ? answer.text : "", "200 is not an HTTP error status")
  })

  it("calls an offered tool with the ARGS, and explains an unknown tool or ARGS that are not JSON", () => {
    const tools = [BASH, tool("page_title")]
    assert.deepStrictEqual(saying('TOOL[page_title]ARGS[{"tab":1}]END', tools), {
      _tag: "ToolCall",
      name: "page_title",
      args: { tab: 1 }
    })
    assert.deepStrictEqual(saying("TOOL[nope]ARGS[{}]END", tools), {
      _tag: "Text",
      text: "TOOL: no tool named nope is offered (offered: Bash, page_title)"
    })
    assert.deepStrictEqual(saying("TOOL[page_title]ARGS[{tab:1}]END", tools), {
      _tag: "Text",
      text: "TOOL: ARGS is not JSON: {tab:1}"
    })
  })

  it("RUN picks the shell tool in SHELL_TOOLS order and says so when there is none", () => {
    const both = [tool("shell", { properties: { command: { type: "array" } } }), tool("exec_command")]
    assert.deepStrictEqual(saying("RUN[ls]END", both), {
      _tag: "ToolCall",
      name: "exec_command",
      args: { command: "ls" }
    })
    assert.deepStrictEqual(saying("RUN[ls]END", [tool("read")]), {
      _tag: "Text",
      text: "RUN: no shell tool is offered (offered: read)"
    })
  })

  it("answers a tool result in the last turn with its content, whatever the prompt said", () => {
    const answer = decide(
      conversation([
        message("user", "FAIL_HTTP[500]END"),
        message("assistant", "", { toolCalls: [{ name: "Bash", args: { command: "ls" } }] }),
        message("user", "", { toolResults: ["PEDELEC_OK"] }),
        message("system", "a reminder claude inserts mid-conversation")
      ])
    )
    assert.deepStrictEqual(answer, { _tag: "Text", text: "tool said: PEDELEC_OK" })
  })

  it("joins the results of parallel calls in order", () => {
    const results = [message("user", "", { toolResults: ["one"] }), message("user", "", { toolResults: ["two"] })]
    assert.deepStrictEqual(decide(conversation([message("user", "go"), ...results])), {
      _tag: "Text",
      text: "tool said: one\ntwo"
    })
  })

  it("RECALL answers every earlier user text, and ignores assistant and system messages", () => {
    const history = [
      message("system", "system prompt"),
      message("user", "first prompt"),
      message("assistant", "an answer"),
      message("user", "", { toolResults: ["a result"] }),
      message("user", "second prompt"),
      message("user", "RECALL")
    ]
    assert.deepStrictEqual(decide(conversation(history)), { _tag: "Text", text: "first prompt\nsecond prompt" })
    assert.deepStrictEqual(saying("RECALL"), { _tag: "Text", text: "RECALL: no earlier user text" })
  })

  it("gives a side call without tools the default text, directive or not", () => {
    assert.deepStrictEqual(saying("FAIL_HTTP[500]END", []), { _tag: "Text", text: DEFAULT_TEXT })
    assert.deepStrictEqual(saying("TEXT[x]END", []), { _tag: "Text", text: DEFAULT_TEXT })
  })

  it("answers a JSON-mode request with a value of its schema before anything else", () => {
    const schema = { type: "object", properties: { next_speaker: { type: "string", enum: ["user", "model"] } } }
    const answer = decide(conversation([message("user", "FAIL_HTTP[500]END")], [], schema))
    assert.deepStrictEqual(answer, { _tag: "Text", text: '{"next_speaker":"user"}' })
  })
})

describe("shellArgs", () => {
  it("uses each CLI's argument shape", () => {
    const exec = tool("exec_command", { properties: { cmd: { type: "string" }, login: { type: "boolean" } } })
    assert.deepStrictEqual(shellArgs(exec, "ls"), { cmd: "ls" })
    const shell = tool("shell", { properties: { command: { type: "array", items: { type: "string" } } } })
    assert.deepStrictEqual(shellArgs(shell, "ls -l"), { command: ["bash", "-c", "ls -l"] })
    assert.deepStrictEqual(shellArgs(BASH, "ls"), { command: "ls" })
  })

  it("fills the other required properties and leaves optional ones out", () => {
    const opencode = tool("bash", {
      properties: { command: { type: "string" }, description: { type: "string" }, timeout: { type: "number" } },
      required: ["command", "description"]
    })
    assert.deepStrictEqual(shellArgs(opencode, "ls"), { command: "ls", description: "Runs the scripted command" })
    const strict = tool("bash", {
      properties: { command: { type: "string" }, workdir: { type: "string" }, detach: { type: "boolean" } },
      required: ["command", "workdir", "detach"]
    })
    assert.deepStrictEqual(shellArgs(strict, "ls"), { command: "ls", workdir: "scripted", detach: false })
  })
})

describe("valueFromSchema", () => {
  it("builds a value of each kind", () => {
    const schema = {
      type: "object",
      properties: {
        reasoning: { type: "string" },
        model_choice: { type: "string", enum: ["flash", "pro"] },
        score: { type: "integer", minimum: 3 },
        count: { type: "number" },
        ok: { type: "boolean" },
        list: { type: "array", items: { type: "string" } },
        nullable: { type: ["null", "string"] },
        either: { anyOf: [{ const: "a" }, { type: "number" }] },
        nested: { properties: { deep: { type: "STRING" } } }
      }
    }
    assert.deepStrictEqual(valueFromSchema(schema), {
      reasoning: "scripted",
      model_choice: "flash",
      score: 3,
      count: 1,
      ok: false,
      list: [],
      nullable: "scripted",
      either: "a",
      nested: { deep: "scripted" }
    })
  })
})

describe("deltas", () => {
  it("cuts a text into up to three pieces that join back to it, never inside a code point", () => {
    for (const text of ["", "a", "ab", "hello", "hello from the scripted model", "🚲🚲🚲🚲", "a🚲b"]) {
      const pieces = deltas(text)
      assert.strictEqual(pieces.join(""), text)
      assert.strictEqual(pieces.length, Math.min(3, Math.max(1, Array.from(text).length)))
      for (const piece of pieces) assert.notMatch(piece, /\p{Cs}/u, `a lone surrogate in ${JSON.stringify(pieces)}`)
    }
  })
})
