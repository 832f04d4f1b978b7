/**
 * Json — lenient readers for the request bodies the agent CLIs send. A body is untrusted JSON whose shape varies by
 * CLI version, so a reader never throws: a missing or mistyped field reads as empty, and the script then falls back to
 * its default answer. Writing responses is Wire's job.
 */

export type JsonObject = { readonly [key: string]: unknown }

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const asObject = (value: unknown): JsonObject => (isObject(value) ? value : {})

export const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

export const asString = (value: unknown): string => (typeof value === "string" ? value : "")

/**
 * The text of a message content in any of the shapes the protocols use: a string, or an array of parts carrying
 * `text` (Anthropic, Chat Completions, Gemini, Responses `input_text`/`output_text`). Other parts are skipped.
 */
export const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  return asArray(content)
    .map((part) => asString(asObject(part).text))
    .filter((text) => text !== "")
    .join("\n")
}
