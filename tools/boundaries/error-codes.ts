// Error-code ownership: every error code is defined once, in libs/contracts/src/ErrorCode.ts. Other projects may use
// a code (`PedelecError.fromCode("SESSION_BUSY", …)`) but not define one: no catalog key, no Literal/Literals of it,
// no type alias naming it. A second definition is how `THREAD_BUSY` ended up beside `SESSION_BUSY` last time.

import { readFile } from "node:fs/promises"
import path from "node:path"

export const CATALOG_FILE = "libs/contracts/src/ErrorCode.ts"

/**
 * The codes of the catalog, read from its source so this check needs no TypeScript runtime of contracts: the
 * `ERROR_CODES` list's entries (`  "SESSION_BUSY",`) and any spec keys written there (`  SESSION_BUSY: {`).
 */
export const readCatalogCodes = async (root: string): Promise<ReadonlyArray<string>> => {
  const text = await readFile(path.join(root, CATALOG_FILE), "utf8").catch(() => "")
  const listed = [...text.matchAll(/^ {2}"([A-Z][A-Z0-9_]+)",?$/gm)].map((match) => match[1]!)
  const keyed = [...text.matchAll(/^ {2}([A-Z][A-Z0-9_]+): \{/gm)].map((match) => match[1]!)
  return [...new Set([...listed, ...keyed])]
}

/** Type aliases that are unions of string literals, each as its literal text (`type Code = "A" | "B"`). */
const literalUnions = (text: string): Array<string> =>
  [...text.matchAll(/\btype\s+\w+\s*=\s*((?:\|?\s*(["'`])[^"'`\n]*\2\s*)+)/g)].map((match) => match[1]!)

/** Codes the text defines rather than uses. Codes are UPPER_SNAKE_CASE, so they need no regex escaping. */
export const redefinedCodes = (text: string, codes: ReadonlyArray<string>): Array<string> => {
  const unions = literalUnions(text)
  return codes.filter((code) => {
    const quoted = `["'\`]${code}["'\`]`
    const definitions = [
      // Object keys only: after `{`, `,` or at a line start, never the middle of a `cond ? "A" : "B"`.
      new RegExp(`(^\\s*|[{,]\\s*)${code}\\s*:`, "m"),
      new RegExp(`(^\\s*|[{,]\\s*)["']${code}["']\\s*:`, "m"),
      new RegExp(`Literals?\\(\\s*\\[?[^)]*${quoted}`)
    ]
    return definitions.some((pattern) => pattern.test(text)) || unions.some((union) => new RegExp(quoted).test(union))
  })
}
