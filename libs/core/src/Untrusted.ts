/**
 * Untrusted — text from the page that an agent reads as words (its guidance, its tools' descriptions and titles),
 * made safe to show: characters a person reviewing the text cannot see but a model still reads are removed, so what
 * the user was shown is what the agent gets, and bounded in length. Framing it as the page's data is Prompt's; tool
 * results are JSON and keep their bytes (ToolCatalog's agent line).
 */

/**
 * C0 and C1 controls but tab and newline; zero-width characters and marks (U+200B–U+200F); the bidirectional
 * embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069), which reorder what is displayed; the BOM /
 * zero-width no-break space (U+FEFF); the tag characters (U+E0000–U+E007F), which spell ASCII nobody sees.
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this removes.
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu

/** The text without the characters INVISIBLE lists, cut to `maxLength` UTF-16 units (never inside a pair). */
export const visibleText = (text: string, maxLength = Number.POSITIVE_INFINITY): string => {
  const visible = text.replace(INVISIBLE, "")
  if (visible.length <= maxLength) return visible
  const end = /[\uD800-\uDBFF]/.test(visible[maxLength - 1] ?? "") ? maxLength - 1 : maxLength
  return visible.slice(0, end)
}
