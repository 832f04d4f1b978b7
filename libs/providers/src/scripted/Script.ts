/**
 * Script — the scripted test agent's language, shared by the agent (which runs it) and its tests: finding the
 * ```pedelec-script block in a prompt, splitting a line into command and argument, shell-like argument words, and
 * the agent's constants. Pure functions with no Effect import, so the bundled agent stays small and starts fast.
 * Running commands is agent.ts's job; decoding the agent's output is ScriptedAdapter's.
 */

export const SCRIPTED_AGENT_VERSION = "1.0.0"

/** Ids name state files, so they are restricted to a safe alphabet. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/

/** How many characters of the prompt the agent echoes when it has no script. */
export const ECHO_CHARS = 200

const FENCE_OPEN = "```pedelec-script"
const FENCE_CLOSE = "```"

/** A script for the scripted agent, fenced the way `extractScript` looks for it (what tests and benches send). */
export const script = (...lines: ReadonlyArray<string>) => [FENCE_OPEN, ...lines, FENCE_CLOSE].join("\n")

/**
 * The commands of the first ```pedelec-script block, in order, without blank lines and `#` comments; undefined
 * when the prompt has none. An unclosed block runs to the end of the prompt.
 */
export const extractScript = (prompt: string): ReadonlyArray<string> | undefined => {
  const lines = prompt.split("\n").map((line) => line.replace(/\r$/, ""))
  const start = lines.findIndex((line) => line.trim() === FENCE_OPEN)
  if (start < 0) return undefined
  const close = lines.findIndex((line, i) => i > start && line.trim() === FENCE_CLOSE)
  return lines
    .slice(start + 1, close < 0 ? undefined : close)
    .map((line) => line.trimStart())
    .filter((line) => line !== "" && !line.startsWith("#"))
}

export interface Command {
  readonly name: string
  /** Everything after the first space, verbatim (so `delta  world` keeps its leading space). */
  readonly arg: string
}

export const parseCommand = (line: string): Command => {
  const space = line.indexOf(" ")
  return space < 0 ? { name: line, arg: "" } : { name: line.slice(0, space), arg: line.slice(space + 1) }
}

/** The first word of `arg` and the rest (trimmed at the front), e.g. `call <tool> <json…>`. */
export const splitFirst = (arg: string): readonly [string, string] => {
  const trimmed = arg.trimStart()
  const space = trimmed.search(/\s/)
  return space < 0 ? [trimmed, ""] : [trimmed.slice(0, space), trimmed.slice(space).trimStart()]
}

/**
 * Shell-like words: whitespace separates, '…' is literal, "…" honours \" and \\, a backslash outside quotes
 * escapes the next character. Unbalanced quotes run to the end. Nothing is expanded.
 */
export const splitWords = (text: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  // undefined between words; a quote starts a word even if it stays empty ('' is an empty argument).
  let word: string | undefined
  let quote: "'" | '"' | undefined
  const add = (part: string) => {
    word = (word ?? "") + part
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    const next = text[i + 1]
    if (quote === "'") {
      if (c === "'") quote = undefined
      else add(c)
    } else if (quote === '"') {
      if (c === '"') quote = undefined
      else if (c === "\\" && (next === '"' || next === "\\")) add(text[++i]!)
      else add(c)
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (c === "'" || c === '"') {
      quote = c
      add("")
    } else if (c === "\\" && next !== undefined) {
      add(text[++i]!)
    } else {
      add(c)
    }
  }
  if (word !== undefined) words.push(word)
  return words
}

/** The first `ECHO_CHARS` characters (code points, so no emoji is cut in half). */
export const echoText = (prompt: string): string => `echo: ${Array.from(prompt).slice(0, ECHO_CHARS).join("")}`
