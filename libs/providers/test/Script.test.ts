/** The scripted agent's language: finding the script block, commands, words, the echo. */
import { assert, describe, it } from "@effect/vitest"
import { echoText, extractScript, parseCommand, splitFirst, splitWords } from "../src/scripted/Script.ts"

describe("extractScript", () => {
  it("takes the commands of the first pedelec-script block, without blanks and comments", () => {
    const prompt = [
      "Rules Core prepends.",
      "```js",
      "say not this",
      "```",
      "  ```pedelec-script  ",
      "say hello",
      "",
      "# a comment",
      "   delta  indented",
      "```",
      "```pedelec-script",
      "say second block",
      "```"
    ].join("\r\n")
    assert.deepStrictEqual(extractScript(prompt), ["say hello", "delta  indented"])
  })

  it("is undefined without a block, and runs an unclosed block to the end", () => {
    assert.isUndefined(extractScript("just a question"))
    assert.deepStrictEqual(extractScript("```pedelec-script\nsay a\nsay b"), ["say a", "say b"])
  })
})

describe("commands", () => {
  it("splits the name from the verbatim argument", () => {
    assert.deepStrictEqual(parseCommand("say hi  there "), { name: "say", arg: "hi  there " })
    assert.deepStrictEqual(parseCommand("delta  world"), { name: "delta", arg: " world" })
    assert.deepStrictEqual(parseCommand("hang"), { name: "hang", arg: "" })
  })

  it("splits a tool name from its JSON", () => {
    assert.deepStrictEqual(splitFirst(' add {"a": 1, "b": 2}'), ["add", '{"a": 1, "b": 2}'])
    assert.deepStrictEqual(splitFirst("only"), ["only", ""])
  })

  it("splits words like a shell, without expanding anything", () => {
    assert.deepStrictEqual(splitWords(`tool-call add '{"a": 1}'`), ["tool-call", "add", '{"a": 1}'])
    assert.deepStrictEqual(splitWords(`a "b \\"c\\" d" e\\ f '' $HOME`), ["a", 'b "c" d', "e f", "", "$HOME"])
    assert.deepStrictEqual(splitWords("  spaced   out  "), ["spaced", "out"])
  })
})

describe("echoText", () => {
  it("echoes the first 200 characters, never half an emoji", () => {
    const prompt = `${"🚲".repeat(150)}${"x".repeat(100)}`
    const echoed = echoText(prompt)
    assert.strictEqual(echoed, `echo: ${"🚲".repeat(150)}${"x".repeat(50)}`)
  })
})
